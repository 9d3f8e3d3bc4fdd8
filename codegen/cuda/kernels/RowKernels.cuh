//===- RowKernels.cuh - embedding, norms, rotary, gated activation, copy --===//
//
// The row-wise kernels of the cuda backend, with the semantics of
// runtime/cpu/{Embedding,Norm,Rotary,GatedActivation,Copy}Kernel*.cpp in fp32
// math. One block per row (KernelParams.h fixes the geometry); the threads
// stride over the row. These kernels are memory-bound, so a row whose
// pointers are all 16-byte aligned moves in chunks of 8 elements (one 16-byte
// access of a 2-byte type, two of float) with an element-wise tail; a row that is
// not aligned goes element by element. The choice is per block, so rows of an
// odd width alternate between the two paths.
//
// Compiled by NVRTC: CUDA headers only, no standard library.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_CODEGEN_CUDA_KERNELS_ROWKERNELS_CUH
#define INFER_CODEGEN_CUDA_KERNELS_ROWKERNELS_CUH

#include "codegen/cuda/kernels/Common.cuh"

namespace infer {
namespace kernels {
namespace rowimpl {

/// Elements per vectorized access.
constexpr int kChunk = 8;

/// cos/sin pairs of one token the rotary kernel keeps in shared memory
/// (rotary_dim up to 1024); wider rotations compute them per pair.
constexpr int kRotaryTable = 512;

__device__ __forceinline__ bool aligned16(const void *p) {
  return (reinterpret_cast<unsigned long long>(p) & 15ull) == 0;
}

/// 16 bytes of X. Accessing elements through it (rather than through a uint4)
/// keeps the type punning legal, and the alignment makes it one vector access.
template <typename X> struct alignas(16) Pack {
  static constexpr int kSize = int(16 / sizeof(X));
  X e[kSize];
};

/// Loads elements [0, kChunk) of a 16-byte aligned `p` as floats.
template <typename X> __device__ __forceinline__ void loadChunk(const X *p, float (&v)[kChunk]) {
  using P = Pack<X>;
#pragma unroll
  for (int j = 0; j < kChunk / P::kSize; ++j) {
    P pack = reinterpret_cast<const P *>(p)[j];
#pragma unroll
    for (int k = 0; k < P::kSize; ++k)
      v[j * P::kSize + k] = toFloat(pack.e[k]);
  }
}

/// Stores kChunk floats, rounded to X, at a 16-byte aligned `p`.
template <typename X> __device__ __forceinline__ void storeChunk(X *p, const float (&v)[kChunk]) {
  using P = Pack<X>;
#pragma unroll
  for (int j = 0; j < kChunk / P::kSize; ++j) {
    P pack;
#pragma unroll
    for (int k = 0; k < P::kSize; ++k)
      pack.e[k] = fromFloat<X>(v[j * P::kSize + k]);
    reinterpret_cast<P *>(p)[j] = pack;
  }
}

/// Copies kChunk elements between 16-byte aligned addresses, bits unchanged.
template <typename X> __device__ __forceinline__ void copyChunk(const X *src, X *dst) {
  using P = Pack<X>;
#pragma unroll
  for (int j = 0; j < kChunk / P::kSize; ++j)
    reinterpret_cast<P *>(dst)[j] = reinterpret_cast<const P *>(src)[j];
}

/// Spreads [0, n) over the block: chunk(i) for each whole chunk starting at i
/// when `vectorized`, element(i) for every other element.
template <typename ChunkFn, typename ElementFn>
__device__ __forceinline__ void forEachInRow(long long n, bool vectorized, ChunkFn chunk,
                                             ElementFn element) {
  long long start = 0;
  if (vectorized) {
    long long chunks = n / kChunk;
    for (long long c = threadIdx.x; c < chunks; c += blockDim.x)
      chunk(c * kChunk);
    start = chunks * kChunk;
  }
  for (long long i = start + threadIdx.x; i < n; i += blockDim.x)
    element(i);
}

/// cos and sin of pair i: of float(position) * invFreq[i] (an f32 product,
/// accurate sincosf), or cache row `cacheRow`.
template <typename C>
__device__ __forceinline__ float2 rotaryCosSin(const RotaryParams &p, float position,
                                               long long cacheRow, long long half, long long i) {
  if (p.invFreq) {
    float angle = position * loadFloat<C>(p.invFreq, i);
    float sine, cosine;
    sincosf(angle, &sine, &cosine);
    return make_float2(cosine, sine);
  }
  long long k = cacheRow * half + i;
  return make_float2(loadFloat<C>(p.cosCache, k), loadFloat<C>(p.sinCache, k));
}


template <typename T, int Activation>
__device__ __forceinline__ void gatedRow(const T *gate, const T *up, T *out, long long n) {
  bool vectorized = aligned16(gate) && aligned16(up) && aligned16(out);
  forEachInRow(
      n, vectorized,
      [&](long long i) {
        float g[kChunk], u[kChunk];
        loadChunk(gate + i, g);
        loadChunk(up + i, u);
#pragma unroll
        for (int k = 0; k < kChunk; ++k)
          g[k] = gatedValue<T>(Activation, g[k]) * u[k];
        storeChunk(out + i, g);
      },
      [&](long long i) {
        out[i] = fromFloat<T>(gatedValue<T>(Activation, toFloat(gate[i])) * toFloat(up[i]));
      });
}

/// Copies n bytes with words of U where src and dst are equally misaligned
/// modulo sizeof(U): bytes up to the first aligned word, words, bytes after.
template <typename U>
__device__ __forceinline__ void copyBytes(const char *src, char *dst, long long n) {
  constexpr long long kWord = sizeof(U);
  long long head = (kWord - (long long)(reinterpret_cast<unsigned long long>(src) % kWord)) % kWord;
  if (head > n)
    head = n;
  long long words = (n - head) / kWord;
  for (long long i = threadIdx.x; i < head; i += blockDim.x)
    dst[i] = src[i];
  const U *srcWords = reinterpret_cast<const U *>(src + head);
  U *dstWords = reinterpret_cast<U *>(dst + head);
  for (long long i = threadIdx.x; i < words; i += blockDim.x)
    dstWords[i] = srcWords[i];
  for (long long i = head + words * kWord + threadIdx.x; i < n; i += blockDim.x)
    dst[i] = src[i];
}

} // namespace rowimpl

/// out[t] = table[ids[t]] (+ positionTable[positionOffset + t % seq]), added
/// in fp32 and rounded once to T.
template <typename T, typename W> __global__ void infer_embedding(EmbeddingParams p) {
  waitForPreviousKernel();
  using namespace rowimpl;
  long long t = blockIdx.x;
  if (t >= p.tokens)
    return;
  long long hidden = p.hidden;
  long long id = p.ids[t];
  if (p.fedCount) {
    // Loaded side by side (fedIds holds a row for every token): one round trip.
    const long long fed = *p.fedCount, drawn = p.fedIds[t];
    id = t < fed ? drawn : id;
  }
  const W *src = static_cast<const W *>(p.table) + id * hidden;
  const W *pos = nullptr;
  if (p.positionTable)
    pos = static_cast<const W *>(p.positionTable) +
          (p.positionOffset + (p.positionIds ? p.positionIds[t] : p.seq > 0 ? t % p.seq : t)) *
              hidden;
  T *dst = static_cast<T *>(p.output) + t * hidden;
  bool vectorized = aligned16(src) && aligned16(dst) && (!pos || aligned16(pos));
  forEachInRow(
      hidden, vectorized,
      [&](long long i) {
        float v[kChunk];
        loadChunk(src + i, v);
        if (pos) {
          float q[kChunk];
          loadChunk(pos + i, q);
#pragma unroll
          for (int k = 0; k < kChunk; ++k)
            v[k] += q[k];
        }
        storeChunk(dst + i, v);
      },
      [&](long long i) {
        float v = toFloat(src[i]);
        if (pos)
          v += toFloat(pos[i]);
        dst[i] = fromFloat<T>(v);
      });
}

/// y = x / sqrt(mean(x^2) + epsilon) * (weight + weightOffset). The row is
/// read twice: once for the statistic, once for the output (the second read
/// mostly hits L1/L2).
template <typename T, typename W> __global__ void infer_rms_norm(RmsNormParams p) {
  waitForPreviousKernel();
  using namespace rowimpl;
  __shared__ float scratch[32];
  long long row = blockIdx.x;
  if (row >= p.rows)
    return;
  long long n = p.features;
  const T *x = static_cast<const T *>(p.input) + row * n;
  const W *w = static_cast<const W *>(p.weight);
  T *y = static_cast<T *>(p.output) + row * n;
  bool vectorized = aligned16(x) && aligned16(w) && aligned16(y);

  float sumOfSquares = 0.f;
  forEachInRow(
      n, vectorized,
      [&](long long i) {
        float v[kChunk];
        loadChunk(x + i, v);
#pragma unroll
        for (int k = 0; k < kChunk; ++k)
          sumOfSquares += v[k] * v[k];
      },
      [&](long long i) {
        float v = toFloat(x[i]);
        sumOfSquares += v * v;
      });
  sumOfSquares = blockSum(sumOfSquares, scratch);
  float invRms = 1.f / sqrtf(sumOfSquares / float(n) + p.epsilon);
  float offset = p.weightOffset;

  forEachInRow(
      n, vectorized,
      [&](long long i) {
        float v[kChunk], g[kChunk];
        loadChunk(x + i, v);
        loadChunk(w + i, g);
#pragma unroll
        for (int k = 0; k < kChunk; ++k)
          v[k] = v[k] * invRms * (g[k] + offset);
        storeChunk(y + i, v);
      },
      [&](long long i) { y[i] = fromFloat<T>(toFloat(x[i]) * invRms * (toFloat(w[i]) + offset)); });
}

/// y = (x - mean) / sqrt(var + epsilon) * scale (+ bias), with the mean and
/// the variance in two passes (no E[x^2] - E[x]^2 cancellation).
template <typename T, typename W> __global__ void infer_layer_norm(LayerNormParams p) {
  waitForPreviousKernel();
  using namespace rowimpl;
  __shared__ float scratch[32];
  long long row = blockIdx.x;
  if (row >= p.rows)
    return;
  long long n = p.features;
  const T *x = static_cast<const T *>(p.input) + row * n;
  const W *scale = static_cast<const W *>(p.scale);
  const W *bias = static_cast<const W *>(p.bias);
  T *y = static_cast<T *>(p.output) + row * n;
  bool vectorized = aligned16(x) && aligned16(scale) && aligned16(y) && (!bias || aligned16(bias));

  float sum = 0.f;
  forEachInRow(
      n, vectorized,
      [&](long long i) {
        float v[kChunk];
        loadChunk(x + i, v);
#pragma unroll
        for (int k = 0; k < kChunk; ++k)
          sum += v[k];
      },
      [&](long long i) { sum += toFloat(x[i]); });
  float mean = blockSum(sum, scratch) / float(n);

  float squares = 0.f;
  forEachInRow(
      n, vectorized,
      [&](long long i) {
        float v[kChunk];
        loadChunk(x + i, v);
#pragma unroll
        for (int k = 0; k < kChunk; ++k)
          squares += (v[k] - mean) * (v[k] - mean);
      },
      [&](long long i) {
        float d = toFloat(x[i]) - mean;
        squares += d * d;
      });
  float invStdDev = 1.f / sqrtf(blockSum(squares, scratch) / float(n) + p.epsilon);

  forEachInRow(
      n, vectorized,
      [&](long long i) {
        float v[kChunk], s[kChunk], b[kChunk];
        loadChunk(x + i, v);
        loadChunk(scale + i, s);
        if (bias)
          loadChunk(bias + i, b);
#pragma unroll
        for (int k = 0; k < kChunk; ++k)
          v[k] = (v[k] - mean) * invStdDev * s[k] + (bias ? b[k] : 0.f);
        storeChunk(y + i, v);
      },
      [&](long long i) {
        float v = (toFloat(x[i]) - mean) * invStdDev * toFloat(scale[i]);
        if (bias)
          v += toFloat(bias[i]);
        y[i] = fromFloat<T>(v);
      });
}

namespace rowimpl {

/// (x0 cos - x1 sin, x1 cos + x0 sin), rounded per operation (no fused
/// multiply-add), so that every kernel that rotates gets the same bits.
__device__ __forceinline__ float2 rotatePair(float x0, float x1, float2 cs) {
  return make_float2(__fsub_rn(__fmul_rn(x0, cs.x), __fmul_rn(x1, cs.y)),
                     __fadd_rn(__fmul_rn(x1, cs.x), __fmul_rn(x0, cs.y)));
}

/// Token t's rotary angle factor (its position) and cos/sin cache row.
struct RotaryAngle {
  float scale;
  long long cacheRow;
};
__device__ __forceinline__ RotaryAngle rotaryAngle(const RotaryParams &p, long long t) {
  long long seq = p.seq > 0 ? p.seq : 1;
  long long b = t / seq, s = t % seq;
  long long position = p.positions ? p.positions[(p.positionBatch > 1 ? b : 0) * seq + s] : s;
  long long cacheRow = 0;
  if (!p.invFreq) {
    if (p.perTokenCacheBatch > 0) {
      cacheRow = (p.perTokenCacheBatch > 1 ? b : 0) * seq + s;
    } else {
      // The host checks positions against the caches; clamp to stay in bounds.
      cacheRow = position < 0 ? 0 : (position >= p.cacheRows ? p.cacheRows - 1 : position);
    }
  }
  return {float(position), cacheRow};
}

/// Rotary embedding of one token (see RotaryParams). A row of numHeads heads:
///
///   head h < rotatedHeads:  [ x0 pairs | x1 pairs | copied ]   half-split
///                           [ (x0 x1) (x0 x1) ... | copied ]   interleaved
///                           |<----- rotaryDim --->|
///                           |<------------ headDim ------->|
///   head h >= rotatedHeads: copied
///
/// Each pair is read and written by one thread, so output may be input.
/// Token t's row with the block's threads (`table`: kRotaryTable entries of
/// shared memory); also the first half of infer_rotary_kv_write.
template <typename T, typename C>
__device__ __forceinline__ void rotaryToken(const RotaryParams &p, long long t, float2 *table) {
  const RotaryAngle angle = rotaryAngle(p, t);
  const float angleScale = angle.scale;
  const long long cacheRow = angle.cacheRow, half = p.rotaryDim / 2;
  bool tabled = half <= kRotaryTable;
  if (tabled) {
    for (long long i = threadIdx.x; i < half; i += blockDim.x)
      table[i] = rotaryCosSin<C>(p, angleScale, cacheRow, half, i);
    __syncthreads();
  }
  auto cosSin = [&](long long i) {
    return tabled ? table[i] : rotaryCosSin<C>(p, angleScale, cacheRow, half, i);
  };

  long long headDim = p.headDim, rotaryDim = p.rotaryDim, rotatedHeads = p.rotatedHeads;
  bool interleaved = p.interleaved != 0;
  long long features = p.numHeads * headDim;
  const T *x = static_cast<const T *>(p.input) + t * features;
  T *y = static_cast<T *>(p.output) + t * features;
  bool copy = static_cast<const void *>(x) != static_cast<const void *>(y);
  // Chunks must not straddle heads, the rotary boundary or the x0/x1 halves.
  bool vectorized = aligned16(x) && aligned16(y) && headDim % kChunk == 0 &&
                    (interleaved ? rotaryDim : half) % kChunk == 0;

  forEachInRow(
      features, vectorized,
      [&](long long j) {
        long long h = j / headDim, d = j % headDim;
        if (h >= rotatedHeads || d >= rotaryDim) {
          if (copy)
            copyChunk(x + j, y + j);
          return;
        }
        if (interleaved) {
          float v[kChunk];
          loadChunk(x + j, v);
#pragma unroll
          for (int k = 0; k < kChunk / 2; ++k) {
            float2 cs = cosSin(d / 2 + k);
            float x0 = v[2 * k], x1 = v[2 * k + 1];
            const float2 y = rotatePair(x0, x1, cs);
            v[2 * k] = y.x;
            v[2 * k + 1] = y.y;
          }
          storeChunk(y + j, v);
        } else if (d < half) {
          float a[kChunk], c[kChunk];
          loadChunk(x + j, a);
          loadChunk(x + j + half, c);
#pragma unroll
          for (int k = 0; k < kChunk; ++k) {
            float2 cs = cosSin(d + k);
            float x0 = a[k], x1 = c[k];
            const float2 y = rotatePair(x0, x1, cs);
            a[k] = y.x;
            c[k] = y.y;
          }
          storeChunk(y + j, a);
          storeChunk(y + j + half, c);
        }
      },
      [&](long long j) {
        long long h = j / headDim, d = j % headDim;
        if (h >= rotatedHeads || d >= rotaryDim) {
          if (copy)
            y[j] = x[j];
          return;
        }
        long long i, partner;
        if (interleaved) {
          if (d % 2 != 0)
            return;
          i = d / 2;
          partner = j + 1;
        } else {
          if (d >= half)
            return;
          i = d;
          partner = j + half;
        }
        float2 cs = cosSin(i);
        float x0 = toFloat(x[j]), x1 = toFloat(x[partner]);
        const float2 rotated = rotatePair(x0, x1, cs);
        y[j] = fromFloat<T>(rotated.x);
        y[partner] = fromFloat<T>(rotated.y);
      });
}
} // namespace rowimpl

template <typename T, typename C> __global__ void infer_rotary(RotaryParams p) {
  waitForPreviousKernel();
  __shared__ float2 table[rowimpl::kRotaryTable];
  const long long t = blockIdx.x;
  if (t < p.tokens)
    rowimpl::rotaryToken<T, C>(p, t, table);
}

/// out = act(gate) * up over one token; an unknown activation writes NaN.
template <typename T> __global__ void infer_gated_activation(GatedActivationParams p) {
  waitForPreviousKernel();
  using namespace rowimpl;
  long long t = blockIdx.x;
  if (t >= p.tokens)
    return;
  const T *gate = static_cast<const T *>(p.gate) + t * p.gateRowStride;
  const T *up = static_cast<const T *>(p.up) + t * p.upRowStride;
  T *out = static_cast<T *>(p.output) + t * p.features;
  switch (p.activation) {
  case 0:
    gatedRow<T, 0>(gate, up, out, p.features);
    break;
  case 1:
    gatedRow<T, 1>(gate, up, out, p.features);
    break;
  case 2:
    gatedRow<T, 2>(gate, up, out, p.features);
    break;
  default:
    for (long long i = threadIdx.x; i < p.features; i += blockDim.x)
      out[i] = fromFloat<T>(__int_as_float(0x7fffffff));
  }
}

/// Elements [offset, offset + length) of row blockIdx.x (of row
/// rowIndices[blockIdx.x] of the input, when given), bytes unchanged, in
/// the widest words (16 down to 1 bytes) that source and destination can
/// share; with a feature map, the elements it names, one thread each.
__global__ void infer_copy(CopyParams p) {
  waitForPreviousKernel();
  using namespace rowimpl;
  long long row = blockIdx.x;
  if (row >= p.rows)
    return;
  long long elementBytes = p.elementBytes;
  if (p.featureMap) {
    const char *in = static_cast<const char *>(p.input) + row * p.inFeatures * elementBytes;
    char *out = static_cast<char *>(p.output) + row * p.length * elementBytes;
    for (long long f = threadIdx.x; f < p.length; f += blockDim.x) {
      long long from = p.featureMap[f];
      if (from < 0 || from >= p.inFeatures)
        continue;
      for (long long b = 0; b < elementBytes; ++b)
        out[f * elementBytes + b] = in[from * elementBytes + b];
    }
    return;
  }
  long long from = p.rowIndices ? p.rowIndices[row] : row;
  const char *src =
      static_cast<const char *>(p.input) + (from * p.inFeatures + p.offset) * elementBytes;
  char *dst = static_cast<char *>(p.output) + row * p.length * elementBytes;
  long long n = p.length * elementBytes;
  unsigned long long skew =
      reinterpret_cast<unsigned long long>(src) ^ reinterpret_cast<unsigned long long>(dst);
  if ((skew & 15) == 0)
    copyBytes<uint4>(src, dst, n);
  else if ((skew & 7) == 0)
    copyBytes<uint2>(src, dst, n);
  else if ((skew & 3) == 0)
    copyBytes<unsigned int>(src, dst, n);
  else if ((skew & 1) == 0)
    copyBytes<unsigned short>(src, dst, n);
  else
    copyBytes<unsigned char>(src, dst, n);
}

} // namespace kernels
} // namespace infer

#endif // INFER_CODEGEN_CUDA_KERNELS_ROWKERNELS_CUH
