// Status: the one error type of mlaspec.
//
// A Status is either OK or carries a code and a message that names the bad value and the limit it
// broke ("q_len 9 exceeds backend cuda_fold's max 8"). Functions at API edges return Status (or
// Result<T>); the command line and tests turn a failed Status into text. `Error` is the exception
// form of the same value, thrown only where a return value cannot carry it (constructors).
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

namespace mlaspec {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,    // caller passed a bad value: shape, dtype, range
  kUnsupported,        // valid input this backend cannot serve (capability guard)
  kOutOfRange,         // an index past its bound (page id, position)
  kResourceExhausted,  // out of pages / memory
  kNotFound,           // named thing does not exist (backend, file)
  kDataLoss,           // malformed file or profile
  kInternal,           // a bug or a failed CUDA call
};

const char* status_code_name(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "invalid_argument: q_len 0 is below the minimum 1"
  std::string to_string() const;

  // Prefix context to the message ("layer 3: ..."); no-op on OK.
  Status with_context(const std::string& context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

Status invalid_argument(std::string message);
Status unsupported(std::string message);
Status out_of_range(std::string message);
Status resource_exhausted(std::string message);
Status not_found(std::string message);
Status data_loss(std::string message);
Status internal_error(std::string message);

// Exception carrying a Status, for constructors and the CLI's top level.
class Error : public std::runtime_error {
 public:
  explicit Error(Status status)
      : std::runtime_error(status.to_string()), status_(std::move(status)) {}
  const Status& status() const { return status_; }

 private:
  Status status_;
};

// Throws Error if `status` is not OK.
inline void throw_if_error(const Status& status) {
  if (!status.ok()) throw Error(status);
}

// A value or the Status explaining why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  // An OK status without a value is a bug in the caller; it becomes an internal error.
  Result(Status status)  // NOLINT(google-explicit-constructor)
      : status_(status.ok() ? internal_error("Result constructed from an OK status without a value")
                            : std::move(status)) {}
  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  T& value() & {
    throw_if_error(status_);
    return *value_;
  }
  const T& value() const& {
    throw_if_error(status_);
    return *value_;
  }
  T&& value() && {
    throw_if_error(status_);
    return std::move(*value_);
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace mlaspec

#define MLASPEC_CONCAT_INNER(a, b) a##b
#define MLASPEC_CONCAT(a, b) MLASPEC_CONCAT_INNER(a, b)

// Returns from the enclosing function if `expr` (a Status) is not OK.
#define MLASPEC_RETURN_IF_ERROR(expr)                                                \
  do {                                                                               \
    ::mlaspec::Status MLASPEC_CONCAT(_st_, __LINE__) = (expr);                       \
    if (!MLASPEC_CONCAT(_st_, __LINE__).ok()) return MLASPEC_CONCAT(_st_, __LINE__); \
  } while (0)
