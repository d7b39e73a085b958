// A file a command writes its results to. Opened before the work starts, so that a path that
// cannot be written is refused at once rather than after a long run, and written with every step
// checked, so that a full disk or a failed close is an error with the OS's reason instead of a
// silently lost file.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "mlaspec/core/status.h"

namespace mlaspec::tools {

class OutputFile {
 public:
  // Opens (creates or truncates) `path` for writing. `option` names it in errors ("--json").
  static Result<OutputFile> open(const std::string& path, const std::string& option);

  // Writes `text`, flushes and closes the file; errors name the option, the path and the OS's
  // reason ("--json /dev/full: cannot write: No space left on device"). Call once.
  Status write_and_close(std::string_view text);
  // Replaces the file's contents with `text` and keeps it open (results so far, rewritten as a
  // long run goes on, so that a run cut short leaves what it measured). A file that cannot be
  // rewound (a pipe, /dev/stdout) is left alone until write_and_close. Errors as above.
  Status replace(std::string_view text);

  const std::string& path() const { return path_; }

 private:
  struct Closer {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  Result<bool> rewind();
  std::unique_ptr<std::FILE, Closer> file_;
  bool replaced_ = false;  // replace wrote to the file: write_and_close rewrites it whole
  std::string path_, option_;
};

// The status for an OS error `err` (an errno value): "<context>: <strerror(err)>", as not_found for
// a missing file or directory, resource_exhausted for a full disk or quota, invalid_argument
// otherwise (a path the user gave that cannot be used).
Status file_error(const std::string& context, int err);

}  // namespace mlaspec::tools
