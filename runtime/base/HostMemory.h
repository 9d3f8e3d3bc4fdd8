//===- HostMemory.h - how much host memory a request may take ---*- C++ -*-===//
//
// The runtime sizes what a user asks for (KV blocks on the cpu backend, bench
// requests, activation arenas) against the memory the process can still get,
// so that an oversized request is refused with a message instead of ending in
// std::bad_alloc or the OOM killer.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_BASE_HOSTMEMORY_H
#define INFER_RUNTIME_BASE_HOSTMEMORY_H

#include "runtime/base/Status.h"

#include <cstdint>
#include <string>

namespace infer {

/// Bytes of memory this process can still allocate and touch: the smaller of
/// /proc/meminfo's MemAvailable and what the memory cgroup (v2 memory.max,
/// or v1 limit_in_bytes) leaves beyond its current usage. When neither can
/// be read, sysconf's available physical pages.
uint64_t availableHostMemoryBytes();

/// "1.5 GiB", "12.0 MiB", "512 bytes": a size for messages.
std::string formatBytes(uint64_t bytes);

/// OK when `bytes` fits in `available`; otherwise ResourceExhausted:
/// "<what> needs <bytes> of host memory, more than the <available> available".
Status checkHostMemory(const std::string &what, uint64_t bytes, uint64_t available);

} // namespace infer

#endif // INFER_RUNTIME_BASE_HOSTMEMORY_H
