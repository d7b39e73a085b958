#include "mlaspec/core/log.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

namespace mlaspec {
namespace {

LogLevel level_from_env() {
  const char* env = std::getenv("MLASPEC_LOG");
  if (env == nullptr) return LogLevel::kInfo;
  const std::string v(env);
  if (v == "debug") return LogLevel::kDebug;
  if (v == "warn") return LogLevel::kWarn;
  if (v == "error") return LogLevel::kError;
  if (v == "off") return LogLevel::kOff;
  return LogLevel::kInfo;
}

std::atomic<int>& level_storage() {
  static std::atomic<int> level{static_cast<int>(level_from_env())};
  return level;
}

const char* level_name(LogLevel l) {
  switch (l) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kError:
      return "error";
    case LogLevel::kOff:
      return "off";
  }
  return "?";
}

}  // namespace

LogLevel log_level() {
  return static_cast<LogLevel>(level_storage().load());
}
void set_log_level(LogLevel level) {
  level_storage().store(static_cast<int>(level));
}

void log(LogLevel level, std::string_view message) {
  if (level < log_level() || level == LogLevel::kOff) return;
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  std::fprintf(stderr, "[mlaspec %s] %.*s\n", level_name(level), static_cast<int>(message.size()),
               message.data());
}

}  // namespace mlaspec
