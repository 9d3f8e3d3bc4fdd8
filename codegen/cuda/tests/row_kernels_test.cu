//===- row_kernels_test.cu - RowKernels.cuh against a double reference ----===//
//
// Runs every row-wise kernel on random inputs over odd and round shapes and
// element types and compares with a reference in double that mirrors
// runtime/cpu (rounded to the output type). Outputs start as NaN and carry a
// NaN guard after their end, so unwritten elements and overruns fail.
// Exit 0: all pass; 1: a case failed; 77: no CUDA device (skip).
//
//   nvcc -std=c++17 -arch=sm_90a -I<repo> -o row_kernels_test
//       codegen/cuda/tests/row_kernels_test.cu
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/tests/KernelTestSupport.cuh"
#include "codegen/cuda/kernels/RowKernels.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

// The combinations the cases below do not run still have to compile.
namespace infer {
namespace kernels {
#define INFER_INSTANTIATE_TW(T, W)                                                                 \
  template __global__ void infer_embedding<T, W>(EmbeddingParams);                                 \
  template __global__ void infer_rms_norm<T, W>(RmsNormParams);                                    \
  template __global__ void infer_layer_norm<T, W>(LayerNormParams);                                \
  template __global__ void infer_rotary<T, W>(RotaryParams);
INFER_INSTANTIATE_TW(float, __nv_bfloat16)
INFER_INSTANTIATE_TW(float, __half)
INFER_INSTANTIATE_TW(__nv_bfloat16, __half)
INFER_INSTANTIATE_TW(__half, float)
INFER_INSTANTIATE_TW(__half, __nv_bfloat16)
#undef INFER_INSTANTIATE_TW
} // namespace kernels
} // namespace infer

