//===- Output.cpp - infer-run's stdout and its integer flags ---------------===//

#include "tools/infer-run/Output.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>

namespace infer::tools {
namespace {

/// Whether `text` is digits, after one optional leading '-' when `negative`.
bool isDecimal(const std::string &text, bool negative) {
  size_t start = negative && !text.empty() && text[0] == '-' ? 1 : 0;
  if (text.size() == start)
    return false;
  for (size_t i = start; i < text.size(); ++i)
    if (text[i] < '0' || text[i] > '9')
      return false;
  return true;
}

} // namespace

Status flushStdout() {
  errno = 0;
  if (std::fflush(stdout) == 0 && !std::ferror(stdout))
    return okStatus();
  int error = errno;
  return internalError(std::string("cannot write to standard output: ") +
                       (error ? std::strerror(error) : "write error"));
}

StatusOr<int64_t> parseInteger(const std::string &flag, const std::string &text, int64_t lo,
                               int64_t hi) {
  auto refuse = [&] {
    return invalidArgumentError(flag + " " + text + " is not an integer in [" + std::to_string(lo) +
                                ", " + std::to_string(hi) + "]");
  };
  if (!isDecimal(text, /*negative=*/true))
    return refuse();
  // Digits only, so the only failure is a value out of range (errno ERANGE,
  // which must not be clamped to the type's limit).
  errno = 0;
  long long value = std::strtoll(text.c_str(), nullptr, 10);
  if (errno == ERANGE || value < lo || value > hi)
    return refuse();
  return static_cast<int64_t>(value);
}

StatusOr<uint64_t> parseUnsigned(const std::string &flag, const std::string &text) {
  auto refuse = [&] {
    return invalidArgumentError(flag + " " + text + " is not an integer in [0, " +
                                std::to_string(std::numeric_limits<uint64_t>::max()) + "]");
  };
  if (!isDecimal(text, /*negative=*/false))
    return refuse();
  errno = 0;
  unsigned long long value = std::strtoull(text.c_str(), nullptr, 10);
  if (errno == ERANGE)
    return refuse();
  return static_cast<uint64_t>(value);
}

} // namespace infer::tools
