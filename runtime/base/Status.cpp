//===- Status.cpp - the runtime's one error type --------------------------===//

#include "runtime/base/Status.h"

#include <cerrno>
#include <cstring>

namespace infer {

std::string_view statusCodeName(StatusCode code) {
  switch (code) {
  case StatusCode::kOk:
    return "OK";
  case StatusCode::kInvalidArgument:
    return "InvalidArgument";
  case StatusCode::kNotFound:
    return "NotFound";
  case StatusCode::kDataLoss:
    return "DataLoss";
  case StatusCode::kFailedPrecondition:
    return "FailedPrecondition";
  case StatusCode::kUnimplemented:
    return "Unimplemented";
  case StatusCode::kInternal:
    return "Internal";
  case StatusCode::kResourceExhausted:
    return "ResourceExhausted";
  case StatusCode::kPermissionDenied:
    return "PermissionDenied";
  }
  return "Unknown";
}

std::string Status::toString() const {
  if (ok())
    return "OK";
  std::string text(statusCodeName(code_));
  text += ": ";
  text += message_;
  return text;
}

Status Status::withPrefix(std::string_view prefix) const {
  if (ok())
    return *this;
  std::string message(prefix);
  message += ": ";
  message += message_;
  return Status(code_, std::move(message));
}

Status invalidArgumentError(std::string message) {
  return Status(StatusCode::kInvalidArgument, std::move(message));
}
Status notFoundError(std::string message) {
  return Status(StatusCode::kNotFound, std::move(message));
}
Status dataLossError(std::string message) {
  return Status(StatusCode::kDataLoss, std::move(message));
}
Status failedPreconditionError(std::string message) {
  return Status(StatusCode::kFailedPrecondition, std::move(message));
}
Status unimplementedError(std::string message) {
  return Status(StatusCode::kUnimplemented, std::move(message));
}
Status internalError(std::string message) {
  return Status(StatusCode::kInternal, std::move(message));
}
Status resourceExhaustedError(std::string message) {
  return Status(StatusCode::kResourceExhausted, std::move(message));
}

Status errnoError(int error, std::string_view what) {
  StatusCode code = StatusCode::kInternal;
  switch (error) {
  case ENOENT:
  case ENOTDIR:
    code = StatusCode::kNotFound;
    break;
  case EACCES:
  case EPERM:
    code = StatusCode::kPermissionDenied;
    break;
  case ENOMEM:
  case EMFILE:
  case ENFILE:
  case ENOSPC:
    code = StatusCode::kResourceExhausted;
    break;
  case EISDIR:
  case EINVAL:
    code = StatusCode::kInvalidArgument;
    break;
  default:
    break;
  }
  std::string message(what);
  message += ": ";
  message += std::strerror(error);
  return Status(code, std::move(message));
}

} // namespace infer
