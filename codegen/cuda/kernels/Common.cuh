//===- Common.cuh - element conversions and reductions for the kernels ----===//
//
// Device helpers every kernel source uses. Compiled by NVRTC (infer-compile)
// and by nvcc (the kernel tests), so only CUDA headers are included.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_CODEGEN_CUDA_KERNELS_COMMON_CUH
#define INFER_CODEGEN_CUDA_KERNELS_COMMON_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "runtime/cuda/abi/KernelParams.h"

namespace infer {
namespace kernels {

__device__ __forceinline__ float toFloat(float x) { return x; }
__device__ __forceinline__ float toFloat(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float toFloat(__half x) { return __half2float(x); }

/// Rounds to nearest even, as the cpu backend and the reference interpreter.
template <typename T> __device__ __forceinline__ T fromFloat(float x);
template <> __device__ __forceinline__ float fromFloat<float>(float x) { return x; }
template <> __device__ __forceinline__ __nv_bfloat16 fromFloat<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}
template <> __device__ __forceinline__ __half fromFloat<__half>(float x) {
  return __float2half_rn(x);
}

constexpr float kE4M3Max = 448.f;

/// The float of E4M3FN `bits` (exact; 0x7f / 0xff are NaN).
__device__ __forceinline__ float e4m3ToFloat(unsigned bits) {
  const unsigned exponent = (bits >> 3) & 0xfu, mantissa = bits & 7u;
  float magnitude = exponent == 0 ? float(mantissa) * 0x1p-9f
                                  : __uint_as_float(((exponent + 120u) << 23) | (mantissa << 20));
  if (exponent == 0xfu && mantissa == 7u)
    magnitude = __uint_as_float(0x7fc00000u);
  return (bits & 0x80u) ? -magnitude : magnitude;
}

/// x as E4M3FN bits, bit for bit quant::e4m3FromFloat (runtime/base): |x|
/// clamped to 448, rounded to nearest even; NaN is 0x7f with x's sign.
__device__ __forceinline__ unsigned e4m3FromFloat(float x) {
  const unsigned sign = (__float_as_uint(x) >> 24) & 0x80u;
  float a = fabsf(x);
  if (a != a)
    return sign | 0x7fu;
  a = fminf(a, kE4M3Max);
  if (a < 0x1p-6f) // subnormal: units of 2^-9
    return sign | unsigned(rintf(a * 512.f));
  unsigned bits = __float_as_uint(a);
  bits += (1u << 19) - 1u + ((bits >> 20) & 1u);
  const unsigned exponent = ((bits >> 23) & 0xffu) - 127u + 7u;
  return sign | (exponent << 3) | ((bits >> 20) & 7u);
}

/// x as an FP8 KV cache holds it: E4M3 of x / scale, times scale
/// (quant::roundThroughE4M3).
__device__ __forceinline__ float roundThroughE4M3(float x, float scale) {
  return e4m3ToFloat(e4m3FromFloat(__fdiv_rn(x, scale))) * scale;
}

/// One float8 E4M3FN value: the FP8 KV cache's element (its scale apart).
struct E4M3 {
  unsigned char bits;
};
__device__ __forceinline__ float toFloat(E4M3 x) { return e4m3ToFloat(x.bits); }
template <> __device__ __forceinline__ E4M3 fromFloat<E4M3>(float x) {
  return E4M3{static_cast<unsigned char>(e4m3FromFloat(x))};
}

/// Order-preserving map of a float to an unsigned key: NaN is 0 (below
/// -inf), -0 and +0 share a key. infer_sample's argmax (Sampling.cuh) and
/// the LM head's folded one (GemvRows.cuh, kArgmax) compare these keys,
/// packed above ~id, so both pick the lowest id of the largest logit.
__device__ __forceinline__ unsigned orderKey(float x) {
  unsigned bits = __float_as_uint(x);
  if (x != x)
    return 0u;
  if ((bits << 1) == 0u)
    bits = 0u;
  return (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
}

/// The 64-bit argmax candidate of logit `value` at `id`: larger is better.
__device__ __forceinline__ unsigned long long argmaxCandidate(float value, unsigned id) {
  return ((unsigned long long)orderKey(value) << 32) | (unsigned long long)(0xffffffffu - id);
}

/// Two floats rounded to T and packed in 32 bits, the first in the low half
/// (the lower address).
template <typename T> __device__ __forceinline__ unsigned packPair(float lo, float hi);
template <> __device__ __forceinline__ unsigned packPair<__nv_bfloat16>(float lo, float hi) {
  unsigned r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}
template <> __device__ __forceinline__ unsigned packPair<__half>(float lo, float hi) {
  unsigned r;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

/// A development timing hook, compiled out unless INFER_KERNEL_STAMPS is
/// defined (kv_attention_test --stamps; never in codegen's NVRTC source):
/// thread 0 writes %globaltimer to inferKernelStamps[slot] (one timing
/// program's own array: the tests are single translation units), or raises
/// it to that time (`LATEST`, for a grid's last block).
#ifdef INFER_KERNEL_STAMPS
constexpr int kKernelStampSlots = 256;
__device__ unsigned long long inferKernelStamps[kKernelStampSlots];
__device__ __forceinline__ unsigned long long globalTimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
#define INFER_KERNEL_STAMP(slot)                                                                  \
  do {                                                                                            \
    if (threadIdx.x == 0)                                                                         \
      ::infer::kernels::inferKernelStamps[(slot)] = ::infer::kernels::globalTimer();             \
  } while (0)
#define INFER_KERNEL_STAMP_LATEST(slot)                                                           \
  do {                                                                                            \
    if (threadIdx.x == 0)                                                                         \
      atomicMax(&::infer::kernels::inferKernelStamps[(slot)], ::infer::kernels::globalTimer());  \
  } while (0)
#else
#define INFER_KERNEL_STAMP(slot) ((void)0)
#define INFER_KERNEL_STAMP_LATEST(slot) ((void)0)
#endif

/// The first statement of every kernel (test/gpu/check_kernel_entries.py
/// checks): programmatic dependent launch (docs/codegen.md, "Launch
/// overlap"). When the runtime launched this grid with programmatic stream
/// serialization it may start while the previous kernel still runs; `wait`
/// returns once that kernel has finished and its writes are visible, so
/// nothing before it may read another kernel's output or write any buffer.
/// `launch_dependents` then lets the next kernel be scheduled: after the wait,
/// so at most two grids are resident at once. Without that launch attribute
/// both instructions do nothing.
__device__ __forceinline__ void waitForPreviousKernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

template <typename T> __device__ __forceinline__ float loadFloat(const void *base, long long i) {
  return toFloat(static_cast<const T *>(base)[i]);
}
template <typename T> __device__ __forceinline__ void storeFloat(void *base, long long i, float x) {
  static_cast<T *>(base)[i] = fromFloat<T>(x);
}

__device__ __forceinline__ float warpSum(float x) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
    x += __shfl_xor_sync(0xffffffffu, x, offset);
  return x;
}

__device__ __forceinline__ float warpMax(float x) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
    x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, offset));
  return x;
}

