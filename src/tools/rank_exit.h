// How a `mlaspec dcp` rank process reports its end to the parent: a failed rank exits with
// kRankExitBase plus its error's StatusCode (its message already on stderr), so the parent can
// say which rank ended how, in words, and fail with the rank's own code instead of a raw wait
// status.
#pragma once

#include <string>

#include "mlaspec/core/status.h"

namespace mlaspec::tools {

inline constexpr int kRankExitBase = 64;

// The exit code of a rank that failed with `code`.
inline int rank_exit_code(StatusCode code) {
  return kRankExitBase + static_cast<int>(code);
}

// A waitpid status in words: "exited normally", "failed with unsupported", "exited with code 3",
// "was killed by signal 9 (Killed)".
std::string describe_rank_exit(int wait_status);

// kOk for a rank that exited 0; the rank's own code when it exited with rank_exit_code(); else
// kInternal (a crash, or an exit that is not ours).
StatusCode rank_failure_code(int wait_status);

}  // namespace mlaspec::tools
