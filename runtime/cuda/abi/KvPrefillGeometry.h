//===- KvPrefillGeometry.h - launch geometry of infer_kv_prefill_attention -===//
//
// When the step program's paged attention can run as a tensor-core prefill
// (infer_kv_prefill_attention<T>, KvPrefillAttention.cuh) and with how much
// dynamic shared memory, for the kernel (NVRTC, nvcc) and the runtime (plain
// g++). The kernel is infer_attention's tensor-core path reading K and V
// through the block table, so its tiles are those of AttentionGeometry.h:
//
//   grid  = (ceil(max new tokens of a sequence / kKvPrefillBlockQ), numHeads, numSeqs)
//   block = kKvPrefillThreads
//   dynamic shared memory = kvPrefillSharedBytes(headDim, sizeof(T)): 92,160
//   bytes at headDim 64, 104,448 at 128, 118,784 at 256, so the runtime
//   raises CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES (over 48 KiB).
//
// Other shapes and element types keep infer_kv_attention. No headers beyond
// AttentionGeometry.h.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_CUDA_ABI_KVPREFILLGEOMETRY_H
#define INFER_RUNTIME_CUDA_ABI_KVPREFILLGEOMETRY_H

#include "runtime/cuda/abi/AttentionGeometry.h"

namespace infer {
namespace kernels {

/// New tokens (queries) of one sequence per block, and threads per block.
constexpr int kKvPrefillBlockQ = kAttentionBlockQ;
constexpr int kKvPrefillThreads = kAttentionThreads;

/// True when infer_kv_prefill_attention handles this head size and element
/// size (2: bf16/half, headDim % 16 == 0, headDim <= 256); otherwise it does
/// nothing and infer_kv_attention must run instead.
INFER_ABI_FN bool kvPrefillSupported(long long headDim, int elementBytes) {
  return attentionUsesTensorCores(headDim, elementBytes);
}

/// Dynamic shared memory of infer_kv_prefill_attention<T> with sizeof(T) ==
/// elementBytes (0 when not kvPrefillSupported).
INFER_ABI_FN int kvPrefillSharedBytes(long long headDim, int elementBytes) {
  return kvPrefillSupported(headDim, elementBytes)
             ? int(attentionSharedBytes(headDim, elementBytes))
             : 0;
}

/// infer_kv_prefill_attention_wgmma (KvPrefillWgmma.cuh, sm_90a): the same
/// grid, key tiles of 128 positions in three K/V stages (a 128-row
/// tile of K or V is 16 KiB per 64 columns).
constexpr int kKvPrefillWgmmaKeys = 128;
constexpr int kKvPrefillWgmmaStages = 3;
/// Its block: two MMA warpgroups and one that copies K and V.
constexpr int kKvPrefillWgmmaThreads = kKvPrefillThreads + 128;

/// True when infer_kv_prefill_attention_wgmma runs this head on wgmma (head
/// size 128, 16-bit elements; softcap and unaligned rows fall back to
/// infer_kv_prefill_attention's path inside the kernel). At 64 the mma.sync
/// kernel is faster (172 against 181 TFLOP/s on the H200, 2,048 tokens):
/// half the MMA work per tile leaves the softmax exposed.
INFER_ABI_FN bool kvPrefillWgmmaSupported(long long headDim, int elementBytes) {
  return elementBytes == 2 && headDim == 128;
}

/// Dynamic shared memory of infer_kv_prefill_attention_wgmma: Q and the K/V
/// stages, 1,024-byte aligned (swizzle atoms), and the stages' 12 mbarriers,
/// or what the fallback path needs if that is more: 230,528 bytes (of the
/// 232,448 an H100/H200 block may have).
INFER_ABI_FN int kvPrefillWgmmaSharedBytes(long long headDim, int elementBytes) {
  if (!kvPrefillWgmmaSupported(headDim, elementBytes))
    return 0;
  const int tileBytes = kKvPrefillWgmmaKeys * int(headDim) * 2;
  const int wgmmaBytes = 1024 + tileBytes * (1 + 2 * kKvPrefillWgmmaStages) + 128;
  const int fallbackBytes = kvPrefillSharedBytes(headDim, elementBytes);
  return wgmmaBytes > fallbackBytes ? wgmmaBytes : fallbackBytes;
}

} // namespace kernels
} // namespace infer

#endif // INFER_RUNTIME_CUDA_ABI_KVPREFILLGEOMETRY_H