/// Sum over the block (blockDim.x a multiple of 32, at most 1024); every
/// thread gets the result. `scratch` holds 32 floats of shared memory.
__device__ __forceinline__ float blockSum(float x, float *scratch) {
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  x = warpSum(x);
  __syncthreads(); // scratch may still be read by a previous call
  if (lane == 0)
    scratch[warp] = x;
  __syncthreads();
  int warps = (blockDim.x + 31) >> 5;
  x = lane < warps ? scratch[lane] : 0.f;
  return warpSum(x);
}

/// Activation 0 silu, 1 gelu (erf), 2 gelu_tanh, with accurate libm calls
/// (the gated activation kernel, and the GEMVs' fused prologue except silu
/// over 16-bit types: siluFast below).
template <int Activation> __device__ __forceinline__ float activate(float x);
template <> __device__ __forceinline__ float activate<0>(float x) { return x / (1.f + expf(-x)); }
template <> __device__ __forceinline__ float activate<1>(float x) {
  return 0.5f * x * (1.f + erff(x * 0.70710678118654752f));
}
template <> __device__ __forceinline__ float activate<2>(float x) {
  return 0.5f * x * (1.f + tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x)));
}

/// silu from the special-function unit's exp2 and reciprocal (__expf,
/// __fdividef: a few float ulp, far below the rounding to a 16-bit type
/// that follows where it is used; silu(-inf) is NaN as with activate<0>).
/// The GEMVs' fused gated-activation prologue computes it for the whole
/// input row in every block (~260 blocks a launch): the prologue cost a
/// TinyLlama layer 2.4 us (kv_attention_test --layer-timings with it left
/// out, session 19), of which this form instead of activate<0>'s expf and
/// IEEE division wins back 0.7.
__device__ __forceinline__ float siluFast(float x) { return __fdividef(x, 1.f + __expf(-x)); }

/// act(gate) in the gated activations (GemvParams::activation: the gated
/// prologue, infer_gemv_rows' gated pairs; infer_gated_activation): 16-bit T
/// rounds the product with up to T, so silu may take siluFast there; fp32
/// keeps libm's. With libm's silu infer_gated_activation was bound by its
/// instructions, not its bytes: Llama-3-8B's 2,048 x 14,336 took 74.6 us (2.4
/// TB/s), with siluFast 45.4 us (3.9 TB/s; row_kernels_test timings, session 23).
template <typename T> __device__ __forceinline__ float gatedValue(int activation, float gate) {
  return activation == 0   ? (sizeof(T) == 2 ? siluFast(gate) : activate<0>(gate))
         : activation == 1 ? activate<1>(gate)
                           : activate<2>(gate);
}

/// ALiBi's slope of head h of `heads`, as reference::alibiSlope
/// (runtime/base/ReferenceMath.h).
__device__ __forceinline__ float alibiSlope(long long h, long long heads) {
  long long n = 1;
  while (n * 2 <= heads)
    n *= 2;
  const float exponent =
      h < n ? -8.f * float(h + 1) / float(n) : -4.f * float(2 * (h - n) + 1) / float(n);
  return exp2f(exponent);
}

} // namespace kernels
} // namespace infer

#endif // INFER_CODEGEN_CUDA_KERNELS_COMMON_CUH
