//===- HostMemory.cpp - how much host memory a request may take ------------===//

#include "runtime/base/HostMemory.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace infer {
namespace {

/// The first number in the file at `path` ("max" and unreadable files: none).
bool readNumber(const std::string &path, uint64_t &value) {
  std::ifstream in(path);
  std::string text;
  if (!in || !(in >> text) || text.empty() ||
      text.find_first_not_of("0123456789") != std::string::npos)
    return false;
  try {
    value = std::stoull(text);
  } catch (...) {
    return false;
  }
  return true;
}

/// MemAvailable from /proc/meminfo, in bytes.
bool memAvailable(uint64_t &bytes) {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("MemAvailable:", 0) != 0)
      continue;
    std::istringstream fields(line.substr(13));
    uint64_t kib = 0;
    if (!(fields >> kib))
      return false;
    bytes = kib * 1024;
    return true;
  }
  return false;
}

/// What the process's memory cgroup leaves: limit - usage.
bool cgroupHeadroom(uint64_t &bytes) {
  uint64_t limit = 0, usage = 0;
  if (readNumber("/sys/fs/cgroup/memory.max", limit) &&
      readNumber("/sys/fs/cgroup/memory.current", usage)) {
    bytes = limit > usage ? limit - usage : 0;
    return true;
  }
  if (readNumber("/sys/fs/cgroup/memory/memory.limit_in_bytes", limit) &&
      readNumber("/sys/fs/cgroup/memory/memory.usage_in_bytes", usage) &&
      limit < (uint64_t(1) << 60)) {
    bytes = limit > usage ? limit - usage : 0;
    return true;
  }
  return false;
}

} // namespace

uint64_t availableHostMemoryBytes() {
  uint64_t available = 0;
  if (!memAvailable(available)) {
    long pages = ::sysconf(_SC_AVPHYS_PAGES), pageSize = ::sysconf(_SC_PAGESIZE);
    available = pages > 0 && pageSize > 0 ? uint64_t(pages) * uint64_t(pageSize) : 0;
  }
  uint64_t headroom = 0;
  if (cgroupHeadroom(headroom))
    available = std::min(available, headroom);
  return available;
}

std::string formatBytes(uint64_t bytes) {
  static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024)
    return std::to_string(bytes) + " bytes";
  double value = double(bytes) / 1024;
  int unit = 0;
  while (value >= 1024 && unit < 5) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f %s", value, units[unit]);
  return text;
}

Status checkHostMemory(const std::string &what, uint64_t bytes, uint64_t available) {
  if (bytes <= available)
    return okStatus();
  return resourceExhaustedError(what + " needs " + formatBytes(bytes) +
                                " of host memory, more than the " + formatBytes(available) +
                                " available");
}

} // namespace infer
