#include "tools/cli.h"

#include <algorithm>
#include <exception>

namespace tilesmith::cli {

std::string Args::Get(const std::string& flag, const std::string& fallback) const {
  auto it = values_.find(flag);
  return it == values_.end() || it->second.empty() ? fallback : it->second.back();
}

Expected<int64_t> Args::GetWholeNumber(const std::string& flag, int64_t fallback) const {
  if (!Has(flag)) return fallback;
  const std::string text = Get(flag);
  try {
    size_t used = 0;
    long long value = std::stoll(text, &used);
    if (used == text.size() && value >= 0) return static_cast<int64_t>(value);
  } catch (const std::exception&) {
  }
  return InvalidArgument("--" + flag + " expects a whole number >= 0, not '" + text + "'");
}

Expected<int64_t> Args::GetInteger(const std::string& flag, int64_t fallback, int64_t low,
                                   int64_t high) const {
  if (!Has(flag)) return fallback;
  const std::string text = Get(flag);
  try {
    size_t used = 0;
    int64_t value = std::stoll(text, &used);
    if (used == text.size() && value >= low && value <= high) return value;
  } catch (const std::exception&) {
  }
  return InvalidArgument("--" + flag + " expects an integer in " + std::to_string(low) + ".." +
                         std::to_string(high) + ", not '" + text + "'");
}

Expected<double> Args::GetPositive(const std::string& flag, double fallback) const {
  if (!Has(flag)) return fallback;
  const std::string text = Get(flag);
  try {
    size_t used = 0;
    double value = std::stod(text, &used);
    if (used == text.size() && value > 0) return value;
  } catch (const std::exception&) {
  }
  return InvalidArgument("--" + flag + " expects a positive number, not '" + text + "'");
}

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = std::min(text.find(',', start), text.size());
    if (comma > start) items.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return items;
}

std::vector<std::string> Args::GetAll(const std::string& flag) const {
  auto it = values_.find(flag);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

Command& Command::Flag(std::string name, std::string value_name, std::string help,
                       bool repeatable) {
  options_.push_back({std::move(name), std::move(value_name), std::move(help), repeatable});
  return *this;
}

Command& Command::Switch(std::string name, std::string help) {
  options_.push_back({std::move(name), "", std::move(help), false});
  return *this;
}

Command& Command::Epilog(std::string text) {
  epilog_ = std::move(text);
  return *this;
}

Expected<Args> Command::Parse(std::span<char* const> args) const {
  Args parsed;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i];
    if (arg == "--help" || arg == "-h") {
      parsed.values_["help"];
      continue;
    }
    if (arg == "--") {
      for (++i; i < args.size(); ++i) parsed.positionals_.emplace_back(args[i]);
      break;
    }
    if (!arg.starts_with("--") || arg.size() == 2) {
      parsed.positionals_.push_back(arg);
      continue;
    }
    std::string name = arg.substr(2);
    std::string value;
    bool has_inline_value = false;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_inline_value = true;
    }
    auto option = std::find_if(options_.begin(), options_.end(),
                               [&](const Option& o) { return o.name == name; });
    if (option == options_.end()) {
      return InvalidArgument("unknown option '--" + name + "' for 'tilesmith " + name_ +
                             "' (see 'tilesmith " + name_ + " --help')");
    }
    if (option->value_name.empty()) {
      if (has_inline_value) return InvalidArgument("'--" + name + "' takes no value");
      parsed.values_[name];
      continue;
    }
    if (!has_inline_value) {
      if (i + 1 >= args.size()) {
        return InvalidArgument("'--" + name + "' needs a value (" + option->value_name + ")");
      }
      value = args[++i];
    }
    std::vector<std::string>& values = parsed.values_[name];
    if (!values.empty() && !option->repeatable) {
      return InvalidArgument("'--" + name + "' is given twice");
    }
    values.push_back(value);
  }
  return parsed;
}

std::string Command::Help() const {
  std::string text = "tilesmith " + name_ + ": " + summary_ + "\n\nUsage: tilesmith " + name_ +
                     " " + usage_ + "\n";
  if (!options_.empty()) {
    text += "\nOptions:\n";
    for (const Option& option : options_) {
      std::string left = "  --" + option.name;
      if (!option.value_name.empty()) left += " " + option.value_name;
      if (left.size() < 26)
        left.append(26 - left.size(), ' ');
      else
        left += "\n" + std::string(26, ' ');
      text += left + option.help + (option.repeatable ? " (repeatable)" : "") + "\n";
    }
  }
  text += "  --help                  show this help\n";
  if (!epilog_.empty()) text += "\n" + epilog_ + "\n";
  return text;
}

}  // namespace tilesmith::cli
