// What the `mlaspec dcp` parent reports about its rank processes.
#include "tools/rank_exit.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <csignal>

#include "common/test_helpers.h"

namespace mlaspec::tools {
namespace {

TEST(RankExit, SaysHowARankEndedInWordsAndKeepsItsCode) {
  const int ok = W_EXITCODE(0, 0);
  EXPECT_EQ(rank_failure_code(ok), StatusCode::kOk);
  EXPECT_EQ(describe_rank_exit(ok), "exited normally");

  // A rank that failed with an error exits with its code: the parent fails with the same code,
  // never a raw wait status or "internal".
  const int no_gpu = W_EXITCODE(rank_exit_code(StatusCode::kUnsupported), 0);
  EXPECT_EQ(rank_failure_code(no_gpu), StatusCode::kUnsupported);
  EXPECT_EQ(describe_rank_exit(no_gpu), "failed with unsupported");
  const int bad_arg = W_EXITCODE(rank_exit_code(StatusCode::kInvalidArgument), 0);
  EXPECT_EQ(rank_failure_code(bad_arg), StatusCode::kInvalidArgument);

  // Anything else is a crash or not ours: internal, described as what it was.
  const int other = W_EXITCODE(3, 0);
  EXPECT_EQ(rank_failure_code(other), StatusCode::kInternal);
  EXPECT_EQ(describe_rank_exit(other), "exited with code 3");
  const int killed = W_EXITCODE(0, SIGKILL);
  EXPECT_EQ(rank_failure_code(killed), StatusCode::kInternal);
  EXPECT_CONTAINS(describe_rank_exit(killed), "was killed by signal 9");
}

}  // namespace
}  // namespace mlaspec::tools