namespace {

using namespace infer::kernels;
using bf16 = __nv_bfloat16;
using i64 = long long;
using Values = std::vector<double>;

template <typename X> struct TypeInfo : infer::kerneltest::Element<X> {
  static constexpr double tolerance = infer::kerneltest::pickTolerance<X>(1e-5, 1e-2, 2e-3);
};

template <typename X> X toType(double v) { return TypeInfo<X>::from(v); }
template <typename X> double toDouble(X v) { return TypeInfo<X>::value(v); }
template <typename X> double roundTo(double v) { return toDouble(toType<X>(v)); }

std::mt19937_64 rng(20240611);
int failures = 0;

/// n uniform values in [lo, hi), already rounded to X so the reference sees
/// exactly what the kernel reads.
template <typename X> Values randomValues(size_t n, double lo = -1, double hi = 1) {
  Values v;
  infer::kerneltest::randomElements<X>(n, rng, &v, lo, hi);
  return v;
}

std::vector<i64> randomInts(size_t n, i64 lo, i64 hi) {
  std::uniform_int_distribution<i64> dist(lo, hi - 1);
  std::vector<i64> v(n);
  for (i64 &x : v)
    x = dist(rng);
  return v;
}

/// Device buffers of one case, freed with it. Outputs are filled with 0xff
/// bytes (NaN in every float type) and followed by kGuard bytes that must
/// stay that way.
class Device {
public:
  static constexpr size_t kGuard = 64;
  ~Device() {
    for (void *p : buffers_)
      (void)cudaFree(p); // nothing to do about a failed free in a test
  }
  void *bytes(const void *host, size_t size) {
    void *p = output(size);
    if (p && host)
      check(cudaMemcpy(p, host, size, cudaMemcpyHostToDevice));
    return p;
  }
  void *output(size_t size) {
    void *p = nullptr;
    if (!check(cudaMalloc(&p, size + kGuard)))
      return nullptr;
    buffers_.push_back(p);
    check(cudaMemset(p, 0xff, size + kGuard));
    return p;
  }
  template <typename X> X *upload(const Values &v) {
    std::vector<X> host(v.size());
    for (size_t i = 0; i < v.size(); ++i)
      host[i] = toType<X>(v[i]);
    return static_cast<X *>(bytes(host.data(), sizeof(X) * v.size()));
  }
  template <typename X> X *upload(const std::vector<X> &v) {
    return static_cast<X *>(bytes(v.data(), sizeof(X) * v.size()));
  }
  /// The first `size` bytes at p; false when the guard after them changed.
  bool download(const void *p, size_t size, std::vector<unsigned char> &out) {
    out.resize(size + kGuard);
    if (!check(cudaMemcpy(out.data(), p, out.size(), cudaMemcpyDeviceToHost)))
      return false;
    bool guardIntact =
        std::all_of(out.begin() + size, out.end(), [](unsigned char c) { return c == 0xff; });
    out.resize(size);
    return guardIntact;
  }
  template <typename X> bool download(const X *p, size_t n, Values &out) {
    std::vector<unsigned char> raw;
    bool ok = download(p, sizeof(X) * n, raw);
    out.resize(n);
    for (size_t i = 0; i < n; ++i) {
      X x;
      std::memcpy(&x, raw.data() + sizeof(X) * i, sizeof(X));
      out[i] = toDouble(x);
    }
    return ok;
  }
  bool check(cudaError_t e) {
    if (e != cudaSuccess && ok_) {
      std::printf("  CUDA error: %s\n", cudaGetErrorString(e));
      ok_ = false;
    }
    return e == cudaSuccess;
  }
  /// Waits for the kernel and reports launch or execution errors.
  bool finished() {
    check(cudaGetLastError());
    check(cudaDeviceSynchronize());
    return ok_;
  }

private:
  std::vector<void *> buffers_;
  bool ok_ = true;
};

void record(const std::string &name, bool ok, double error, double tolerance) {
  std::printf("%s %-72s max_err %.3e (tol %.0e)\n", ok ? "PASS" : "FAIL", name.c_str(), error,
              tolerance);
  if (!ok)
    ++failures;
}

/// Compares the kernel's T output with the reference rounded to T; the error
/// is relative to the largest reference magnitude.
template <typename T>
void compare(const std::string &name, Device &device, const T *output, Values ref) {
  Values got;
  bool ok = device.finished();
  bool guard = ok && device.download(output, ref.size(), got);
  double maxRef = 0, maxErr = 0;
  for (size_t i = 0; ok && i < ref.size(); ++i) {
    ref[i] = roundTo<T>(ref[i]);
    maxRef = std::max(maxRef, std::fabs(ref[i]));
    double d = std::fabs(got[i] - ref[i]);
    maxErr = std::max(maxErr, std::isnan(d) ? INFINITY : d);
  }
  double error = ok ? maxErr / std::max(maxRef, 1e-30) : INFINITY;
  double tolerance = TypeInfo<T>::tolerance;
  record(name + (ok && !guard ? " [wrote past the end]" : ""), ok && guard && error <= tolerance,
         error, tolerance);
}

template <typename T, typename W> std::string label(const char *kernel) {
  return std::string(kernel) + "<" + TypeInfo<T>::name + "," + TypeInfo<W>::name + ">";
}

std::string shape(const char *format, ...) __attribute__((format(printf, 1, 2)));
std::string shape(const char *format, ...) {
  char buffer[256];
  va_list args;
  va_start(args, format);
  std::vsnprintf(buffer, sizeof(buffer), format, args);
  va_end(args);
  return buffer;
}

//===----------------------------------------------------------------------===//
// Cases
//===----------------------------------------------------------------------===//

/// Rows of `features`; per-head shapes are (tokens * heads) rows of head_dim.
struct RowShape {
  i64 rows, features;
};
/// 8,192 and 8,200 features: rows as wide as the largest models' hidden size,
/// with and without a partial last block of threads' chunks.
const RowShape kRowShapes[] = {{1, 60},     {1, 2048}, {7, 60},      {7, 64},       {300, 64},
                               {300, 2048}, {3, 4095}, {7 * 8, 128}, {300 * 4, 64}, {3, 8192},
                               {3, 8200}};

template <typename T, typename W>
void testEmbedding(i64 batch, i64 seq, i64 hidden, bool withPositions) {
  Device device;
  const i64 tokens = batch * seq, vocab = 37, offset = 2;
  Values table = randomValues<W>(vocab * hidden);
  Values positionTable = randomValues<W>((offset + seq) * hidden);
  std::vector<i64> ids = randomInts(tokens, 0, vocab);
  Values ref(tokens * hidden);
  for (i64 t = 0; t < tokens; ++t)
    for (i64 h = 0; h < hidden; ++h)
      ref[t * hidden + h] = table[ids[t] * hidden + h] +
                            (withPositions ? positionTable[(offset + t % seq) * hidden + h] : 0.0);
  EmbeddingParams p{};
  p.ids = device.upload(ids);
  p.table = device.upload<W>(table);
  p.positionTable = withPositions ? device.upload<W>(positionTable) : nullptr;
  p.output = device.output(sizeof(T) * ref.size());
  p.tokens = tokens;
  p.seq = seq;
  p.hidden = hidden;
  p.positionOffset = offset;
  infer_embedding<T, W><<<unsigned(tokens), kRowThreads>>>(p);
  compare(label<T, W>("embedding") + shape(" batch %lld seq %lld hidden %lld%s", batch, seq, hidden,
                                           withPositions ? " +positions@2" : ""),
          device, static_cast<T *>(p.output), ref);
}

template <typename T, typename W> void testRmsNorm(const RowShape &s, float weightOffset) {
  Device device;
  const i64 n = s.features;
  const float epsilon = 1e-6f;
  Values x = randomValues<T>(s.rows * n, -2, 2), w = randomValues<W>(n, -1, 1);
  Values ref(x.size());
  for (i64 r = 0; r < s.rows; ++r) {
    double sumOfSquares = 0;
    for (i64 i = 0; i < n; ++i)
      sumOfSquares += x[r * n + i] * x[r * n + i];
    double invRms = 1.0 / std::sqrt(sumOfSquares / double(n) + double(epsilon));
    for (i64 i = 0; i < n; ++i)
      ref[r * n + i] = x[r * n + i] * invRms * (w[i] + double(weightOffset));
  }
  RmsNormParams p{};
  p.input = device.upload<T>(x);
  p.weight = device.upload<W>(w);
  p.output = device.output(sizeof(T) * ref.size());
  p.rows = s.rows;
  p.features = n;
  p.epsilon = epsilon;
  p.weightOffset = weightOffset;
  infer_rms_norm<T, W><<<unsigned(s.rows), kRowThreads>>>(p);
  compare(label<T, W>("rms_norm") +
              shape(" rows %lld features %lld offset %g", s.rows, n, weightOffset),
          device, static_cast<T *>(p.output), ref);
}

template <typename T, typename W> void testLayerNorm(const RowShape &s, bool withBias) {
  Device device;
  const i64 n = s.features;
  const float epsilon = 1e-5f;
  // A mean far from zero checks that the variance does not cancel.
  Values x = randomValues<T>(s.rows * n, 3, 5), scale = randomValues<W>(n, -2, 2),
         bias = randomValues<W>(n, -1, 1);
  Values ref(x.size());
  for (i64 r = 0; r < s.rows; ++r) {
    const double *row = &x[r * n];
    double mean = 0, variance = 0;
    for (i64 i = 0; i < n; ++i)
      mean += row[i];
    mean /= double(n);
    for (i64 i = 0; i < n; ++i)
      variance += (row[i] - mean) * (row[i] - mean);
    double invStdDev = 1.0 / std::sqrt(variance / double(n) + double(epsilon));
    for (i64 i = 0; i < n; ++i)
      ref[r * n + i] = (row[i] - mean) * invStdDev * scale[i] + (withBias ? bias[i] : 0.0);
  }
  LayerNormParams p{};
  p.input = device.upload<T>(x);
  p.scale = device.upload<W>(scale);
  p.bias = withBias ? device.upload<W>(bias) : nullptr;
  p.output = device.output(sizeof(T) * ref.size());
  p.rows = s.rows;
  p.features = n;
  p.epsilon = epsilon;
  infer_layer_norm<T, W><<<unsigned(s.rows), kRowThreads>>>(p);
  compare(label<T, W>("layer_norm") +
              shape(" rows %lld features %lld%s", s.rows, n, withBias ? " +bias" : ""),
          device, static_cast<T *>(p.output), ref);
}

enum class RotarySource { InvFreq, CacheByPosition, PerTokenCache };
struct RotaryCase {
  i64 batch, seq, numHeads, rotatedHeads, headDim, rotaryDim;
  bool interleaved;
  RotarySource source;
  i64 positionBatch;      // 0: no positions
  i64 perTokenCacheBatch; // PerTokenCache only: 1 or batch
  bool inPlace;
};
const RotaryCase kRotaryCases[] = {
    // batch seq heads rotated headDim rotaryDim interleaved source positions perToken inPlace
    {1, 1, 4, 4, 64, 64, false, RotarySource::InvFreq, 0, 0, false},
    {2, 7, 8, 8, 128, 128, false, RotarySource::InvFreq, 0, 0, false},
    {2, 7, 8, 8, 128, 128, true, RotarySource::InvFreq, 2, 0, false},
    {3, 100, 6, 4, 64, 32, false, RotarySource::InvFreq, 1, 0, false},
    {3, 100, 6, 4, 64, 32, true, RotarySource::InvFreq, 3, 0, true},
    {1, 7, 5, 3, 60, 20, false, RotarySource::InvFreq, 1, 0, false},
    {1, 7, 5, 3, 60, 20, true, RotarySource::InvFreq, 0, 0, false},
    {2, 7, 4, 2, 80, 80, false, RotarySource::CacheByPosition, 0, 0, false},
    {2, 7, 4, 4, 64, 64, true, RotarySource::CacheByPosition, 2, 0, false},
    {3, 100, 12, 8, 128, 64, false, RotarySource::CacheByPosition, 1, 0, true},
    {1, 7, 3, 3, 30, 18, false, RotarySource::CacheByPosition, 1, 0, false},
    {2, 7, 4, 4, 64, 64, false, RotarySource::PerTokenCache, 0, 1, false},
    {3, 100, 6, 6, 128, 96, true, RotarySource::PerTokenCache, 0, 3, false},
    {2, 7, 4, 3, 60, 44, false, RotarySource::PerTokenCache, 0, 2, true},
};

template <typename T, typename C> void testRotary(const RotaryCase &c, int threads) {
  Device device;
  const i64 tokens = c.batch * c.seq, features = c.numHeads * c.headDim, half = c.rotaryDim / 2;
  const i64 cacheRows = 512;
  Values x = randomValues<T>(tokens * features, -2, 2);
  std::vector<i64> positions;
  if (c.positionBatch > 0)
    positions = randomInts(c.positionBatch * c.seq, 0,
                           c.source == RotarySource::InvFreq ? 4096 : cacheRows);
  Values invFreq(half);
  for (i64 i = 0; i < half; ++i)
    invFreq[i] = roundTo<C>(1.0 / std::pow(10000.0, double(2 * i) / double(c.rotaryDim)));
  i64 cacheLines =
      c.source == RotarySource::PerTokenCache ? c.perTokenCacheBatch * c.seq : cacheRows;
  std::uniform_real_distribution<double> angle(0, 100);
  Values cosCache(cacheLines * half), sinCache(cacheLines * half);
  for (size_t i = 0; i < cosCache.size(); ++i) {
    double a = angle(rng);
    cosCache[i] = roundTo<C>(std::cos(a));
    sinCache[i] = roundTo<C>(std::sin(a));
  }

  Values ref = x;
  for (i64 t = 0; t < tokens; ++t) {
    i64 b = t / c.seq, s = t % c.seq;
    i64 position = c.positionBatch > 0 ? positions[(c.positionBatch > 1 ? b : 0) * c.seq + s] : s;
    i64 row = c.source == RotarySource::PerTokenCache
                  ? (c.perTokenCacheBatch > 1 ? b : 0) * c.seq + s
                  : position;
    for (i64 h = 0; h < c.rotatedHeads; ++h) {
      i64 base = t * features + h * c.headDim;
      for (i64 i = 0; i < half; ++i) {
        double cosine, sine;
        if (c.source == RotarySource::InvFreq) {
          float angle = float(position) * float(invFreq[i]);
          cosine = std::cos(double(angle));
          sine = std::sin(double(angle));
        } else {
          cosine = cosCache[row * half + i];
          sine = sinCache[row * half + i];
        }
        i64 a = base + (c.interleaved ? 2 * i : i);
        i64 d = base + (c.interleaved ? 2 * i + 1 : i + half);
        ref[a] = x[a] * cosine - x[d] * sine;
        ref[d] = x[d] * cosine + x[a] * sine;
      }
    }
  }

  RotaryParams p{};
  p.input = device.upload<T>(x);
  p.output = c.inPlace ? const_cast<void *>(p.input) : device.output(sizeof(T) * x.size());
  if (c.source == RotarySource::InvFreq) {
    p.invFreq = device.upload<C>(invFreq);
  } else {
    p.cosCache = device.upload<C>(cosCache);
    p.sinCache = device.upload<C>(sinCache);
  }
  p.positions = c.positionBatch > 0 ? device.upload(positions) : nullptr;
  p.tokens = tokens;
  p.seq = c.seq;
  p.numHeads = c.numHeads;
  p.rotatedHeads = c.rotatedHeads;
  p.headDim = c.headDim;
  p.rotaryDim = c.rotaryDim;
  p.cacheRows = c.source == RotarySource::CacheByPosition ? cacheRows : 0;
  p.perTokenCacheBatch = c.source == RotarySource::PerTokenCache ? c.perTokenCacheBatch : 0;
  p.positionBatch = c.positionBatch > 0 ? c.positionBatch : 1;
  p.interleaved = c.interleaved;
  infer_rotary<T, C><<<unsigned(tokens), threads>>>(p);
  const char *source[] = {"inv_freq", "cache[pos]", "cache[token]"};
  compare(label<T, C>("rotary") +
              shape(" b%lld s%lld heads %lld/%lld dim %lld/%lld %s %s pos%lld%s block %d", c.batch,
                    c.seq, c.rotatedHeads, c.numHeads, c.rotaryDim, c.headDim,
                    c.interleaved ? "interleaved" : "half-split", source[int(c.source)],
                    c.positionBatch, c.inPlace ? " in-place" : "", threads),
          device, static_cast<T *>(p.output), ref);
}

double activate(int activation, double x) {
  constexpr double kPi = 3.14159265358979323846;
  switch (activation) {
  case 0:
    return x / (1.0 + std::exp(-x));
  case 1:
    return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
  default:
    return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / kPi) * (x + 0.044715 * x * x * x)));
  }
}

