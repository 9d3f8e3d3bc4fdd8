//===- MoeWorkspaceTest.cpp - exec.moe's workspace bound -------------------===//
//
// GraphToExec sizes exec.moe's workspace with moe::workspaceBytes (an affine
// bound the memory planner evaluates at the artifact's token bound); the cuda
// backend carves it with moe::layout and refuses a workspace smaller than the
// layout. The bound must hold at every token count, and the parts must not
// overlap.
//
//===----------------------------------------------------------------------===//

#include "runtime/base/MoeWorkspace.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace {

struct Shape {
  int64_t hidden, inter, experts, topK;
};

TEST(MoeWorkspace, AffineBoundCoversTheLayoutAtEveryTokenCount) {
  // The test models' shapes, Mixtral's, Qwen3-30B-A3B's, and odd sizes.
  const Shape shapes[] = {{64, 32, 4, 2},      {64, 44, 32, 4}, {4096, 14336, 8, 2},
                          {2048, 768, 128, 8}, {7, 3, 1, 1},    {1000, 1001, 1024, 64}};
  for (const Shape &s : shapes) {
    infer::moe::AffineBytes bound =
        infer::moe::workspaceBytes(s.hidden, s.inter, s.experts, s.topK);
    for (int64_t tokens : {0, 1, 2, 3, 7, 64, 255, 256, 1000, 8192, 65536}) {
      infer::moe::WorkspaceLayout layout =
          infer::moe::layout(tokens, s.hidden, s.inter, s.experts, s.topK);
      EXPECT_LE(layout.bytes, bound.perToken * tokens + bound.fixed)
          << "hidden " << s.hidden << " inter " << s.inter << " experts " << s.experts << " top "
          << s.topK << " at " << tokens << " tokens";
      // Parts in order, 256-byte aligned, each as large as its contents.
      const int64_t pairs = tokens * s.topK;
      std::vector<std::pair<int64_t, int64_t>> parts = {
          {layout.expertIds, 4 * pairs},
          {layout.pairWeights, 4 * pairs},
          {layout.pairsByExpert, 4 * pairs},
          {layout.expertStarts, 4 * (s.experts + 1)},
          {layout.activations, 4 * pairs * s.inter},
          {layout.expertOutputs, 4 * pairs * s.hidden}};
      for (size_t i = 0; i < parts.size(); ++i) {
        EXPECT_EQ(parts[i].first % 256, 0);
        int64_t end = i + 1 < parts.size() ? parts[i + 1].first : layout.bytes;
        EXPECT_LE(parts[i].first + parts[i].second, end) << "part " << i << " at " << tokens;
      }
    }
  }
}

} // namespace
