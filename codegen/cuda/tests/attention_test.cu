//===- attention_test.cu - infer_attention against attention in double ----===//
//
// Runs infer_attention<T> for f32, bf16 and f16 over head sizes of both paths
// (tensor cores: 16, 64, 80, 128, 144, 256 for 16-bit types, the last two in
// two passes; CUDA cores: 40, and every size for f32), causal and not, GQA
// and MHA, packed qkv and separate q/k/v with kvSeq > seq (causal with an
// offset), softcap 0 and 30, operands one element off 16-byte alignment, and
// causal queries that see no key (output 0, not NaN). The reference computes
// in double over the same rounded inputs; the output buffer is filled with NaN
// first and guarded on both sides. Then times the prefill attention of a 1.1B
// model (not asserted; a sample of its rows is checked).
//
// Exit status: 0 all passed, 1 a case failed, 77 no CUDA device.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/tests/KernelTestSupport.cuh"
#include "codegen/cuda/kernels/Attention.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

namespace {

using infer::kernels::AttentionParams;
using infer::kernels::kAttentionBlockQ;
using infer::kernels::kAttentionThreads;


template <typename T> struct TypeInfo : infer::kerneltest::Element<T> {
  static constexpr double tolerance = infer::kerneltest::pickTolerance<T>(2e-5, 2e-2, 5e-3);
};

struct Case {
  int batch, seq, kvSeq, heads, kvHeads, headDim;
  bool causal, packed, misaligned;
  float softcap;
};

/// A device buffer of T and its values as float (the rounded inputs).
template <typename T> struct Buffer {
  std::vector<float> values;
  T *device = nullptr;

  void random(size_t count, std::mt19937 &rng) {
    std::vector<double> rounded;
    const std::vector<T> host = infer::kerneltest::randomElements<T>(count, rng, &rounded);
    values.assign(rounded.begin(), rounded.end());
    CUDA_CHECK(cudaMalloc(&device, count * sizeof(T)));
    CUDA_CHECK(cudaMemcpy(device, host.data(), count * sizeof(T), cudaMemcpyHostToDevice));
  }
  ~Buffer() {
    if (device)
      (void)cudaFree(device); // nothing to do about a failed free in a test
  }
};

/// Element (b, s, head, d) at base[(b * rows + s) * stride + head * headDim + d].
struct HeadView {
  const float *base;
  long long rows, stride, headDim;
  double at(long long b, long long s, long long head, long long d) const {
    return base[(b * rows + s) * stride + head * headDim + d];
  }
};

/// One output row (b, query i, head h) in double; zeros when no key is visible.
void referenceRow(const Case &c, const HeadView &q, const HeadView &k, const HeadView &v,
                  double scale, long long b, long long h, long long i, double *out) {
  long long group = c.heads / c.kvHeads, kvHead = h / group;
  long long visible = c.causal ? i + c.kvSeq - c.seq + 1 : c.kvSeq;
  visible = std::min<long long>(std::max<long long>(visible, 0), c.kvSeq);
  std::vector<double> scores(static_cast<size_t>(visible));
  double maximum = -INFINITY;
  for (long long j = 0; j < visible; ++j) {
    double dot = 0;
    for (long long d = 0; d < c.headDim; ++d)
      dot += q.at(b, i, h, d) * k.at(b, j, kvHead, d);
    double score = dot * scale;
    if (c.softcap > 0)
      score = double(c.softcap) * std::tanh(score / double(c.softcap));
    scores[size_t(j)] = score;
    maximum = std::max(maximum, score);
  }
  double sum = 0;
  for (double &score : scores) {
    score = std::exp(score - maximum);
    sum += score;
  }
  for (long long d = 0; d < c.headDim; ++d) {
    double acc = 0;
    for (long long j = 0; j < visible; ++j)
      acc += scores[size_t(j)] * v.at(b, j, kvHead, d);
    out[d] = visible > 0 ? acc / sum : 0.0;
  }
}

template <typename T> void launch(const AttentionParams &p, cudaStream_t stream = 0) {
  unsigned shared = infer::kernels::attentionSharedBytes(p.headDim, int(sizeof(T)));
  // The instantiation codegen names for this head size.
  const bool small = infer::kernels::attentionHeadClass(p.headDim) == 64;
  auto *kernel =
      small ? infer::kernels::infer_attention<T, 64> : infer::kernels::infer_attention<T, 256>;
  static unsigned allowed[2] = {48 * 1024, 48 * 1024}; // per T and class: the default until raised
  if (shared > allowed[small]) {
    CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared)));
    allowed[small] = shared;
  }
  dim3 grid(unsigned((p.seq + kAttentionBlockQ - 1) / kAttentionBlockQ), unsigned(p.numHeads),
            unsigned(p.batch));
  kernel<<<grid, kAttentionThreads, shared, stream>>>(p);
  CUDA_CHECK(cudaGetLastError());
}

