//===- AttentionGeometry.h - shared memory layout of infer_attention ------===//
//
// Which path infer_attention<T> takes and how much dynamic shared memory it
// needs, in one place for the kernel (NVRTC, nvcc) and the runtime (plain
// g++, which sets CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES from
// attentionSharedBytes()). No headers beyond KernelParams.h.
//
// Tensor-core path (16-bit T, headDim % 16 == 0, headDim <= 256), D = headDim,
// C = min(D, 128) output columns per pass (D > 128 runs two passes over the
// keys), Q = kAttentionBlockQ query rows (16 per warp), N = keys per tile
// (attentionTileKeys: 128 if D <= 64, else 64). Rows are padded by 8 elements
// so ldmatrix rows hit distinct banks:
//
//   | stages x [ K N x (D+8) of T | V N x (C+8) of T ] | Q Q x (D+8) of T |
//     stages = 2 (next tile copied during this one) if D <= 128, else 1
//
//   bytes = stages * N * (D + 8 + C + 8) * 2 + Q * (D + 8) * 2; with Q = 128:
//   D = 64: 2 * 128 * 144 * 2 + 128 * 72 * 2 = 92,160 (two blocks per SM);
//   D = 128: 104,448; D = 256 (one stage): 118,784.
//
// CUDA-core path (everything else), per group of 128 threads (64 queries),
// fp32 tiles with an odd row stride L = D | 1:
//
//   | Q 64 x L | O 64 x L | K then V, 16 x L | scores 64 x 17 | 64 row factors |
//
// kAttentionThreads / 128 groups side by side when that stays within 160 KiB,
// else one group that takes the block's 64-query slices in turn.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_CUDA_ABI_ATTENTIONGEOMETRY_H
#define INFER_RUNTIME_CUDA_ABI_ATTENTIONGEOMETRY_H

#include "runtime/cuda/abi/KernelParams.h"

namespace infer {
namespace kernels {

/// Keys per tile of the tensor-core path: kAttentionSmallHeadBlockK for
/// headDim <= 64, else kAttentionBlockK.
constexpr int kAttentionBlockK = 64;
constexpr int kAttentionSmallHeadBlockK = 128;
/// Keys per tile of the CUDA-core path.
constexpr int kAttentionSimtBlockK = 16;
/// Output columns one pass of the tensor-core path accumulates.
constexpr int kAttentionMaxPassColumns = 128;

/// True when infer_attention runs on tensor cores for this head size and
/// element size (2: bf16/half).
INFER_ABI_FN bool attentionUsesTensorCores(long long headDim, int elementBytes) {
  return elementBytes == 2 && headDim > 0 && headDim % 16 == 0 && headDim <= 256;
}

/// The tensor-core loops an attention kernel instantiation compiles
/// (kHeadClass of infer_attention, infer_kv_prefill_attention and
/// infer_kv_prefill_attention_wgmma): 64 for heads of up to 64 elements (8
/// output tiles), 256 for 65 .. 256 (16). Each class holds two loops (the
/// common size without softcap, and any size); compiling only the class a
/// model's head size needs halves these kernels' NVRTC time, the slowest of
/// an artifact's programs (docs/codegen.md).
INFER_ABI_FN int attentionHeadClass(long long headDim) { return headDim <= 64 ? 64 : 256; }

/// Row stride (elements) of the K and Q tiles; +8 staggers rows across banks.
INFER_ABI_FN int attentionKStride(long long headDim) { return int(headDim) + 8; }

/// Output columns per pass (and V columns per tile).
INFER_ABI_FN int attentionPassColumns(long long headDim) {
  return headDim < kAttentionMaxPassColumns ? int(headDim) : kAttentionMaxPassColumns;
}

INFER_ABI_FN int attentionVStride(long long headDim) { return attentionPassColumns(headDim) + 8; }

/// Keys per K/V tile of the tensor-core path (rows of one stage).
INFER_ABI_FN int attentionTileKeys(long long headDim) {
  return headDim <= 64 ? kAttentionSmallHeadBlockK : kAttentionBlockK;
}

/// K/V buffers: two (copy of the next tile overlaps the current one) when
/// they fit well, else one.
INFER_ABI_FN int attentionStages(long long headDim) { return headDim <= 128 ? 2 : 1; }

/// Bytes of one K + V stage of the tensor-core path.
INFER_ABI_FN unsigned attentionStageBytes(long long headDim) {
  return unsigned(attentionTileKeys(headDim)) *
         unsigned(attentionKStride(headDim) + attentionVStride(headDim)) * 2u;
}

/// Row stride (floats) of the CUDA-core path's tiles: odd, so rows hit
/// different banks.
INFER_ABI_FN int attentionSimtStride(long long headDim) { return int(headDim) | 1; }

/// Threads and query rows of one group of the CUDA-core path.
constexpr int kAttentionSimtThreads = 128;
constexpr int kAttentionSimtRows = 64;

/// Bytes of one group's tiles on the CUDA-core path (152,640 at headDim 256).
INFER_ABI_FN unsigned attentionSimtGroupBytes(long long headDim) {
  unsigned stride = unsigned(attentionSimtStride(headDim));
  unsigned floats = (2u * unsigned(kAttentionSimtRows) + unsigned(kAttentionSimtBlockK)) * stride +
                    unsigned(kAttentionSimtRows) * unsigned(kAttentionSimtBlockK + 1) +
                    unsigned(kAttentionSimtRows);
  return floats * 4u;
}

/// Groups of the CUDA-core path that run side by side.
INFER_ABI_FN int attentionSimtGroups(long long headDim) {
  int groups = kAttentionThreads / kAttentionSimtThreads;
  return groups > 1 && unsigned(groups) * attentionSimtGroupBytes(headDim) > 160u * 1024u ? 1
                                                                                          : groups;
}

/// Dynamic shared memory of infer_attention<T> with sizeof(T) == elementBytes.
/// At most 160 KiB for headDim <= 256 (CUDA-core path: 152,640 bytes at 256).
INFER_ABI_FN unsigned attentionSharedBytes(long long headDim, int elementBytes) {
  if (attentionUsesTensorCores(headDim, elementBytes)) {
    return unsigned(attentionStages(headDim)) * attentionStageBytes(headDim) +
           unsigned(kAttentionBlockQ) * unsigned(attentionKStride(headDim)) * 2u;
  }
  return unsigned(attentionSimtGroups(headDim)) * attentionSimtGroupBytes(headDim);
}

} // namespace kernels
} // namespace infer

#endif // INFER_RUNTIME_CUDA_ABI_ATTENTIONGEOMETRY_H
