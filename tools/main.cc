#include <cstdio>
int main() { std::puts("tilesmith"); return 0; }
