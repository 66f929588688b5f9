// Levelled logging to stderr. Results go to stdout; everything a human reads while a
// command runs goes here.
#pragma once

#include <sstream>
#include <string_view>

namespace tilesmith {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

/// Messages below this level are dropped. Default kInfo; `TILESMITH_LOG_LEVEL` (debug,
/// info, warning, error) overrides it at start-up.
void SetLogLevel(LogLevel level);
LogLevel GetLogLevel();

/// Parses "debug", "info", "warning" or "error"; returns false for anything else.
bool ParseLogLevel(std::string_view text, LogLevel* level);

/// One log line, written to stderr when destroyed: `TS_LOG(kInfo) << "parsed " << n;`.
class LogMessage {
 public:
  LogMessage(LogLevel level, const char* file, int line);
  ~LogMessage();
  LogMessage(const LogMessage&) = delete;
  LogMessage& operator=(const LogMessage&) = delete;
  std::ostream& stream() { return stream_; }

 private:
  std::ostringstream stream_;
};

}  // namespace tilesmith

#define TS_LOG(level)                                              \
  if (::tilesmith::LogLevel::level < ::tilesmith::GetLogLevel()) { \
  } else                                                           \
    ::tilesmith::LogMessage(::tilesmith::LogLevel::level, __FILE__, __LINE__).stream()
