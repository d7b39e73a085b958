// Minimal leveled logging to stderr: "[mlaspec warn] message".
#pragma once

#include <string_view>

namespace mlaspec {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3, kOff = 4 };

// Level from MLASPEC_LOG (debug|info|warn|error|off), default info; set_log_level overrides.
LogLevel log_level();
void set_log_level(LogLevel level);
void log(LogLevel level, std::string_view message);
inline void log_info(std::string_view m) {
  log(LogLevel::kInfo, m);
}
inline void log_warn(std::string_view m) {
  log(LogLevel::kWarn, m);
}
inline void log_debug(std::string_view m) {
  log(LogLevel::kDebug, m);
}

}  // namespace mlaspec
