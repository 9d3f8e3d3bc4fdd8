//===- MoeWorkspace.h - the scratch of an exec.moe launch --------*- C++ -*-===//
//
// exec.moe's `workspace` operand: GraphToExec sizes it with workspaceBytes,
// the cuda backend carves it with layout (kernels/Moe.cuh reads the parts).
// A "pair" is one (token, slot) of a token's top_k experts, p = t * topK + s.
// LLVM-free, shared by the compiler and the runtime.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_BASE_MOEWORKSPACE_H
#define INFER_RUNTIME_BASE_MOEWORKSPACE_H

#include <cstdint>

namespace infer::moe {

/// Byte offsets of the parts for `tokens` tokens; each part starts 256-byte
/// aligned.
struct WorkspaceLayout {
  int64_t expertIds = 0;     ///< int32 [tokens * topK]: the pair's expert
  int64_t pairWeights = 0;   ///< f32 [tokens * topK]: its routing weight
  int64_t pairsByExpert = 0; ///< int32 [tokens * topK]: pairs grouped by expert
  int64_t expertStarts = 0;  ///< int32 [experts + 1]: each expert's first entry there
  int64_t activations = 0;   ///< f32 [tokens * topK, inter]: silu(gate) * up
  int64_t expertOutputs = 0; ///< f32 [tokens * topK, hidden]: weight * down · act
  int64_t bytes = 0;         ///< the whole workspace
};

inline int64_t alignPart(int64_t bytes) { return (bytes + 255) / 256 * 256; }

inline WorkspaceLayout layout(int64_t tokens, int64_t hidden, int64_t inter, int64_t experts,
                              int64_t topK) {
  const int64_t pairs = tokens * topK;
  WorkspaceLayout parts;
  int64_t at = 0;
  auto take = [&](int64_t bytes) {
    int64_t start = at;
    at += alignPart(bytes);
    return start;
  };
  parts.expertIds = take(4 * pairs);
  parts.pairWeights = take(4 * pairs);
  parts.pairsByExpert = take(4 * pairs);
  parts.expertStarts = take(4 * (experts + 1));
  parts.activations = take(4 * pairs * inter);
  parts.expertOutputs = take(4 * pairs * hidden);
  parts.bytes = at;
  return parts;
}

/// An upper bound of layout(tokens, ...).bytes affine in tokens: a * tokens
/// + b bytes (what an exec buffer's size says).
struct AffineBytes {
  int64_t perToken = 0, fixed = 0;
};
inline AffineBytes workspaceBytes(int64_t hidden, int64_t inter, int64_t experts, int64_t topK) {
  // Each of the six parts rounds up by less than 256 bytes.
  return {4 * topK * (3 + inter + hidden), 4 * (experts + 1) + 6 * 256};
}

} // namespace infer::moe

#endif // INFER_RUNTIME_BASE_MOEWORKSPACE_H