/// Operands of a case in device memory, with views of their rounded values.
template <typename T> struct Operands {
  Buffer<T> qkv, q, k, v;
  HeadView qView, kView, vView;
  AttentionParams params;

  Operands(const Case &c, std::mt19937 &rng) {
    long long H = c.heads, KV = c.kvHeads, D = c.headDim;
    std::memset(&params, 0, sizeof(params));
    if (c.packed) {
      // | q0 .. q(H-1) | k0 .. k(KV-1) | v0 .. v(KV-1) | per token.
      long long stride = (H + 2 * KV) * D;
      qkv.random(size_t(c.batch) * c.seq * stride, rng);
      const float *base = qkv.values.data();
      qView = {base, c.seq, stride, D};
      kView = {base + H * D, c.seq, stride, D};
      vView = {base + (H + KV) * D, c.seq, stride, D};
      params.q = qkv.device;
      params.k = qkv.device + H * D;
      params.v = qkv.device + (H + KV) * D;
      params.qRowStride = params.kRowStride = params.vRowStride = stride;
    } else {
      // Separate operands; misaligned: every pointer one element past the
      // allocation and every row stride one element longer.
      long long pad = c.misaligned ? 1 : 0;
      long long qStride = H * D + pad, kvStride = KV * D + pad;
      q.random(size_t(pad + c.batch * c.seq * qStride), rng);
      k.random(size_t(pad + c.batch * c.kvSeq * kvStride), rng);
      v.random(size_t(pad + c.batch * c.kvSeq * kvStride), rng);
      qView = {q.values.data() + pad, c.seq, qStride, D};
      kView = {k.values.data() + pad, c.kvSeq, kvStride, D};
      vView = {v.values.data() + pad, c.kvSeq, kvStride, D};
      params.q = q.device + pad;
      params.k = k.device + pad;
      params.v = v.device + pad;
      params.qRowStride = qStride;
      params.kRowStride = params.vRowStride = kvStride;
    }
    params.batch = c.batch;
    params.seq = c.seq;
    params.kvSeq = c.kvSeq;
    params.numHeads = H;
    params.numKvHeads = KV;
    params.headDim = D;
    params.scale = float(3.0 / std::sqrt(double(D))); // scores ~ N(0, 1), up to ~5
    params.softcap = c.softcap;
    params.causal = c.causal ? 1 : 0;
  }
};

void describe(const char *type, const Case &c) {
  std::printf("%-4s D=%-3d batch=%d seq=%-3d kvSeq=%-3d heads=%d/%d %s %s%s softcap=%g", type,
              c.headDim, c.batch, c.seq, c.kvSeq, c.heads, c.kvHeads,
              c.causal ? "causal" : "full  ", c.packed ? "packed  " : "separate",
              c.misaligned ? " misaligned" : "", double(c.softcap));
}