template <typename T> void testGatedActivation(i64 tokens, i64 features, bool packed, int act) {
  Device device;
  i64 stride = packed ? 2 * features : features;
  Values gate = randomValues<T>(tokens * stride, -6, 6), up = randomValues<T>(tokens * stride);
  Values ref(tokens * features);
  for (i64 t = 0; t < tokens; ++t)
    for (i64 i = 0; i < features; ++i)
      ref[t * features + i] = activate(act, gate[t * stride + i]) *
                              (packed ? gate[t * stride + features + i] : up[t * stride + i]);
  GatedActivationParams p{};
  const T *gateBuffer = device.upload<T>(gate);
  p.gate = gateBuffer;
  p.up = packed ? gateBuffer + features : device.upload<T>(up);
  p.output = device.output(sizeof(T) * ref.size());
  p.tokens = tokens;
  p.features = features;
  p.gateRowStride = p.upRowStride = stride;
  p.activation = act;
  infer_gated_activation<T><<<unsigned(tokens), kRowThreads>>>(p);
  const char *names[] = {"silu", "gelu", "gelu_tanh"};
  compare(std::string("gated_activation<") + TypeInfo<T>::name + ">" +
              shape(" tokens %lld features %lld %s %s", tokens, features,
                    packed ? "packed" : "separate", names[act]),
          device, static_cast<T *>(p.output), ref);
}

