// A small command-line parser for the tilesmith subcommands: flags with values, switches,
// positionals, generated --help text, and errors that say what was wrong.
#pragma once

#include <map>
#include <span>
#include <string>
#include <vector>

#include "support/status.h"

namespace tilesmith::cli {

/// The parsed arguments of one subcommand.
class Args {
 public:
  bool Has(const std::string& flag) const { return values_.contains(flag); }
  /// The last value given for `flag`, or `fallback`.
  std::string Get(const std::string& flag, const std::string& fallback = "") const;
  /// Every value given for a repeatable flag, in order.
  std::vector<std::string> GetAll(const std::string& flag) const;
  const std::vector<std::string>& positionals() const { return positionals_; }
  /// The value of `flag` as a whole number >= 0, or `fallback` when it is not given; any
  /// other text is an error naming the flag.
  Expected<int64_t> GetWholeNumber(const std::string& flag, int64_t fallback) const;
  /// The value of `flag` as an integer in [low, high], or `fallback` when it is not given.
  Expected<int64_t> GetInteger(const std::string& flag, int64_t fallback, int64_t low,
                               int64_t high) const;
  /// The value of `flag` as a number > 0, or `fallback` when it is not given.
  Expected<double> GetPositive(const std::string& flag, double fallback) const;

 private:
  friend class Command;
  std::map<std::string, std::vector<std::string>> values_;
  std::vector<std::string> positionals_;
};

/// Describes one subcommand and parses its arguments.
class Command {
 public:
  Command(std::string name, std::string summary, std::string usage)
      : name_(std::move(name)), summary_(std::move(summary)), usage_(std::move(usage)) {}

  /// `--name VALUE`; `repeatable` allows it several times.
  Command& Flag(std::string name, std::string value_name, std::string help,
                bool repeatable = false);
  /// `--name` without a value.
  Command& Switch(std::string name, std::string help);
  /// Free text appended to --help (examples, notes).
  Command& Epilog(std::string text);

  /// Parses `args` (without the program and subcommand names). `--help` is reported as a
  /// switch named "help"; the caller prints `Help()` for it.
  Expected<Args> Parse(std::span<char* const> args) const;
  std::string Help() const;
  const std::string& name() const { return name_; }
  const std::string& summary() const { return summary_; }

 private:
  struct Option {
    std::string name;
    std::string value_name;  // empty for switches
    std::string help;
    bool repeatable = false;
  };
  std::string name_;
  std::string summary_;
  std::string usage_;
  std::string epilog_;
  std::vector<Option> options_;
};

/// The non-empty items of a comma-separated list (`host,cuda:0`).
std::vector<std::string> SplitList(const std::string& text);

}  // namespace tilesmith::cli