/// Runs one case; prints a line and returns whether it passed.
template <typename T> bool runCase(const Case &c, std::mt19937 &rng) {
  Operands<T> ops(c, rng);
  const long long outElements = (long long)c.batch * c.seq * c.heads * c.headDim;
  const long long pad = c.misaligned ? 1 : 0, guard = 64;
  const long long total = pad + outElements + guard;
  T *output = nullptr;
  CUDA_CHECK(cudaMalloc(&output, size_t(total) * sizeof(T)));
  CUDA_CHECK(cudaMemset(output, 0xff, size_t(total) * sizeof(T))); // NaN in every type
  ops.params.output = output + pad;
  launch<T>(ops.params);
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<T> result(static_cast<size_t>(total));
  CUDA_CHECK(cudaMemcpy(result.data(), output, size_t(total) * sizeof(T), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaFree(output));

  bool guardsIntact = true;
  std::vector<unsigned char> bytes(sizeof(T));
  for (long long i = 0; i < total; ++i) {
    if (i >= pad && i < pad + outElements)
      continue;
    std::memcpy(bytes.data(), &result[size_t(i)], sizeof(T));
    for (unsigned char byte : bytes)
      guardsIntact = guardsIntact && byte == 0xff;
  }

  double maxError = 0;
  std::vector<double> expected(static_cast<size_t>(c.headDim));
  for (long long b = 0; b < c.batch; ++b)
    for (long long i = 0; i < c.seq; ++i)
      for (long long h = 0; h < c.heads; ++h) {
        referenceRow(c, ops.qView, ops.kView, ops.vView, ops.params.scale, b, h, i,
                     expected.data());
        const T *row = &result[size_t(pad + ((b * c.seq + i) * c.heads + h) * c.headDim)];
        for (long long d = 0; d < c.headDim; ++d) {
          double error = std::fabs(double(TypeInfo<T>::value(row[d])) - expected[size_t(d)]);
          maxError = std::isnan(error) ? INFINITY : std::max(maxError, error);
        }
      }
  bool ok = maxError <= TypeInfo<T>::tolerance && guardsIntact;
  describe(TypeInfo<T>::name, c);
  std::printf(": max error %.3g (tolerance %.0e)%s %s\n", maxError, TypeInfo<T>::tolerance,
              guardsIntact ? "" : " WROTE OUTSIDE THE OUTPUT", ok ? "ok" : "FAIL");
  return ok;
}

std::vector<Case> cases() {
  std::vector<Case> list;
  const int dims[] = {16, 40, 64, 80, 128, 144, 256};
  for (int D : dims) {
    // batch, seq, kvSeq, heads, kvHeads, D, causal, packed, misaligned, softcap
    list.push_back({1, 1, 1, 4, 4, D, true, true, false, 0.f});
    list.push_back({3, 5, 5, 8, 2, D, false, true, false, 30.f});
    list.push_back({1, 64, 64, 8, 2, D, true, true, false, 0.f});
    list.push_back({3, 100, 100, 4, 4, D, true, true, false, 30.f});
    list.push_back({1, 300, 300, 8, 2, D, true, true, false, 0.f});
    list.push_back({1, 300, 300, 4, 4, D, false, true, false, 0.f});
    list.push_back({3, 100, 230, 8, 2, D, false, false, false, 0.f});
    list.push_back({1, 5, 77, 4, 4, D, true, false, false, 30.f});
    list.push_back({1, 64, 200, 8, 2, D, true, false, false, 0.f});
    list.push_back({3, 1, 129, 8, 2, D, true, false, false, 0.f});
    list.push_back({1, 100, 150, 8, 2, D, true, false, true, 30.f});
  }
  // Causal with kvSeq < seq: queries 0 .. 49 see no key and must give 0.
  list.push_back({1, 70, 20, 4, 4, 64, true, false, false, 0.f});
  list.push_back({1, 70, 20, 4, 4, 40, true, false, false, 0.f});
  return list;
}

template <typename T> int runAll() {
  std::mt19937 rng(1234);
  int failures = 0;
  for (const Case &c : cases())
    failures += runCase<T>(c, rng) ? 0 : 1;
  return failures;
}

/// Times one causal packed prefill (not asserted) and checks a sample of rows.
template <typename T> bool timeCase(int seq, int heads, int kvHeads, int headDim, int layers) {
  Case c{1, seq, seq, heads, kvHeads, headDim, true, true, false, 0.f};
  std::mt19937 rng(99);
  Operands<T> ops(c, rng);
  const long long outElements = (long long)seq * heads * headDim;
  T *output = nullptr;
  CUDA_CHECK(cudaMalloc(&output, size_t(outElements) * sizeof(T)));
  ops.params.output = output;
  const double ms = infer::kerneltest::timeMs([&] { launch<T>(ops.params); }, 20);
  double flops = 4.0 * double(seq) * seq * heads * headDim / 2;

  std::vector<T> result(static_cast<size_t>(outElements));
  CUDA_CHECK(
      cudaMemcpy(result.data(), output, size_t(outElements) * sizeof(T), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaFree(output));
  double maxError = 0;
  std::vector<double> expected(static_cast<size_t>(headDim));
  const int sampled[] = {0, 1, 63, 64, 65, 777, 1023, 1024, seq - 2, seq - 1};
  for (int i : sampled)
    for (int h = 0; h < heads; ++h) {
      referenceRow(c, ops.qView, ops.kView, ops.vView, ops.params.scale, 0, h, i, expected.data());
      const T *row = &result[size_t((long long)(i * heads + h) * headDim)];
      for (int d = 0; d < headDim; ++d) {
        double error = std::fabs(double(TypeInfo<T>::value(row[d])) - expected[size_t(d)]);
        maxError = std::isnan(error) ? INFINITY : std::max(maxError, error);
      }
    }
  bool ok = maxError <= TypeInfo<T>::tolerance;
  std::printf("timing %s seq=%d heads=%d/%d D=%d causal packed: %.4f ms, %.1f TFLOP/s "
              "(x%d layers: %.3f ms); sampled rows max error %.3g %s\n",
              TypeInfo<T>::name, seq, heads, kvHeads, headDim, ms, flops / (ms * 1e-3) / 1e12,
              layers, ms * layers, maxError, ok ? "ok" : "FAIL");
  return ok;
}

} // namespace

int main() {
  if (!infer::kerneltest::haveDevice())
    return 77;
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s (sm_%d%d)\n", prop.name, prop.major, prop.minor);
  std::printf(
      "shared bytes: bf16 D=64 %u, D=128 %u, D=256 %u; f32 D=64 %u, D=256 %u\n",
      infer::kernels::attentionSharedBytes(64, 2), infer::kernels::attentionSharedBytes(128, 2),
      infer::kernels::attentionSharedBytes(256, 2), infer::kernels::attentionSharedBytes(64, 4),
      infer::kernels::attentionSharedBytes(256, 4));

  int failures = runAll<float>() + runAll<__nv_bfloat16>() + runAll<__half>();
  // TinyLlama-1.1B: 22 layers, 32 heads x 64, 4 kv heads.
  failures += timeCase<__nv_bfloat16>(2048, 32, 4, 64, 22) ? 0 : 1;
  failures += timeCase<__nv_bfloat16>(2048, 32, 8, 128, 32) ? 0 : 1;
  failures += timeCase<__half>(2048, 32, 4, 64, 22) ? 0 : 1;

  if (failures) {
    std::printf("FAILED: %d case(s)\n", failures);
    return 1;
  }
  std::printf("all attention cases passed\n");
  return 0;
}