void testCopy(i64 rows, i64 inFeatures, i64 offset, i64 length, i64 elementBytes) {
  Device device;
  std::vector<unsigned char> input(rows * inFeatures * elementBytes), ref, got;
  for (unsigned char &c : input)
    c = static_cast<unsigned char>(rng());
  for (i64 r = 0; r < rows; ++r) {
    auto begin = input.begin() + (r * inFeatures + offset) * elementBytes;
    ref.insert(ref.end(), begin, begin + length * elementBytes);
  }
  CopyParams p{};
  p.input = device.bytes(input.data(), input.size());
  p.output = device.output(ref.size());
  p.rows = rows;
  p.inFeatures = inFeatures;
  p.offset = offset;
  p.length = length;
  p.elementBytes = elementBytes;
  infer_copy<<<unsigned(rows), kRowThreads>>>(p);
  bool ok = device.finished();
  bool guard = ok && device.download(p.output, ref.size(), got);
  size_t mismatches = 0;
  for (size_t i = 0; ok && i < ref.size(); ++i)
    mismatches += got[i] != ref[i];
  record(shape("copy rows %lld bytes %lld elements [%lld, %lld) of %lld%s", rows, elementBytes,
               offset, offset + length, inFeatures, ok && !guard ? " [wrote past the end]" : ""),
         ok && guard && mismatches == 0, ok ? double(mismatches) : INFINITY, 0);
}

