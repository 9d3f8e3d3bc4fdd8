// Unit tests for the exec memory planner's interval packing (planIntervals).

#include "dialects/exec/Transforms/MemoryPlanner.h"

#include <gtest/gtest.h>

using infer::exec::LiveInterval;
using infer::exec::MemoryPlan;
using infer::exec::planIntervals;

namespace {

/// Independent check: no two buffers live at the same op share a byte, and
/// every buffer lies inside the arena.
void expectValid(const std::vector<LiveInterval> &intervals, const MemoryPlan &plan,
                 uint64_t alignment) {
  ASSERT_EQ(plan.offsets.size(), intervals.size());
  for (size_t i = 0; i < intervals.size(); ++i) {
    EXPECT_EQ(plan.offsets[i] % alignment, 0u) << "buffer " << i;
    EXPECT_LE(plan.offsets[i] + intervals[i].size, plan.arenaSize) << "buffer " << i;
    for (size_t j = i + 1; j < intervals.size(); ++j) {
      bool liveTogether =
          intervals[i].begin <= intervals[j].end && intervals[j].begin <= intervals[i].end;
      bool bytesOverlap = plan.offsets[i] < plan.offsets[j] + intervals[j].size &&
                          plan.offsets[j] < plan.offsets[i] + intervals[i].size;
      EXPECT_FALSE(liveTogether && bytesOverlap) << "buffers " << i << " and " << j;
    }
  }
  EXPECT_GE(plan.arenaSize, plan.peakLiveBytes);
}

TEST(MemoryPlannerTest, DisjointLifetimesShareBytes) {
  std::vector<LiveInterval> intervals = {{0, 1, 1024}, {2, 3, 1024}};
  MemoryPlan plan = planIntervals(intervals, 256);
  expectValid(intervals, plan, 256);
  EXPECT_EQ(plan.offsets[0], 0u);
  EXPECT_EQ(plan.offsets[1], 0u);
  EXPECT_EQ(plan.arenaSize, 1024u);
  EXPECT_EQ(plan.peakLiveBytes, 1024u);
}

TEST(MemoryPlannerTest, OverlappingLifetimesDoNot) {
  // Sharing one op index is an overlap: an op's input and output coexist.
  std::vector<LiveInterval> intervals = {{0, 2, 1024}, {2, 3, 512}};
  MemoryPlan plan = planIntervals(intervals, 256);
  expectValid(intervals, plan, 256);
  EXPECT_EQ(plan.offsets[0], 0u);
  EXPECT_EQ(plan.offsets[1], 1024u);
  EXPECT_EQ(plan.arenaSize, 1536u);
  EXPECT_EQ(plan.peakLiveBytes, 1536u);
}

TEST(MemoryPlannerTest, SizesRoundUpToTheAlignment) {
  std::vector<LiveInterval> intervals = {{0, 0, 10}, {0, 0, 10}};
  MemoryPlan plan = planIntervals(intervals, 256);
  expectValid(intervals, plan, 256);
  EXPECT_EQ(plan.arenaSize, 512u);
  EXPECT_EQ(plan.peakLiveBytes, 512u);
}

TEST(MemoryPlannerTest, LargestFirstStacksDisjointBigBuffers) {
  // Placed by size: 0 ([0,1], 2 KiB) and 2 ([3,4], 2 KiB) are never live
  // together and share offset 0; 1 ([0,5], 1 KiB) overlaps both and goes
  // above them. Placing in program order would need 0 + 1 + 2 = 5 KiB.
  std::vector<LiveInterval> intervals = {{0, 1, 2048}, {0, 5, 1024}, {3, 4, 2048}};
  MemoryPlan plan = planIntervals(intervals, 256);
  expectValid(intervals, plan, 256);
  EXPECT_EQ(plan.offsets[0], 0u);
  EXPECT_EQ(plan.offsets[2], 0u);
  EXPECT_EQ(plan.offsets[1], 2048u);
  EXPECT_EQ(plan.arenaSize, 3072u);
  EXPECT_EQ(plan.peakLiveBytes, 3072u);
}

TEST(MemoryPlannerTest, BestFitPicksTheSmallestHole) {
  // At op 2, holes of 1 KiB ([0,1024)) and 512 B ([1536,2048)) are free
  // below the 512 B buffer live at [1024,1536) and the one at [2048,2560):
  // a 512 B buffer takes the 512 B hole.
  std::vector<LiveInterval> intervals = {
      {0, 1, 1024}, {0, 2, 512}, {0, 1, 512}, {0, 2, 512}, {2, 2, 512}};
  MemoryPlan plan = planIntervals(intervals, 256);
  expectValid(intervals, plan, 256);
  EXPECT_EQ(plan.offsets[0], 0u);
  EXPECT_EQ(plan.offsets[1], 1024u);
  EXPECT_EQ(plan.offsets[2], 1536u);
  EXPECT_EQ(plan.offsets[3], 2048u);
  EXPECT_EQ(plan.offsets[4], 1536u);
}

TEST(MemoryPlannerTest, ManyIntervalsStayValidAndDeterministic) {
  std::vector<LiveInterval> intervals;
  uint64_t state = 12345;
  for (int i = 0; i < 200; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    int64_t begin = static_cast<int64_t>((state >> 33) % 100);
    int64_t length = static_cast<int64_t>((state >> 17) % 10);
    uint64_t size = 1 + (state >> 45) % 5000;
    intervals.push_back({begin, begin + length, size});
  }
  MemoryPlan plan = planIntervals(intervals, 256);
  expectValid(intervals, plan, 256);
  MemoryPlan again = planIntervals(intervals, 256);
  EXPECT_EQ(plan.offsets, again.offsets);
}

TEST(MemoryPlannerTest, EmptyInput) {
  MemoryPlan plan = planIntervals({}, 256);
  EXPECT_TRUE(plan.offsets.empty());
  EXPECT_EQ(plan.arenaSize, 0u);
  EXPECT_EQ(plan.peakLiveBytes, 0u);
}

} // namespace
