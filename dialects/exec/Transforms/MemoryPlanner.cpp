//===- MemoryPlanner.cpp - liveness-based interval packing ----------------===//

#include "dialects/exec/Transforms/MemoryPlanner.h"

#include <algorithm>
#include <map>
#include <numeric>

using namespace infer::exec;

namespace {

uint64_t alignUp(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) & ~(alignment - 1);
}

bool lifetimesOverlap(const LiveInterval &a, const LiveInterval &b) {
  return a.begin <= b.end && b.begin <= a.end;
}

} // namespace

MemoryPlan infer::exec::planIntervals(const std::vector<LiveInterval> &intervals,
                                      uint64_t alignment) {
  if (alignment == 0)
    alignment = 1;
  MemoryPlan plan;
  plan.offsets.assign(intervals.size(), 0);

  std::vector<size_t> order(intervals.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (intervals[a].size != intervals[b].size)
      return intervals[a].size > intervals[b].size;
    return intervals[a].begin < intervals[b].begin;
  });

  std::vector<size_t> placed;
  for (size_t index : order) {
    const LiveInterval &current = intervals[index];
    uint64_t size = alignUp(current.size, alignment);
    // The byte ranges of placed buffers live at the same time, by offset.
    std::vector<std::pair<uint64_t, uint64_t>> busy;
    for (size_t other : placed)
      if (lifetimesOverlap(current, intervals[other]))
        busy.push_back({plan.offsets[other],
                        plan.offsets[other] + alignUp(intervals[other].size, alignment)});
    std::sort(busy.begin(), busy.end());
    // Best fit: the smallest gap that holds the buffer; else above them all.
    uint64_t cursor = 0, bestOffset = 0, bestGap = UINT64_MAX;
    bool found = false;
    for (auto [begin, end] : busy) {
      if (begin > cursor && begin - cursor >= size && begin - cursor < bestGap) {
        bestGap = begin - cursor;
        bestOffset = cursor;
        found = true;
      }
      cursor = std::max(cursor, end);
    }
    if (!found)
      bestOffset = cursor;
    plan.offsets[index] = bestOffset;
    plan.arenaSize = std::max(plan.arenaSize, bestOffset + size);
    placed.push_back(index);
  }

  // Live bytes change only where an interval begins or ends.
  std::map<int64_t, int64_t> delta;
  for (const LiveInterval &interval : intervals) {
    delta[interval.begin] += static_cast<int64_t>(alignUp(interval.size, alignment));
    delta[interval.end + 1] -= static_cast<int64_t>(alignUp(interval.size, alignment));
  }
  int64_t live = 0;
  for (auto [at, change] : delta) {
    live += change;
    plan.peakLiveBytes = std::max<uint64_t>(plan.peakLiveBytes, static_cast<uint64_t>(live));
  }
  return plan;
}
