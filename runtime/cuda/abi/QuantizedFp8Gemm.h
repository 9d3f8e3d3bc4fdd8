//===- QuantizedFp8Gemm.h - FP8 W8A8 steps on cuBLASLt's FP8 GEMM ---------===//
//
// Which exec.quantized_gemm launches run their steps of more than
// kQuantizedGemmTokens tokens as cuBLASLt FP8 GEMMs (SelectKernels:
// `fp8_gemm`), and the scratch those steps use, in one place for the pass,
// codegen, the artifact's scratch estimate and the kernel. No headers beyond
// KernelParams.h.
//
// Such a step first runs infer_quantized_fp8_inputs (kernels/
// QuantizedGemm.cuh): the tokens' inputs as E4M3 bytes [tokens, k] at the
// scratch's start, each token's scale (f32) after them at
// quantizedFp8ScalesOffset. The GEMM then reads the stored E4M3 weight [n, k]
// as it is, with the weight rows' and the tokens' scales as cuBLASLt's outer
// vectors: no dequantized weight is written.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_CUDA_ABI_QUANTIZEDFP8GEMM_H
#define INFER_RUNTIME_CUDA_ABI_QUANTIZEDFP8GEMM_H

#include "runtime/cuda/abi/KernelParams.h"

namespace infer {
namespace kernels {

/// Whether a quantized GEMM's large steps can run on the FP8 GEMM: W8A8 fp8
/// weights, 16-bit activations (the GEMM's bf16 / f16 output), and k and n
/// as cuBLASLt's FP8 layouts need them (16-byte aligned E4M3 rows, 16-byte
/// aligned output rows).
INFER_ABI_FN bool quantizedFp8GemmSupported(bool fp8Scheme, int activationBytes, long long k,
                                            long long n) {
  return fp8Scheme && activationBytes == 2 && k > 0 && n > 0 && k % 16 == 0 && n % 8 == 0;
}

/// Where the tokens' scales start in the scratch: after the E4M3 inputs,
/// 256-byte aligned.
INFER_ABI_FN long long quantizedFp8ScalesOffset(long long tokens, long long k) {
  return (tokens * k + 255) / 256 * 256;
}

/// The scratch a step of `tokens` tokens uses.
INFER_ABI_FN long long quantizedFp8ScratchBytes(long long tokens, long long k) {
  return quantizedFp8ScalesOffset(tokens, k) + 4 * tokens;
}

} // namespace kernels
} // namespace infer

#endif // INFER_RUNTIME_CUDA_ABI_QUANTIZEDFP8GEMM_H
