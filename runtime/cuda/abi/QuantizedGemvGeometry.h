//===- QuantizedGemvGeometry.h - the tensor-core int4 decode GEMV ---------===//
//
// Which exec.quantized_gemm launches run their decode steps on
// infer_quantized_gemv_mma<T, kBlockK> (kernels/QuantizedGemvMma.cuh), and
// its geometry, in one place for the exec pass that chooses it
// (SelectKernels: `mma_block_k`), codegen and the kernel. No headers beyond
// KernelParams.h.
//
// A block of kQuantizedMmaWarps warps takes tiles of kQuantizedMmaRows
// output rows (blockIdx.x, + gridDim.x, ...; grid.x = quantizedMmaGrid(n))
// and every token of a step of up to kQuantizedMmaTokens; its warps take
// turns over k in blocks of kBlockK.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_CUDA_ABI_QUANTIZEDGEMVGEOMETRY_H
#define INFER_RUNTIME_CUDA_ABI_QUANTIZEDGEMVGEOMETRY_H

#include "runtime/cuda/abi/GemvGeometry.h"
#include "runtime/cuda/abi/KernelParams.h"

namespace infer {
namespace kernels {

constexpr int kQuantizedMmaWarps = 8;
constexpr int kQuantizedMmaThreads = kQuantizedMmaWarps * 32;
/// Tokens a step may have: the 8 rows of an mma.m16n8k16's A that are used.
constexpr int kQuantizedMmaTokens = 8;
/// Output rows a tile: two mma tiles of 8 (the B operand's columns).
constexpr int kQuantizedMmaRows = 16;
/// Blocks a multiprocessor (the kernels' __launch_bounds__ keep their
/// registers within it).
constexpr int kQuantizedMmaBlocksPerMultiprocessor = 2;

/// Blocks of the tensor-core decode GEMVs: persistent, one wave of
/// kQuantizedMmaBlocksPerMultiprocessor on each of the target's
/// multiprocessors, fewer when n has fewer tiles.
INFER_ABI_FN unsigned quantizedMmaGrid(long long n) {
  const long long tiles = (n + kQuantizedMmaRows - 1) / kQuantizedMmaRows;
  const long long wave = (long long)kGemvMultiprocessors * kQuantizedMmaBlocksPerMultiprocessor;
  return unsigned(tiles < wave ? tiles : wave);
}

/// The k a warp's step covers (a lane's 16-byte load of 32 weights, or an
/// 8-byte one of 16, four lanes a row), for int4 weights with 16-bit
/// activations (bf16, f16: the mma's types) when k and the group are
/// multiples of it: 128, else 64; 0 where the kernel does not apply (the
/// scale a step multiplies by must be one group's).
INFER_ABI_FN int quantizedMmaBlockK(bool int4, int activationBytes, long long k, long long group) {
  if (!int4 || activationBytes != 2 || k <= 0 || group <= 0)
    return 0;
  for (int blockK = 128; blockK >= 64; blockK /= 2)
    if (k % blockK == 0 && group % blockK == 0)
      return blockK;
  return 0;
}

/// The k a warp's step of infer_quantized_gemv_fp8_mma covers
/// (kernels/QuantizedGemvFp8Mma.cuh): a lane's 16-byte weight load, four
/// lanes a row.
constexpr int kFp8MmaStepK = 64;

/// Whether exec.quantized_gemm's steps of up to kQuantizedMmaTokens tokens
/// may run on infer_quantized_gemv_fp8_mma: W8A8 fp8 weights (not
/// fp8-weight), 16-bit activations, whole k steps (which also makes every
/// weight row and input row 16-byte aligned). The device must be sm_89+.
INFER_ABI_FN bool quantizedFp8MmaSupported(bool fp8Scheme, int activationBytes, long long k,
                                           long long n) {
  return fp8Scheme && activationBytes == 2 && k > 0 && n > 0 && k % kFp8MmaStepK == 0;
}

} // namespace kernels
} // namespace infer

#endif // INFER_RUNTIME_CUDA_ABI_QUANTIZEDGEMVGEOMETRY_H
