// OutputFile: results written once at the end, or replaced as a long run goes on (bench-model's
// --json after every group), with the final write replacing whatever was there.
#include "tools/output_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

namespace mlaspec::tools {
namespace {

std::string read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "/output_file_" + std::to_string(::getpid()) + "_" + name;
}

TEST(OutputFile, ReplaceLeavesOnlyTheLatestTextAndTheFinalWriteReplacesIt) {
  const std::string path = temp_path("replace");
  Result<OutputFile> f = OutputFile::open(path, "--json");
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  ASSERT_TRUE(f->replace("[1, 2, 3, 4, 5, 6]\n").ok());
  EXPECT_EQ(read_all(path), "[1, 2, 3, 4, 5, 6]\n");  // readable while the run goes on
  ASSERT_TRUE(f->replace("[1]\n").ok());              // shorter: nothing of the longer text stays
  EXPECT_EQ(read_all(path), "[1]\n");
  ASSERT_TRUE(f->write_and_close("[7, 8]\n").ok());
  EXPECT_EQ(read_all(path), "[7, 8]\n");
  EXPECT_EQ(f->write_and_close("x").code(), StatusCode::kInternal);  // once only
  EXPECT_EQ(f->replace("x").code(), StatusCode::kInternal);
  ::unlink(path.c_str());
}

TEST(OutputFile, WriteOnceWithoutReplace) {
  const std::string path = temp_path("once");
  Result<OutputFile> f = OutputFile::open(path, "--out");
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE(f->write_and_close("done\n").ok());
  EXPECT_EQ(read_all(path), "done\n");
  ::unlink(path.c_str());
}

TEST(OutputFile, AFullDeviceIsAnErrorNamingTheOptionAndPath) {
  if (::access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no /dev/full";
  Result<OutputFile> f = OutputFile::open("/dev/full", "--json");
  ASSERT_TRUE(f.ok());
  const Status s = f->replace("[1]\n");
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(s.message(), "--json /dev/full: cannot write: No space left on device");
}

TEST(OutputFile, APipeIsWrittenOnceAtTheEnd) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const std::string path = "/dev/fd/" + std::to_string(fds[1]);
  Result<OutputFile> f = OutputFile::open(path, "--json");
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  EXPECT_TRUE(f->replace("partial").ok());  // cannot rewind a pipe: nothing written yet
  ASSERT_TRUE(f->write_and_close("final").ok());
  ::close(fds[1]);
  char buf[64] = {};
  const ssize_t n = ::read(fds[0], buf, sizeof buf);
  ::close(fds[0]);
  EXPECT_EQ(std::string(buf, n > 0 ? static_cast<size_t>(n) : 0), "final");
}

}  // namespace
}  // namespace mlaspec::tools
