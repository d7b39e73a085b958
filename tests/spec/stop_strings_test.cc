// StopStringFilter: text released as it streams, never any part of a stop string, cut on UTF-8
// character boundaries.
#include <gtest/gtest.h>

#include <string>

#include "mlaspec/spec/stop_strings.h"

namespace mlaspec::spec {
namespace {

TEST(StopStringFilter, HoldsBackWhatCouldBecomeAStopString) {
  StopStringFilter f({"####"});
  EXPECT_FALSE(f.add("The answer ##"));
  // "##" could still become "####": held back with one more byte of the stop's length.
  EXPECT_EQ(f.take(), "The answer");
  // The filter holds back by length (3 bytes here), not by matching prefixes.
  EXPECT_FALSE(f.add("x"));
  EXPECT_EQ(f.take(), " ");
  EXPECT_FALSE(f.add(" ##"));
  EXPECT_EQ(f.take(), "##x");
  EXPECT_TRUE(f.add("## 356"));  // the stop string spans the pieces
  EXPECT_EQ(f.take(), " ");
  EXPECT_EQ(f.text(), "The answer ##x ");
  EXPECT_TRUE(f.stopped());
  EXPECT_TRUE(f.add("more"));  // nothing after a stop
  EXPECT_EQ(f.take(), "");
}

TEST(StopStringFilter, FinishReleasesTheRestAndNoStopsReleasesAtOnce) {
  StopStringFilter f({"abc"});
  EXPECT_FALSE(f.add("xxab"));
  EXPECT_EQ(f.take(), "xx");
  f.finish();
  EXPECT_EQ(f.take(), "ab");
  StopStringFilter none({});
  EXPECT_FALSE(none.add("anything"));
  EXPECT_EQ(none.take(), "anything");
}

TEST(StopStringFilter, ReleasesWholeUtf8Characters) {
  StopStringFilter f({"zz"});
  // "é" is two bytes: the held-back byte must not split it.
  EXPECT_FALSE(f.add("caf\xc3\xa9"));
  const std::string out = f.take();
  EXPECT_EQ(out, "caf");
  f.finish();
  EXPECT_EQ(f.take(), "\xc3\xa9");
}

TEST(StopStringFilter, EarliestStopWins) {
  StopStringFilter f({"world", "lo w"});
  EXPECT_TRUE(f.add("hello world"));
  EXPECT_EQ(f.text(), "hel");
  EXPECT_EQ(f.take(), "hel");
}

}  // namespace
}  // namespace mlaspec::spec
