#include "mlaspec/core/status.h"

namespace mlaspec {

const char* status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "ok";
    case StatusCode::kInvalidArgument:
      return "invalid_argument";
    case StatusCode::kUnsupported:
      return "unsupported";
    case StatusCode::kOutOfRange:
      return "out_of_range";
    case StatusCode::kResourceExhausted:
      return "resource_exhausted";
    case StatusCode::kNotFound:
      return "not_found";
    case StatusCode::kDataLoss:
      return "data_loss";
    case StatusCode::kInternal:
      return "internal";
  }
  return "unknown";
}

std::string Status::to_string() const {
  if (ok()) return "ok";
  return std::string(status_code_name(code_)) + ": " + message_;
}

Status Status::with_context(const std::string& context) const {
  if (ok()) return *this;
  return Status(code_, context + ": " + message_);
}

Status invalid_argument(std::string m) {
  return Status(StatusCode::kInvalidArgument, std::move(m));
}
Status unsupported(std::string m) {
  return Status(StatusCode::kUnsupported, std::move(m));
}
Status out_of_range(std::string m) {
  return Status(StatusCode::kOutOfRange, std::move(m));
}
Status resource_exhausted(std::string m) {
  return Status(StatusCode::kResourceExhausted, std::move(m));
}
Status not_found(std::string m) {
  return Status(StatusCode::kNotFound, std::move(m));
}
Status data_loss(std::string m) {
  return Status(StatusCode::kDataLoss, std::move(m));
}
Status internal_error(std::string m) {
  return Status(StatusCode::kInternal, std::move(m));
}

}  // namespace mlaspec
