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

Status OutputFile::replace(std::string_view text) {
  if (!file_) return internal_error(option_ + " " + path_ + ": already written and closed");
  std::FILE* f = file_.get();
  const std::string where = option_ + " " + path_;
  errno = 0;
  if (std::fseek(f, 0, SEEK_SET) != 0) {
    if (errno == ESPIPE) return Status::Ok();  // not seekable: only the final write
    return file_error(where + ": cannot rewind", errno ? errno : EIO);
  }
  if (std::fwrite(text.data(), 1, text.size(), f) != text.size() || std::fflush(f) != 0) {
    return file_error(where + ": cannot write", errno ? errno : EIO);
  }
  if (::ftruncate(::fileno(f), static_cast<off_t>(text.size())) != 0 && errno != EINVAL) {
    return file_error(where + ": cannot truncate", errno ? errno : EIO);
  }
  replaced_ = true;
  return Status::Ok();
}

Status OutputFile::write_and_close(std::string_view text) {
  if (!file_) return internal_error(option_ + " " + path_ + ": already written and closed");
  if (replaced_) {
    // Rewritten whole: replace() rewinds and truncates (a longer text than the partial one).
    if (Status s = replace(text); !s.ok()) {
      file_.reset();
      return s;
    }
    std::FILE* f = file_.release();
    errno = 0;
    if (std::fclose(f) != 0) {
      return file_error(option_ + " " + path_ + ": cannot close", errno ? errno : EIO);
    }
    return Status::Ok();
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
