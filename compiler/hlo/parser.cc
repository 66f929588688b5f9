// The public entry points of the HLO module parser; the parser itself is ModuleParser
// (module_parser.h).
#include "compiler/hlo/parser.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler/hlo/module_parser.h"

namespace tilesmith::hlo {

Expected<std::unique_ptr<HloModule>> ParseHloModule(std::string_view text,
                                                    std::string_view file_name) {
  return ParseHloModule(text, file_name, ParseLimits{});
}

Expected<std::unique_ptr<HloModule>> ParseHloModule(std::string_view text,
                                                    std::string_view file_name,
                                                    const ParseLimits& limits) {
  ModuleParser parser(text, file_name, limits);
  return parser.Parse();
}

Expected<std::unique_ptr<HloModule>> ParseHloModuleFile(const std::string& path) {
  return ParseHloModuleFile(path, ParseLimits{});
}

Expected<std::unique_ptr<HloModule>> ParseHloModuleFile(const std::string& path,
                                                        const ParseLimits& limits) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return MakeError(ErrorCode::kIo, "cannot open '" + path + "'");
  std::string contents;
  std::error_code error;
  uintmax_t size = std::filesystem::file_size(path, error);
  if (!error && std::filesystem::is_regular_file(path, error) && !error) {
    // One read into a buffer of the right size: no copy of the text.
    contents.resize(static_cast<size_t>(size));
    file.read(contents.data(), static_cast<std::streamsize>(size));
    contents.resize(static_cast<size_t>(file.gcount()));
  } else {
    std::ostringstream stream;
    stream << file.rdbuf();
    contents = std::move(stream).str();
  }
  if (file.bad()) return MakeError(ErrorCode::kIo, "cannot read '" + path + "'");
  return ParseHloModule(contents, path, limits);
}

}  // namespace tilesmith::hlo