template <typename T, typename W> void testRowFamilies() {
  const i64 embeddingShapes[][3] = {{1, 1, 64},   {1, 7, 60},     {1, 7, 2048},
                                    {3, 100, 64}, {3, 100, 2048}, {1, 300, 60}};
  for (const auto &s : embeddingShapes)
    for (bool withPositions : {false, true})
      testEmbedding<T, W>(s[0], s[1], s[2], withPositions);
  int index = 0;
  for (const RowShape &s : kRowShapes) {
    testRmsNorm<T, W>(s, index % 2 ? 1.f : 0.f);
    testLayerNorm<T, W>(s, index++ % 2 == 0);
  }
  // The compiled block and a narrower one (more chunks a thread).
  for (const RotaryCase &c : kRotaryCases)
    for (int threads : {kRowThreads, 32})
      testRotary<T, W>(c, threads);
}

template <typename T> void testGatedActivations() {
  const i64 shapes[][2] = {{1, 60}, {7, 64}, {7, 2048}, {300, 60}, {300, 2048}};
  for (const auto &s : shapes)
    for (bool packed : {true, false})
      for (int act = 0; act < 3; ++act)
        testGatedActivation<T>(s[0], s[1], packed, act);
}

} // namespace

/// Mean microseconds of 50 launches of `launch`.
template <typename Launch> double timeUs(Launch launch) {
  return 1000.0 * infer::kerneltest::timeMs(launch, 50);
}

