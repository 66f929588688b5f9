#include "service/http.h"

namespace tilesmith::service {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool Decode(std::string_view text, std::string* out, bool plus_is_space = true) {
  out->clear();
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+' && plus_is_space) {
      *out += ' ';
    } else if (text[i] == '%') {
      if (i + 2 >= text.size()) return false;
      int high = HexValue(text[i + 1]), low = HexValue(text[i + 2]);
      if (high < 0 || low < 0) return false;
      *out += static_cast<char>(high * 16 + low);
      i += 2;
    } else {
      *out += text[i];
    }
  }
  return true;
}

}  // namespace

bool SplitTarget(std::string_view target, std::string* path,
                 std::map<std::string, std::string>* query) {
  size_t mark = target.find('?');
  if (!Decode(target.substr(0, mark), path, /*plus_is_space=*/false)) return false;
  query->clear();
  if (mark == std::string_view::npos) return true;
  std::string_view rest = target.substr(mark + 1);
  while (!rest.empty()) {
    size_t amp = rest.find('&');
    std::string_view pair = rest.substr(0, amp);
    size_t equals = pair.find('=');
    std::string key, value;
    if (!Decode(pair.substr(0, equals), &key)) return false;
    if (equals != std::string_view::npos && !Decode(pair.substr(equals + 1), &value)) {
      return false;
    }
    if (!key.empty()) (*query)[key] = value;
    if (amp == std::string_view::npos) break;
    rest = rest.substr(amp + 1);
  }
  return true;
}

}  // namespace tilesmith::service
