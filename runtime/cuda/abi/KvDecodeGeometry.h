//===- KvDecodeGeometry.h - launch geometry of infer_kv_attention ---------===//
//
// Grid, workspace and counters of infer_kv_attention<T> (KvAttention.cuh), in
// one place for the kernel (NVRTC, nvcc) and the runtime (plain g++). No
// headers beyond KernelParams.h.
//
//   grid  = (tokens, kvDecodeGridY(numHeads, numKvHeads),
//            kvDecodeSplits(tokens, numHeads, numKvHeads))
//   block = kKvAttentionThreads, no dynamic shared memory
//
//   blockIdx.y = kvHead * headGroups + j: query heads j*P .. j*P + P - 1 of
//                the kv head's G = numHeads / numKvHeads (headGroups =
//                ceil(G / 8), P = ceil(G / headGroups) <= 8)
//   blockIdx.z = split: which slice of the token's visible positions
//
// The grid depends on `tokens` only (not on context lengths), so a captured
// CUDA graph stays valid. Few (token, head group) units get many splits, so a
// batch-1 decode still fills the GPU; every block of a unit computes the same
// number of splits it really uses from the context (at least 128 keys each;
// for headDim <= 64, 256, or 128 past 256 positions in steps of at most 8
// tokens) and blocks past it return at once. Each used split
// writes a partial (max, sum, unnormalized output) record to `workspace`; the
// last one to finish (atomic counter per unit) combines them, writes the
// output and sets the counter back to 0:
//
//   record (unit u = token * gridDim.y + blockIdx.y, split z) at
//   workspace + (u * gridDim.z + z) * kvDecodeRecordFloats(headDim):
//     | max[8] | sum[8] | output[8][headDim] |   (fp32, exp2 domain)
//   counters[u]
//
// `workspace` and `counters` are runtime-owned, zeroed once at allocation and
// left zeroed by every launch; launches on one stream may share them. Sizes
// for every tokens <= tokensBound: kvDecodeWorkspaceFloats and
// kvDecodeCounterCount (both 0 when no token count of the bound splits).
// With null workspace or counters the kernel ignores grid.z > 1 (split 0
// does all the work), and grid.y = numKvHeads (one block for all the heads
// of a kv head) also works, on the slower general path when G > 8.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_CUDA_ABI_KVDECODEGEOMETRY_H
#define INFER_RUNTIME_CUDA_ABI_KVDECODEGEOMETRY_H

#include "runtime/cuda/abi/KernelParams.h"

namespace infer {
namespace kernels {

/// Most query heads one block serves (one tensor-core n-tile).
constexpr int kKvDecodeHeadsPerBlock = 8;
/// Blocks the split count aims for (about 4 per multiprocessor of an H200:
/// more splits cost more in merges than they gain), and its cap.
constexpr long long kKvDecodeTargetBlocks = 512;
constexpr int kKvDecodeMaxSplits = 64;

/// Blocks along y per kv head: the G query heads in groups of at most 8.
INFER_ABI_FN long long kvDecodeHeadGroups(long long numHeads, long long numKvHeads) {
  const long long group = numKvHeads > 0 ? numHeads / numKvHeads : 0;
  return group > kKvDecodeHeadsPerBlock
             ? (group + kKvDecodeHeadsPerBlock - 1) / kKvDecodeHeadsPerBlock
             : 1;
}

/// grid.y of infer_kv_attention.
INFER_ABI_FN long long kvDecodeGridY(long long numHeads, long long numKvHeads) {
  return numKvHeads * kvDecodeHeadGroups(numHeads, numKvHeads);
}

/// grid.z of infer_kv_attention for a step of `tokens` rows: 1 once
/// tokens x grid.y reaches kKvDecodeTargetBlocks.
INFER_ABI_FN int kvDecodeSplits(long long tokens, long long numHeads, long long numKvHeads) {
  const long long units = tokens * kvDecodeGridY(numHeads, numKvHeads);
  if (units <= 0 || units >= kKvDecodeTargetBlocks)
    return 1;
  const long long splits = (kKvDecodeTargetBlocks + units - 1) / units;
  return splits < kKvDecodeMaxSplits ? int(splits) : kKvDecodeMaxSplits;
}

/// The kMaxDim of infer_kv_decode<T, C, kMaxDim> for heads of headDim
/// (at most 128) elements.
INFER_ABI_FN int kvDecodeMaxDim(long long headDim) { return headDim <= 64 ? 64 : 128; }

/// Floats of one partial record: max and sum of 8 heads, then 8 output rows.
INFER_ABI_FN long long kvDecodeRecordFloats(long long headDim) {
  return kKvDecodeHeadsPerBlock * (headDim + 2);
}

/// Floats of `workspace` for every step of at most tokensBound tokens (only
/// steps with more than one split use it).
INFER_ABI_FN long long kvDecodeWorkspaceFloats(long long tokensBound, long long numHeads,
                                               long long numKvHeads, long long headDim) {
  const long long y = kvDecodeGridY(numHeads, numKvHeads);
  long long records = 0;
  for (long long tokens = 1; tokens <= tokensBound && tokens * y < kKvDecodeTargetBlocks;
       ++tokens) {
    const long long r = tokens * y * kvDecodeSplits(tokens, numHeads, numKvHeads);
    records = r > records ? r : records;
  }
  return records > 0 ? records * kvDecodeRecordFloats(headDim) : 0;
}

/// Entries of `counters` (unsigned int) for every step of at most
/// tokensBound tokens.
INFER_ABI_FN long long kvDecodeCounterCount(long long tokensBound, long long numHeads,
                                            long long numKvHeads) {
  const long long y = kvDecodeGridY(numHeads, numKvHeads);
  if (y <= 0 || tokensBound <= 0)
    return 0;
  long long tokens = (kKvDecodeTargetBlocks - 1) / y; // most tokens that still split
  tokens = tokens < tokensBound ? tokens : tokensBound;
  return tokens * y;
}

} // namespace kernels
} // namespace infer

#endif // INFER_RUNTIME_CUDA_ABI_KVDECODEGEOMETRY_H
