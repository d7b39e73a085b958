#include "tools/output_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace mlaspec::tools {

Status file_error(const std::string& context, int err) {
  const std::string m = context + ": " + std::strerror(err);
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      return not_found(m);
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
      return resource_exhausted(m);
    default:
      return invalid_argument(m);
  }
}

Result<OutputFile> OutputFile::open(const std::string& path, const std::string& option) {
  OutputFile f;
  f.path_ = path;
  f.option_ = option;
  errno = 0;
  f.file_.reset(std::fopen(path.c_str(), "wb"));
  if (!f.file_)
    return file_error(option + " " + path + ": cannot open for writing", errno ? errno : EIO);
  return f;
}

// Empties the file and puts its position back at 0 (before replace() or the final write
// after one); a file that cannot be rewound (a pipe) answers false and is left as it is.
Result<bool> OutputFile::rewind() {
  std::FILE* f = file_.get();
  errno = 0;
  if (std::fseek(f, 0, SEEK_SET) != 0) {
    if (errno == ESPIPE) return false;
    return file_error(option_ + " " + path_ + ": cannot rewind", errno ? errno : EIO);
  }
  // Devices (/dev/null, /dev/full) cannot be truncated and need not be.
  if (::ftruncate(::fileno(f), 0) != 0 && errno != EINVAL) {
    return file_error(option_ + " " + path_ + ": cannot truncate", errno ? errno : EIO);
  }
  return true;
}

Status OutputFile::replace(std::string_view text) {
  if (!file_) return internal_error(option_ + " " + path_ + ": already written and closed");
  Result<bool> rewound = rewind();
  if (!rewound.ok() || !rewound.value()) return rewound.status();
  std::FILE* f = file_.get();
  errno = 0;
  if (std::fwrite(text.data(), 1, text.size(), f) != text.size() || std::fflush(f) != 0) {
    return file_error(option_ + " " + path_ + ": cannot write", errno ? errno : EIO);
  }
  replaced_ = true;
  return Status::Ok();
}

Status OutputFile::write_and_close(std::string_view text) {
  if (!file_) return internal_error(option_ + " " + path_ + ": already written and closed");
  if (replaced_) {
    Result<bool> rewound = rewind();
    if (!rewound.ok()) {
      file_.reset();
      return rewound.status();
    }
  }
  std::FILE* f = file_.release();
  errno = 0;
  const bool wrote = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const int write_err = errno;
  // fflush reports what the buffered writes could not do (ENOSPC on /dev/full), fclose the rest.
  const bool flushed = wrote && std::fflush(f) == 0;
  const int flush_err = errno;
  const bool closed = std::fclose(f) == 0;
  const int close_err = errno;
  const std::string where = option_ + " " + path_;
  if (!wrote) return file_error(where + ": cannot write", write_err ? write_err : EIO);
  if (!flushed) return file_error(where + ": cannot write", flush_err ? flush_err : EIO);
  if (!closed) return file_error(where + ": cannot close", close_err ? close_err : EIO);
  return Status::Ok();
}

}  // namespace mlaspec::tools
