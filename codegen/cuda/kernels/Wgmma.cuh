//===- Wgmma.cuh - Hopper warpgroup MMA (wgmma) from PTX ------------------===//
//
// The pieces of sm_90a's asynchronous warpgroup MMA that the prefill
// attention uses (PTX ISA "Asynchronous Warpgroup Level Matrix Multiply-
// Accumulate"): shared-memory matrix descriptors for 128-byte-swizzled
// tiles, the fence / commit / wait protocol, and m64n128k16 with fp32
// accumulators for bf16 and half, A from shared memory or from registers.
// Only sm_90a has these instructions: callers compile them under
// __CUDA_ARCH_FEAT_SM90_ALL.
//
// Tiles are stored as 128-byte rows (64 16-bit elements) in 1,024-byte
// atoms of 8 rows, 16-byte chunk c of row r at chunk c ^ (r % 8)
// (swizzledChunk). A K/V tile of `rows` rows and 128 columns is two such
// column halves, [half][row][64]. The same bytes serve both operand roles:
//
//   K-major (S = Q K^T: Q as A, K as B): an 8-row group every 1,024 bytes
//     (SBO); the 16-element k step s of a 64-column half starts 32 s bytes in.
//   MN-major (O = P V: V as B, transposed): 8 keys (K dim) per 1,024 bytes
//     (SBO), the next 64 output columns one half further (LBO = rows * 128).
//
// Accumulators (m64nN, f32): warp w of the warpgroup holds rows 16 w + g and
// 16 w + g + 8 (g = lane / 4), d[j][0..1] / d[j][2..3] at columns 8 j + 2 (lane
// % 4) + {0, 1}: mma.sync m16n8's C layout per 8 columns, which is also the
// register A layout, so scores become the A operand of P V without moving.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_CODEGEN_CUDA_KERNELS_WGMMA_CUH
#define INFER_CODEGEN_CUDA_KERNELS_WGMMA_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace infer {
namespace kernels {
namespace wgmma {

/// Byte offset in a 128-byte-swizzled tile of 16-byte chunk `chunk` (0..7)
/// of row `row`, relative to the row's atom-aligned start.
__device__ __forceinline__ unsigned swizzledChunk(int row, int chunk) {
  return unsigned(row * 128 + ((chunk ^ (row & 7)) << 4));
}

/// Descriptor of a 128-byte-swizzled operand at shared address `address`
/// (atom-aligned except for the k-step offset of K-major operands).
__device__ __forceinline__ unsigned long long descriptor(unsigned address, unsigned leadingBytes,
                                                         unsigned strideBytes) {
  return (unsigned long long)((address & 0x3FFFF) >> 4) |
         ((unsigned long long)(leadingBytes >> 4) << 16) |
         ((unsigned long long)(strideBytes >> 4) << 32) | (1ull << 62);
}

/// Makes this thread's shared-memory writes (st.shared, cp.async) visible to
/// wgmma's operand reads (the async proxy); a barrier must follow.
__device__ __forceinline__ void fenceSharedForAsyncProxy() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

/// Orders this warpgroup's register writes before the wgmma that follows.
__device__ __forceinline__ void fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }

__device__ __forceinline__ void commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

/// Waits until at most `pending` committed wgmma groups are in flight.
template <int pending> __device__ __forceinline__ void wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(pending) : "memory");
}

/// Keeps the compiler from moving reads or writes of accumulators across
/// the asynchronous MMA (they belong to wgmma between fence and wait).
template <int kTiles> __device__ __forceinline__ void pin(float (&d)[kTiles][4]) {
#pragma unroll
  for (int j = 0; j < kTiles; ++j)
#pragma unroll
    for (int i = 0; i < 4; ++i)
      asm volatile("" : "+f"(d[j][i])::"memory");
}

// clang-format off
// The 64 fp32 accumulators of m64n128: their PTX operand numbers and the
// matching "+f" constraints, d[j][i] as operand 4 j + i.
#define INFER_WGMMA_D128_REGISTERS  \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, "  \
  "%17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "  \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, "  \
  "%47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, "  \
  "%62, %63}, "