/// Prefill-sized launches (Llama-3-8B and TinyLlama at 2,048 tokens, bf16)
/// at several block sizes: how far the row kernels are from HBM bandwidth
/// (bytes read + written / 4.3 TB/s).
void timeRowKernels() {
  const int blockSizes[] = {64, 128, 256, 512, 1024};
  auto report = [](const char *what, int threads, double us, double bytes) {
    std::printf("timing %-44s block %4d: %7.2f us, %6.0f GB/s (floor %.2f us at 4.3 TB/s)\n",
                what, threads, us, bytes / us * 1e-3, bytes / 4.3e6);
  };
  const i64 tokens = 2048;
  for (i64 hidden : {4096LL, 2048LL}) {
    Device device;
    RmsNormParams p{};
    p.input = device.output(sizeof(bf16) * tokens * hidden);
    p.weight = device.output(sizeof(bf16) * hidden);
    p.output = device.output(sizeof(bf16) * tokens * hidden);
    cudaMemset(const_cast<void *>(p.input), 0, sizeof(bf16) * tokens * hidden);
    cudaMemset(const_cast<void *>(p.weight), 0, sizeof(bf16) * hidden);
    p.rows = tokens;
    p.features = hidden;
    p.epsilon = 1e-5f;
    char what[96];
    std::snprintf(what, sizeof what, "rms_norm bf16 %lld x %lld", tokens, hidden);
    for (int threads : blockSizes)
      report(what, threads,
             timeUs([&] { infer_rms_norm<bf16, bf16><<<unsigned(tokens), threads>>>(p); }),
             4.0 * tokens * hidden);
  }
  // Packed qkv rows (q and k heads rotated, v heads copied when written to
  // another buffer, as compiled steps do; untouched in place), positions
  // 0 .. tokens - 1, angles from inv_freq (sincosf) or from a cos/sin cache.
  struct Qkv {
    i64 heads, kvHeads, headDim;
  };
  struct RotaryTiming {
    bool cached, inPlace;
  };
  for (Qkv m : {Qkv{32, 8, 128}, Qkv{32, 4, 64}}) {
    for (RotaryTiming r : {RotaryTiming{false, false}, RotaryTiming{false, true},
                           RotaryTiming{true, true}}) {
      const bool cached = r.cached;
      Device device;
      const i64 numHeads = m.heads + 2 * m.kvHeads, half = m.headDim / 2;
      RotaryParams p{};
      const size_t rowBytes = sizeof(bf16) * numHeads * m.headDim;
      void *qkv = device.output(rowBytes * tokens);
      cudaMemset(qkv, 0, rowBytes * tokens);
      p.input = qkv;
      p.output = r.inPlace ? qkv : device.output(rowBytes * tokens);
      std::vector<i64> positions(tokens);
      for (i64 t = 0; t < tokens; ++t)
        positions[t] = t;
      p.positions = device.upload(positions);
      Values invFreq(half), table(tokens * half, 0.5);
      for (i64 i = 0; i < half; ++i)
        invFreq[i] = 1.0 / std::pow(500000.0, double(2 * i) / double(m.headDim));
      if (cached) {
        p.cosCache = device.upload<float>(table);
        p.sinCache = device.upload<float>(table);
        p.cacheRows = tokens;
      } else {
        p.invFreq = device.upload<float>(invFreq);
      }
      p.tokens = tokens;
      p.seq = tokens;
      p.numHeads = numHeads;
      p.rotatedHeads = m.heads + m.kvHeads;
      p.headDim = m.headDim;
      p.rotaryDim = m.headDim;
      p.positionBatch = 1;
      char what[96];
      std::snprintf(what, sizeof what, "rotary bf16 %lld x %lld/%lld heads x %lld %s%s", tokens,
                    p.rotatedHeads, numHeads, m.headDim, cached ? "cos/sin cache" : "inv_freq",
                    r.inPlace ? " in place" : "");
      // Bytes read and written: the rotated heads in place, every head otherwise.
      const double bytes = 4.0 * tokens * (r.inPlace ? p.rotatedHeads : numHeads) * m.headDim;
      for (int threads : blockSizes)
        report(what, threads,
               timeUs([&] { infer_rotary<bf16, float><<<unsigned(tokens), threads>>>(p); }),
               bytes);
    }
  }
  for (i64 features : {14336LL, 5632LL}) {
    Device device;
    GatedActivationParams p{};
    void *gateUp = device.output(sizeof(bf16) * tokens * 2 * features);
    cudaMemset(gateUp, 0, sizeof(bf16) * tokens * 2 * features);
    p.gate = gateUp;
    p.up = static_cast<bf16 *>(gateUp) + features;
    p.output = device.output(sizeof(bf16) * tokens * features);
    p.tokens = tokens;
    p.features = features;
    p.gateRowStride = p.upRowStride = 2 * features;
    char what[96];
    std::snprintf(what, sizeof what, "gated_activation bf16 %lld x %lld packed", tokens, features);
    for (int threads : blockSizes)
      report(what, threads,
             timeUs([&] { infer_gated_activation<bf16><<<unsigned(tokens), threads>>>(p); }),
             6.0 * tokens * features);
  }
}

int main(int argc, char **argv) {
  // --no-timings: the checks alone (e.g. under compute-sanitizer).
  const bool timings = !(argc > 1 && std::strcmp(argv[1], "--no-timings") == 0);
  if (!infer::kerneltest::haveDevice())
    return 77;
  testRowFamilies<float, float>();
  testRowFamilies<bf16, bf16>();
  testRowFamilies<bf16, float>();
  testRowFamilies<__half, __half>();
  testGatedActivations<float>();
  testGatedActivations<bf16>();
  testGatedActivations<__half>();
  for (i64 elementBytes : {1, 2, 4, 8}) {
    testCopy(7, 60, 3, 40, elementBytes);    // slice, odd offset
    testCopy(300, 64, 16, 32, elementBytes); // slice, aligned offset
    testCopy(7, 60, 0, 60, elementBytes);    // whole rows (reshape)
    testCopy(3, 2048, 0, 2048, elementBytes);
    testCopy(1, 4097, 1, 4095, elementBytes);
  }
  if (timings)
    timeRowKernels();
  std::printf("%s: %d failed\n", failures ? "FAILED" : "OK", failures);
  return failures ? 1 : 0;
}
