// Running the real `tilesmith` binary from a test, as a user would: in a directory of the
// test's own, stdout and stderr kept apart.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace tilesmith::cli_testing {

struct CommandRun {
  int exit_code;
  std::string out;
  std::string err;
};

/// Runs `tilesmith ARGUMENTS` in `dir` (so nothing a command writes by default lands beside
/// the tests); `environment` is prefixed to the command (`VAR='…' `).
inline CommandRun RunTilesmithIn(const std::filesystem::path& dir, const std::string& arguments,
                                 const std::string& environment = "") {
  std::string err_path = (dir / "stderr.txt").string();
  std::string command = "cd '" + dir.string() + "' && " + environment + TILESMITH_CLI + " " +
                        arguments + " 2>'" + err_path + "'";
  FILE* pipe = popen(command.c_str(), "r");
  std::string out;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof(buffer), pipe)) out.append(buffer, n);
  int status = pclose(pipe);
  std::ifstream err_file(err_path);
  std::string err((std::istreambuf_iterator<char>(err_file)), std::istreambuf_iterator<char>());
  return {WEXITSTATUS(status), out, err};
}

}  // namespace tilesmith::cli_testing