#define INFER_WGMMA_D128_OPERANDS  \
  "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]),  \
  "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]),  \
  "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]),  \
  "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]),  \
  "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), "+f"(d[6][0]),  \
  "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[7][0]), "+f"(d[7][1]),  \
  "+f"(d[7][2]), "+f"(d[7][3]), "+f"(d[8][0]), "+f"(d[8][1]), "+f"(d[8][2]),  \
  "+f"(d[8][3]), "+f"(d[9][0]), "+f"(d[9][1]), "+f"(d[9][2]), "+f"(d[9][3]),  \
  "+f"(d[10][0]), "+f"(d[10][1]), "+f"(d[10][2]), "+f"(d[10][3]), "+f"(d[11][0]),  \
  "+f"(d[11][1]), "+f"(d[11][2]), "+f"(d[11][3]), "+f"(d[12][0]), "+f"(d[12][1]),  \
  "+f"(d[12][2]), "+f"(d[12][3]), "+f"(d[13][0]), "+f"(d[13][1]), "+f"(d[13][2]),  \
  "+f"(d[13][3]), "+f"(d[14][0]), "+f"(d[14][1]), "+f"(d[14][2]), "+f"(d[14][3]),  \
  "+f"(d[15][0]), "+f"(d[15][1]), "+f"(d[15][2]), "+f"(d[15][3])

#define INFER_WGMMA_SHARED_A_N128(TYPE)  \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"  \
               "wgmma.mma_async.sync.aligned.m64n128k16.f32." TYPE "." TYPE " {"  \
               INFER_WGMMA_D128_REGISTERS "%64, %65, p, 1, 1, 0, 0;\n}\n"  \
               : INFER_WGMMA_D128_OPERANDS  \
               : "l"(descA), "l"(descB), "r"(accumulate))

#define INFER_WGMMA_REGISTER_A_N128(TYPE)  \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"  \
               "wgmma.mma_async.sync.aligned.m64n128k16.f32." TYPE "." TYPE " {"  \
               INFER_WGMMA_D128_REGISTERS "{%64, %65, %66, %67}, %68, p, 1, 1, 1;\n}\n"  \
               : INFER_WGMMA_D128_OPERANDS  \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(descB), "r"(accumulate))
// clang-format on

/// d (64 x 128) = A B (+ d when `accumulate`): A 64 x 16 from shared memory,
/// B 16 x 128, both K-major.
template <typename T>
__device__ __forceinline__ void mmaSharedA128(float (&d)[16][4], unsigned long long descA,
                                              unsigned long long descB, int accumulate);
template <>
__device__ __forceinline__ void mmaSharedA128<__nv_bfloat16>(float (&d)[16][4],
                                                             unsigned long long descA,
                                                             unsigned long long descB,
                                                             int accumulate) {
  INFER_WGMMA_SHARED_A_N128("bf16");
}
template <>
__device__ __forceinline__ void mmaSharedA128<__half>(float (&d)[16][4], unsigned long long descA,
                                                      unsigned long long descB, int accumulate) {
  INFER_WGMMA_SHARED_A_N128("f16");
}

/// d (64 x N) = A B (+ d when `accumulate`): A 64 x 16 from registers
/// (mma.sync's A fragment per warp), B 16 x N MN-major (transposed).
template <typename T, int kN>
__device__ __forceinline__ void mmaRegisterA(float (&d)[kN / 8][4], const unsigned (&a)[4],
                                             unsigned long long descB, int accumulate);
template <>
__device__ __forceinline__ void mmaRegisterA<__nv_bfloat16, 128>(float (&d)[16][4],
                                                                 const unsigned (&a)[4],
                                                                 unsigned long long descB,
                                                                 int accumulate) {
  INFER_WGMMA_REGISTER_A_N128("bf16");
}
template <>
__device__ __forceinline__ void mmaRegisterA<__half, 128>(float (&d)[16][4], const unsigned (&a)[4],
                                                          unsigned long long descB,
                                                          int accumulate) {
  INFER_WGMMA_REGISTER_A_N128("f16");
}

#undef INFER_WGMMA_SHARED_A_N128
#undef INFER_WGMMA_REGISTER_A_N128
#undef INFER_WGMMA_D128_OPERANDS
#undef INFER_WGMMA_D128_REGISTERS

} // namespace wgmma
} // namespace kernels
} // namespace infer

#endif // INFER_CODEGEN_CUDA_KERNELS_WGMMA_CUH
