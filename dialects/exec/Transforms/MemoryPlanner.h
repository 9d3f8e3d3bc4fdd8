//===- MemoryPlanner.h - liveness-based interval packing --------*- C++ -*-===//
//
// Assigns byte offsets to buffers so that two buffers whose lifetimes overlap
// never overlap in memory. No MLIR here: the pass (PlanMemory.cpp) turns
// exec.buffer ops into these intervals, and the unit tests drive it directly.
//
//   offset
//     ^   +-----+          lifetimes are closed ranges of op indices;
//     |   |  B  |  +----+  A and C are never live together, so C reuses
//     |   +-----+  | C  |  A's bytes; B overlaps both and sits above them.
//     +---[  A  ]--[    ]--> op index
//
//===----------------------------------------------------------------------===//
#ifndef INFER_DIALECTS_EXEC_TRANSFORMS_MEMORYPLANNER_H
#define INFER_DIALECTS_EXEC_TRANSFORMS_MEMORYPLANNER_H

#include <cstdint>
#include <vector>

namespace infer::exec {

/// One buffer to place: live from op `begin` to op `end` (inclusive), `size`
/// bytes.
struct LiveInterval {
  int64_t begin = 0;
  int64_t end = 0;
  uint64_t size = 0;
};

/// The placement of every interval, in the order given.
struct MemoryPlan {
  std::vector<uint64_t> offsets;
  /// Bytes the arena needs: the highest end of any placed buffer, rounded up
  /// to the alignment.
  uint64_t arenaSize = 0;
  /// The most (aligned) bytes live at any one op: no plan can be smaller.
  uint64_t peakLiveBytes = 0;
};

/// Greedy best-fit by decreasing size: each buffer goes to the lowest
/// `alignment`-aligned offset where it overlaps no already placed buffer whose
/// lifetime overlaps its own. Deterministic (ties broken by begin, then index).
/// `alignment` must be a power of two.
MemoryPlan planIntervals(const std::vector<LiveInterval> &intervals, uint64_t alignment);

} // namespace infer::exec

#endif // INFER_DIALECTS_EXEC_TRANSFORMS_MEMORYPLANNER_H
