//===- Status.h - the runtime's one error type ------------------*- C++ -*-===//
//
// Errors are values in the runtime (CONVENTIONS.md rule 9): every fallible call
// returns a `Status` or a `StatusOr<T>`. No LLVM or MLIR here: the runtime does
// not link them.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_BASE_STATUS_H
#define INFER_RUNTIME_BASE_STATUS_H

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace infer {

/// What went wrong, coarse enough for a caller to branch on. The message says
/// the rest (file, name, expected vs. found).
enum class StatusCode {
  kOk = 0,
  /// The caller passed something malformed (a bad flag value, a bad shape).
  kInvalidArgument,
  /// A named thing does not exist (a file, a weight, an entry point).
  kNotFound,
  /// Stored data is corrupt or truncated (bad magic, checksum mismatch,
  /// offsets outside the file).
  kDataLoss,
  /// The input is well formed but the system is not in a state to use it
  /// (an artifact of another format version or target).
  kFailedPrecondition,
  /// A feature this build does not have.
  kUnimplemented,
  /// A bug or an unexpected failure of something we call (an OS call, a
  /// driver); the message carries the call.
  kInternal,
  /// Out of memory, file descriptors, device memory. Note: running out of KV
  /// blocks is a scheduling outcome, not an error.
  kResourceExhausted,
  /// The operating system refused access (permissions).
  kPermissionDenied,
};

/// The code's name without the `k`, e.g. "DataLoss".
std::string_view statusCodeName(StatusCode code);

/// Success, or a code with a message. Cheap to return when ok.
class [[nodiscard]] Status {
public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {
    assert(code != StatusCode::kOk && "an error status needs an error code");
  }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string &message() const { return message_; }
  /// "DataLoss: <message>", or "OK".
  std::string toString() const;

  /// The same error with "<prefix>: " in front of the message (e.g. a path).
  Status withPrefix(std::string_view prefix) const;

  /// Marks an error as deliberately dropped (e.g. in a destructor).
  void ignoreError() const {}

private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status okStatus() { return Status(); }
Status invalidArgumentError(std::string message);
Status notFoundError(std::string message);
Status dataLossError(std::string message);
Status failedPreconditionError(std::string message);
Status unimplementedError(std::string message);
Status internalError(std::string message);
Status resourceExhaustedError(std::string message);
/// An error from `errno`: "<what>: <strerror(errno)>", with a code that fits
/// (ENOENT → NotFound, EACCES → PermissionDenied, ENOMEM → ResourceExhausted).
Status errnoError(int error, std::string_view what);

/// A `T` or the error that prevented it.
template <typename T>
class [[nodiscard]] StatusOr {
public:
  StatusOr(Status status) : status_(std::move(status)) {
    assert(!status_.ok() && "StatusOr needs a value or an error");
  }
  StatusOr(T value) : value_(std::move(value)) {}

  bool ok() const { return status_.ok(); }
  const Status &status() const { return status_; }

  T &value() & {
    assert(ok());
    return *value_;
  }
  const T &value() const & {
    assert(ok());
    return *value_;
  }
  T &&value() && {
    assert(ok());
    return std::move(*value_);
  }
  T &operator*() & { return value(); }
  const T &operator*() const & { return value(); }
  T &&operator*() && { return std::move(*this).value(); }
  T *operator->() { return &value(); }
  const T *operator->() const { return &value(); }

private:
  Status status_;
  std::optional<T> value_;
};

namespace detail {
inline const Status &toStatus(const Status &status) { return status; }
template <typename T>
const Status &toStatus(const StatusOr<T> &statusOr) {
  return statusOr.status();
}
} // namespace detail

} // namespace infer

#define INFER_STATUS_CONCAT_INNER(a, b) a##b
#define INFER_STATUS_CONCAT(a, b) INFER_STATUS_CONCAT_INNER(a, b)

/// Returns the error of `expr` (a Status or StatusOr) from the enclosing
/// function if there is one.
#define RETURN_IF_ERROR(expr)                                                  \
  do {                                                                         \
    auto &&infer_status_ = (expr);                                             \
    if (!::infer::detail::toStatus(infer_status_).ok())                        \
      return ::infer::detail::toStatus(infer_status_);                         \
  } while (false)

/// `ASSIGN_OR_RETURN(auto x, f())`: evaluates the StatusOr `f()`, returns its
/// error from the enclosing function, or moves its value into `x`.
#define ASSIGN_OR_RETURN(lhs, expr)                                            \
  INFER_ASSIGN_OR_RETURN_IMPL(INFER_STATUS_CONCAT(infer_statusor_, __LINE__), lhs, expr)
#define INFER_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr)                            \
  auto tmp = (expr);                                                           \
  if (!tmp.ok())                                                               \
    return tmp.status();                                                       \
  lhs = std::move(tmp).value()

#endif // INFER_RUNTIME_BASE_STATUS_H
