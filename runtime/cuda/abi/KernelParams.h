//===- KernelParams.h - the argument of every generated CUDA kernel -------===//
//
// Shared by the device code (compiled by NVRTC inside infer-compile, so no
// standard headers there) and the runtime's cuda backend (host C++), which
// fills one of these structs per launch and passes it by value as the
// kernel's only parameter. Plain C types only: the layout must be identical
// in both compilers. Pointers are device addresses; an optional operand that
// is absent is nullptr. Sizes are element counts.
//
// Element types are template parameters of the kernels (T: activations,
// W: weights, C: rotary frequencies/caches): one of float, __nv_bfloat16,
// __half. The launch geometry of each family is fixed here too, so the
// compiler (which records grid/block in the artifact) and the kernels agree.
// It and the *Geometry.h headers beside it live under runtime/, below codegen,
// so the runtime includes nothing above it.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_CUDA_ABI_KERNELPARAMS_H
#define INFER_RUNTIME_CUDA_ABI_KERNELPARAMS_H

/// Functions of the geometry headers beside this one, for the kernels (NVRTC,
/// nvcc) and the host alike.
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define INFER_ABI_FN __host__ __device__ inline
#else
#define INFER_ABI_FN inline
#endif

namespace infer {
namespace kernels {

/// Threads per block of the row-wise families (norms, embedding, rotary,
/// gated activation, copy, elementwise): one block per row (token, or
/// (token, head) for per-head norms), grid.x = rows.
constexpr int kRowThreads = 256;

/// out[t] = table[ids[t]] (+ positionTable[positionOffset + pos(t)]), pos(t)
/// = positionIds[t] when given (the step program), else t % seq. ids were
/// range-checked by the runtime on the host. grid.x = tokens.
struct EmbeddingParams {
  const long long *ids;
  const void *table;         // [vocab, hidden] of W
  const void *positionTable; // [positionRows, hidden] of W, or nullptr
  void *output;              // [tokens, hidden] of T
  long long tokens, seq, hidden, positionOffset;
  const long long *positionIds; // [tokens], or nullptr
  /// A step ahead of its predecessor's tokens (docs/kv-cache.md): token
  /// t < *fedCount takes fedIds[t] (the previous step's draws, [>= tokens])
  /// instead of ids[t], a placeholder. Both null otherwise.
  const long long *fedCount;
  const int *fedIds;
};

/// y = x / sqrt(mean(x^2) + epsilon) * (weight + weightOffset), fp32 math.
/// grid.x = rows.
struct RmsNormParams {
  const void *input;  // [rows, features] of T
  const void *weight; // [features] of W
  void *output;       // [rows, features] of T
  long long rows, features;
  float epsilon, weightOffset;
};

/// y = (x - mean) / sqrt(var + epsilon) * scale (+ bias), fp32 math. grid.x = rows.
struct LayerNormParams {
  const void *input; // [rows, features] of T
  const void *scale; // [features] of W
  const void *bias;  // [features] of W, or nullptr
  void *output;
  long long rows, features;
  float epsilon;
};

/// Rotary embedding as runtime/cpu/RotaryKernel.cpp: the first rotatedHeads of
/// numHeads heads turn pairs of their first rotaryDim features (half-split
/// (i, i + half) or interleaved (2i, 2i + 1)) by angle position * invFreq[i]
/// (an f32 product), or by cos/sin cache rows; other features are copied.
/// Without positions, token t is at position t % seq. Caches are indexed by
/// position ([cacheRows, half]) unless perTokenCacheBatch > 0, then by token
/// ([perTokenCacheBatch (1 or batch), seq, half]). grid.x = tokens.
struct RotaryParams {
  const void *input; // [tokens, numHeads * headDim] of T
  void *output;
  const void *invFreq;        // [half] of C, or nullptr
  const void *cosCache;       // of C, or nullptr (then invFreq is set)
  const void *sinCache;       // of C
  const long long *positions; // [positionBatch (1 or batch), seq], or nullptr
  long long tokens, seq, numHeads, rotatedHeads, headDim, rotaryDim;
  long long cacheRows, perTokenCacheBatch, positionBatch;
  int interleaved;
};

/// Softmax attention over whole sequences, causal or not, grouped KV heads:
/// query head h reads kv head h / (numHeads / numKvHeads). Element (b, s, h, d)
/// of q is at q[(b * seq + s) * qRowStride + h * headDim + d] (k and v with
/// kvSeq and their strides; q, k, v may point into one packed qkv buffer).
/// Causal: query i sees keys j <= i + kvSeq - seq, and with window > 0 also
/// j > i + kvSeq - seq - window (on the CUDA-core path only). Scores are
/// dot * scale, then softcap * tanh(score / softcap) when softcap > 0;
/// softmax and accumulation in fp32. output is [tokens, numHeads * headDim].
/// grid = (ceil(seq / kAttentionBlockQ), numHeads, batch),
/// block = kAttentionThreads, dynamic shared memory attentionSharedBytes().
struct AttentionParams {
  const void *q;
  const void *k;
  const void *v;
  void *output;
  long long qRowStride, kRowStride, vRowStride;
  long long batch, seq, kvSeq, numHeads, numKvHeads, headDim;
  float scale, softcap;
  int causal;
  int window;  ///< 0: none
  float alibi; ///< ALiBi's bias factor, 0: none (CUDA-core path only)
  /// > 0 (--kv-cache-dtype fp8): K and V are read rounded through E4M3 at
  /// these scales (infer_attention_round_kv, the ATTENTION's prologue).
  float kCacheScale, vCacheScale;
  int pad;
};

constexpr int kAttentionBlockQ = 128;
constexpr int kAttentionThreads = 256;

/// out = act(gate) * up; activation 0 silu, 1 gelu (erf), 2 gelu_tanh.
/// gate element (t, i) at gate[t * gateRowStride + i], up likewise (a packed
/// [gate | up] buffer passes the same base twice, up offset by features).
/// grid.x = tokens.
struct GatedActivationParams {
  const void *gate;
  const void *up;
  void *output; // [tokens, features] of T
  long long tokens, features, gateRowStride, upRowStride;
  int activation;
};

/// Elements [offset, offset + length) of each row of inFeatures go to
/// consecutive rows of the output; bytes as they are (elementBytes each).
/// grid.x = rows.
struct CopyParams {
  const void *input;
  void *output;
  long long rows, inFeatures, offset, length, elementBytes;
  /// GATHER_ROWS: output row r copies input row rowIndices[r] (checked on
  /// the host); nullptr: row r.
  const long long *rowIndices;
  /// COPY with a map (length entries, offset 0): element f of output row r is
  /// element featureMap[f] of input row r; -1 (or out of range) leaves it.
  const long long *featureMap;
};

/// The step program's paged attention (docs/kv-cache.md, "The step program"),
/// as runtime/cpu/KvAttentionKernel.cpp. One layer's cache, element type T:
///
///   cache[block][0 = K | 1 = V][offset][kvHead][d]     slot = block *
///   blockSize + offset
///
/// First every new token t writes its K and V (rows of q/k/v as in
/// AttentionParams, kvSeq = tokens) at slot slotIds[t] (infer_kv_write, grid.x
/// = tokens); then (infer_kv_attention) token j of sequence i, i.e. packed row
/// seqStarts[i] + j with n_i = seqStarts[i+1] - seqStarts[i] rows, attends
/// causally to positions 0 .. contextLens[i] - n_i + j of its sequence,
/// position p at cache block blockTables[i * maxBlocksPerSeq + p / blockSize],
/// offset p % blockSize; with window > 0 only the last `window` of those
/// positions (general path only). Softmax and accumulation in fp32; softcap as
/// in AttentionParams. Metadata is int64. output is [tokens, numHeads *
/// headDim]. infer_kv_attention grid = (tokens, numKvHeads), block =
/// kKvAttentionThreads, no dynamic shared memory (each block serves the
/// numHeads / numKvHeads query heads that share one KV head, so each K/V row is
/// read once per token).
struct KvAttentionParams {
  const void *q;
  const void *k;
  const void *v;
  void *output;
  void *cache;                  // this layer's cache
  const long long *seqStarts;   // [numSeqs + 1]
  const long long *contextLens; // [numSeqs]
  const long long *blockTables; // [numSeqs, maxBlocksPerSeq]
  const long long *slotIds;     // [tokens]
  long long qRowStride, kRowStride, vRowStride;
  long long tokens, numSeqs, maxBlocksPerSeq, blockSize;
  long long numHeads, numKvHeads, headDim;
  float scale, softcap;
  long long window; ///< 0: none
  float alibi;      ///< ALiBi's bias factor, 0: none (general path only)
  /// > 0 (--kv-cache-dtype fp8): the cache holds E4M3 bytes of K / kCacheScale
  /// and V / vCacheScale (infer_kv_write_fp8, infer_kv_attention_fp8).
  float kCacheScale, vCacheScale;
  float pad;
  /// infer_kv_attention's split-KV partials and per-unit counters
  /// (KvDecodeGeometry.h gives the grid and their sizes):
  /// runtime-owned, zeroed once at allocation and left zeroed by every
  /// launch. Null: the kernel runs one split per unit whatever grid.z.
  float *workspace;
  unsigned int *counters;
};

constexpr int kKvAttentionThreads = 128;

/// infer_rotary_kv_write<T, C> (kernels/KvAttention.cuh): a rotary launch
/// and the KV write of the KV_ATTENTION after it, one block per token.
/// `kv.k` and `kv.v` point into `rotary.output`.
struct RotaryKvWriteParams {
  RotaryParams rotary;
  KvAttentionParams kv;
};

/// Small-T GEMM for decode (kernels/Gemv.cuh, infer_gemv<T>): out[t, n] =
/// sum_k input[t, k] * W(k, n) (+ bias[n]) (+ residual[t, n]) for t < rows
/// <= kGemvMaxRows, W stored [k, n] row-major (transposed = 0) or [n, k]
/// (transposed = 1), fp32 accumulation, one rounding to T at the end. The
/// weights are read once for all rows. `workspace` (fp32) and `counters` are
/// runtime-owned, zeroed once at allocation and left zeroed by every launch
/// (sizes: GemvGeometry.h); launches on one stream share them.
constexpr int kGemvMaxRows = 8;
struct GemvParams {
  const void *input;    // [rows, k] of T
  const void *weight;   // [k, n] or [n, k] of T
  const void *bias;     // [n] of T, or nullptr
  const void *residual; // [rows, n] of T, or nullptr (may not alias output)
  void *output;         // [rows, n] of T
  float *workspace;
  unsigned int *counters;
  long long rows, k, n;
  int transposed;
  /// Decode fusion (infer_gemv_fused<T, prologue>, [k, n] weights only): the
  /// launch before the GEMM, folded into the input reads.
  /// 0: none (input rows of k elements). 1: rms_norm, as infer_rms_norm: row
  /// t becomes x / sqrt(mean(x^2) + normEpsilon) * (normWeight +
  /// normWeightOffset), x = input row t, computed as round_T(x * (normWeight +
  /// normWeightOffset)) times the weights, scaled by 1 / rms in fp32 at the
  /// end (the statistic comes from the same input reads). 2: gated activation, as
  /// infer_gated_activation: row t is round_T(act(gate) * up), gate = input
  /// row t (stride inputRowStride), up = `up` row t (stride upRowStride).
  int prologue, activation; // activation: 0 silu, 1 gelu, 2 gelu_tanh
  const void *normWeight;   // [k] of T
  const void *up;
  float normEpsilon, normWeightOffset;
  long long inputRowStride, upRowStride;
  /// Bytes of its own weights each block asks L2 for before it waits for the
  /// previous kernel (Gemv.cuh, prefetchWeightsThenWaitForPreviousKernel); 0
  /// when the launch is not programmatic (nothing to overlap).
  long long prefetchBytes;
  /// infer_gemv_rows<..., kArgmax = true> (the LM head of a step that
  /// samples on the device; CudaLaunch.folds_argmax): when not null, the
  /// largest argmaxCandidate (Common.cuh) of the rounded outputs is
  /// atomicMax'ed into *argmax, which must start at 0 (infer_sample reads it
  /// as SampleParams::argmax and sets it back to 0).
  unsigned long long *argmax;
};

/// Device sampling (kernels/Sampling.cuh, infer_sample<T>) with the
/// semantics of runtime/sampling/Sampler.h, one row per block (grid.x =
/// rows): temperature[r] == 0 takes the argmax (lowest id on ties, NaN never
/// wins); otherwise softmax(logits / temperature) restricted to the topK[r]
/// most likely ids (0: all), then to the nucleus topP[r] (1: all), and the id
/// whose cumulative probability (in id order over the kept set) first
/// exceeds uniform[r] * kept mass. The uniforms come from the host's
/// per-request RNG, so a request's draws do not depend on its batch.
constexpr int kSampleThreads = 1024;
struct SampleParams {
  const void *logits; // [rows, vocab] of T
  long long rows, vocab;
  const float *temperature; // [rows]
  const int *topK;          // [rows]
  const float *topP;        // [rows]
  const float *uniform;     // [rows], each in [0, 1)
  int *tokens;              // [rows], the result
  /// [rows] in pinned host memory mapped into the device, or null: the
  /// result again, so that no copy back follows the step (CudaStep.cpp).
  int *hostTokens;
  /// [rows] or null: each row's argmax candidate folded into the LM head
  /// (GemvParams::argmax), read instead of scanning the row and set back to
  /// 0. Greedy rows then read nothing else.
  unsigned long long *argmax;
};

/// A generated elementwise kernel (one per exec.elementwise launch): inputs
/// and outputs in the launch's order. One thread per output element,
/// grid.x = ceil(tokens * elementsPerToken / kRowThreads).
constexpr int kMaxElementwiseOperands = 16;
struct ElementwiseParams {
  const void *inputs[kMaxElementwiseOperands];
  void *outputs[kMaxElementwiseOperands];
  long long batch, seq, tokens;
};

/// infer_qkv_decode<T, C, kMaxDim> (kernels/QkvDecode.cuh): a batch-1
/// decode layer's rms_norm + qkv GEMV (`gemv`, infer_gemv_rows<T, 1>) and the
/// infer_kv_decode after it (`decode`) in one grid of kQkvDecodeBlocks blocks (GemvGeometry.h)
/// of kGemvRowsThreads threads (the first attentionY x attentionZ run the
/// attention). The GEMV also writes each output, tagged, to `exchange` ([n]
/// words), which the attention blocks poll; *stepSerial changes every step.
constexpr int kQkvDecodeSplits = 2;
/// The longest context a step may have for the runtime to run
/// infer_qkv_decode (one warp step of 32 keys per warp of one split, as
/// infer_kv_decode splits it there): with its kQkvDecodeSplits splits it was
/// slower at 1,000 positions (H200, TinyLlama, 1,000 in / 128 out: 847.5
/// against 1,035.6 tok/s; bench/results/tinyllama-1.1b-serving.md, session 31).
constexpr long long kQkvDecodeMaxContext = 256;
struct QkvDecodeParams {
  GemvParams gemv;
  RotaryKvWriteParams decode;
  unsigned *exchange;
  const unsigned long long *stepSerial;
  unsigned layer;                  // the launch's number in the step (its tag's low byte)
  unsigned attentionY, attentionZ; // infer_kv_decode's grid y and z
  unsigned lateTrigger;            // experiment: let the next kernel launch after the poll
};

/// exec.quantized_gemm (kernels/QuantizedGemm.cuh, infer_quantized_gemm<T,
/// kScheme, kVector>): out[t, j] = sum_i x[t, i] * W[j, i] (+ bias[j]) (+
/// residual[t, j]), W the [n, k] weight of runtime/base/Quantization.h's
/// layout (int4: two a byte, scales per row and group; fp8: E4M3 bytes, a
/// scale per row, the activations rounded to E4M3 per token). Steps of up to
/// kQuantizedGemmTokens tokens; kQuantizedGemmRowsPerWarp output rows a warp,
/// kQuantizedGemmRows a block (grid.x); a block stages the inputs of
/// quantizedGemmTileTokens(k) tokens (grid.y) as floats in dynamic shared
/// memory, so each weight is read once per tile.
constexpr int kQuantizedGemmWarps = 8;
constexpr int kQuantizedGemmThreads = kQuantizedGemmWarps * 32;
constexpr int kQuantizedGemmTokens = 8;
constexpr int kQuantizedGemmRowsPerWarp = 4;
constexpr int kQuantizedGemmRows = kQuantizedGemmWarps * kQuantizedGemmRowsPerWarp;
// fp8's warp w finds the scale of the tile's token w.
static_assert(kQuantizedGemmWarps >= kQuantizedGemmTokens, "a warp per token of a tile");
/// The staging's budget: tokens of k floats that fit 48 KiB (at least one,
/// at most kQuantizedGemmTokens), and the largest k one token may have.
constexpr long long kQuantizedGemmStageBytes = 48 * 1024;
constexpr long long kQuantizedGemmMaxK = 48 * 1024;
/// Warps a block of the one-token instance (batch-1 decode) has: 4 (16 rows)
/// where 8 would leave fewer than two blocks an SM of an H100 / H200 (132).
INFER_ABI_FN int quantizedGemmSingleTokenWarps(long long n) {
  return n < 2 * 132 * kQuantizedGemmRows ? 4 : kQuantizedGemmWarps;
}
INFER_ABI_FN int quantizedGemmTileTokens(long long k) {
  long long tokens = kQuantizedGemmStageBytes / (4 * (k > 0 ? k : 1));
  return int(tokens < 1 ? 1 : tokens > kQuantizedGemmTokens ? kQuantizedGemmTokens : tokens);
}
INFER_ABI_FN long long quantizedGemmSharedBytes(long long k) {
  return 4 * k * quantizedGemmTileTokens(k);
}
struct QuantizedGemmParams {
  const void *input;      // [tokens, k] of T
  const unsigned char *q; // int4: [n, k / 2]; int8, fp8, fp8-weight: [n, k]
  const float *scales;    // int4, int8: [n, k / group]; fp8, fp8-weight: [n]
  const float *zeros;     // int4, int8: shaped as the scales (w = (q - zero) * scale), or nullptr
  const void *inputScale; // [k] (AWQ: x[t, i] / inputScale[i]), or nullptr
  int inputScaleType;     // its art::ElementType: 1 f32, 2 f16, 3 bf16
  int pad;
  const void *bias;     // [n] of T, or nullptr
  const void *residual; // [tokens, n] of T, or nullptr (may be the output)
  void *output;         // [tokens, n] of T
  long long tokens, n, k, group;
};

/// exec.moe as runtime/base/ReferenceMoe.h (kernels/Moe.cuh, geometry in
/// MoeGeometry.h): infer_moe_route (grid.x = tokens) writes each pair's
/// expert and routing weight (pair p = t * topK + s, best expert first);
/// infer_moe_sort (one block) groups the pairs by expert; infer_moe_gate_up
/// and infer_moe_down (grid (row tiles, experts)) run each expert over its
/// pairs; infer_moe_combine (grid.x = tokens) sums a token's pairs in slot
/// order. The workspace parts (runtime/base/MoeWorkspace.h) are f32/int32.
struct MoeParams {
  const void *input;    // [tokens, hidden] of T
  const void *router;   // [experts, hidden] of W
  const void *gateUp;   // [experts, 2 * inter, hidden] of W: gate rows, then up rows
  const void *down;     // [experts, hidden, inter] of W
  void *output;         // [tokens, hidden] of T
  int *expertIds;       // [tokens * topK]
  float *pairWeights;   // [tokens * topK]
  int *pairsByExpert;   // [tokens * topK]
  int *expertStarts;    // [experts + 1]
  float *activations;   // [tokens * topK, inter]
  float *expertOutputs; // [tokens * topK, hidden]
  long long tokens, hidden, inter, experts, topK;
  int normalize, sigmoid; // DeepSeek-V3: sigmoid scores (graph.moe's scoring)
  int groups, topkGroups; // only the topkGroups best of groups equal groups
  float scale;            // times the (normalized) weights
  int scoreBiasType;      // 0: none; else scoreBias's art::ElementType (f32, f16, bf16)
  const void *scoreBias;  // [experts]: added to the scores to choose
};

} // namespace kernels
} // namespace infer

#endif // INFER_RUNTIME_CUDA_ABI_KERNELPARAMS_H
