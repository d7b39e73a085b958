#include "tools/rank_exit.h"

#include <sys/wait.h>

#include <cstring>

namespace mlaspec::tools {
namespace {

// The StatusCode a rank's exit code carries, or kOk when it carries none.
StatusCode carried_code(int exit_code) {
  const int c = exit_code - kRankExitBase;
  if (c > 0 && c <= static_cast<int>(StatusCode::kInternal)) return static_cast<StatusCode>(c);
  return StatusCode::kOk;
}

}  // namespace

std::string describe_rank_exit(int wait_status) {
  if (WIFEXITED(wait_status)) {
    const int exit_code = WEXITSTATUS(wait_status);
    if (exit_code == 0) return "exited normally";
    const StatusCode c = carried_code(exit_code);
    if (c != StatusCode::kOk) return std::string("failed with ") + status_code_name(c);
    return "exited with code " + std::to_string(exit_code);
  }
  if (WIFSIGNALED(wait_status)) {
    const int sig = WTERMSIG(wait_status);
    const char* name = strsignal(sig);
    return "was killed by signal " + std::to_string(sig) +
           (name ? std::string(" (") + name + ")" : std::string());
  }
  return "ended with wait status " + std::to_string(wait_status);
}

StatusCode rank_failure_code(int wait_status) {
  if (WIFEXITED(wait_status)) {
    const int exit_code = WEXITSTATUS(wait_status);
    if (exit_code == 0) return StatusCode::kOk;
    const StatusCode c = carried_code(exit_code);
    return c != StatusCode::kOk ? c : StatusCode::kInternal;
  }
  return StatusCode::kInternal;
}

}  // namespace mlaspec::tools
