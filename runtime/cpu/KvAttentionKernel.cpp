//===- KvAttentionKernel.cpp - paged causal attention over the KV cache ---===//
//
// The step program's exec.kv_attention (docs/kv-cache.md, "The step
// program"). The cache of one layer, f32 on the cpu backend:
//
//   cache[block][0 = K | 1 = V][offset][kv_head][d]      slot = block * block_size + offset
//
// First every new token's K and V are written at its slot; then token j of
// sequence i (rows seq_starts[i] .. seq_starts[i+1], n_i of them) attends to
// positions 0 .. context_lens[i] - n_i + j of its sequence, position p being
// at block_tables[i][p / block_size], offset p % block_size. Scores, softmax
// and the weighted sum in double, keys in position order, as
// AttentionKernel.cpp (so a step reproduces the forward bit for bit). With
// k_cache_scale / v_cache_scale > 0 (--kv-cache-dtype fp8) the cache holds
// K and V rounded to E4M3 of x / scale, times the scale.

#include "runtime/base/Quantization.h"
#include "runtime/base/ReferenceMath.h"
#include "runtime/cpu/CpuKernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace infer::cpu {

Status runKvAttention(const LaunchArgs &args, const KvLayerView &cache) {
  std::vector<const View *> inputs = args.all(artifact::ROLE_INPUTS);
  ASSIGN_OR_RETURN(const View *seqStarts, args.required(artifact::ROLE_SEQ_STARTS));
  ASSIGN_OR_RETURN(const View *contextLens, args.required(artifact::ROLE_CONTEXT_LENS));
  ASSIGN_OR_RETURN(const View *blockTables, args.required(artifact::ROLE_BLOCK_TABLES));
  ASSIGN_OR_RETURN(const View *slotIds, args.required(artifact::ROLE_SLOT_IDS));
  ASSIGN_OR_RETURN(int64_t numHeads, args.intAttr("num_heads"));
  ASSIGN_OR_RETURN(int64_t numKvHeads, args.intAttr("num_kv_heads"));
  ASSIGN_OR_RETURN(int64_t headDim, args.intAttr("head_dim"));
  ASSIGN_OR_RETURN(int64_t blockSize, args.intAttr("block_size"));
  ASSIGN_OR_RETURN(double scaleAttr, args.floatAttr("scale"));
  double softcap = float(args.floatAttr("softcap", 0.0));
  int64_t window = args.intAttr("window", 0);
  double alibi = float(args.floatAttr("alibi", 0.0));
  const float kCacheScale = float(args.floatAttr("k_cache_scale", 0.0));
  const float vCacheScale = float(args.floatAttr("v_cache_scale", 0.0));
  if (!(kCacheScale >= 0) || !(vCacheScale >= 0))
    return args.error("has a negative or NaN KV cache scale");
  double scale = float(scaleAttr);
  if (inputs.size() != 1 && inputs.size() != 3)
    return args.error("takes a packed qkv operand or q, k and v");
  if (numHeads <= 0 || numKvHeads <= 0 || headDim <= 0 || numHeads % numKvHeads != 0)
    return args.error("has inconsistent head counts");
  if (window < 0)
    return args.error("has a negative window");
  if (blockSize != cache.blockSize || numKvHeads != cache.kvHeads || headDim != cache.headDim)
    return args.error("does not match the KV cache's layout");
  for (const View *meta : {seqStarts, contextLens, blockTables, slotIds})
    if (meta->type != artifact::ELEMENT_TYPE_I64)
      return args.error("step metadata must be i64");
  int64_t tokens = args.tokens;
  int64_t qFeatures = numHeads * headDim, kvFeatures = numKvHeads * headDim;
  const float *q, *k, *v;
  int64_t qStride, kvStride;
  if (inputs.size() == 1) {
    int64_t packed = qFeatures + 2 * kvFeatures;
    RETURN_IF_ERROR(args.expectF32(*inputs[0], tokens * packed, "packed qkv"));
    q = inputs[0]->f32();
    k = q + qFeatures;
    v = q + qFeatures + kvFeatures;
    qStride = kvStride = packed;
  } else {
    RETURN_IF_ERROR(args.expectF32(*inputs[0], tokens * qFeatures, "q"));
    RETURN_IF_ERROR(args.expectF32(*inputs[1], tokens * kvFeatures, "k"));
    RETURN_IF_ERROR(args.expectF32(*inputs[2], tokens * kvFeatures, "v"));
    q = inputs[0]->f32();
    k = inputs[1]->f32();
    v = inputs[2]->f32();
    qStride = qFeatures;
    kvStride = kvFeatures;
  }
  const View &out = args.outputs[0];
  RETURN_IF_ERROR(args.expectF32(out, tokens * qFeatures, "output"));
  if (slotIds->elements < tokens || seqStarts->elements < 1)
    return args.error("has too few slot ids or sequence starts");
  int64_t numSeqs = seqStarts->elements - 1;
  if (contextLens->elements < numSeqs || numSeqs <= 0 || blockTables->elements % numSeqs != 0)
    return args.error("has inconsistent step metadata sizes");
  int64_t maxBlocks = blockTables->elements / numSeqs;

  // Element (block, kv, offset, head, d) of the layer's cache.
  int64_t rowFloats = kvFeatures, halfFloats = blockSize * rowFloats;
  auto at = [&](int64_t block, int64_t which, int64_t offset) {
    return cache.data + (block * 2 + which) * halfFloats + offset * rowFloats;
  };
  for (int64_t t = 0; t < tokens; ++t) {
    int64_t slot = slotIds->i64()[t];
    int64_t block = slot / blockSize;
    if (slot < 0 || block < 1 || block >= cache.numBlocks)
      return args.error("slot " + std::to_string(slot) + " of token " + std::to_string(t) +
                        " is outside the KV cache's blocks 1.." +
                        std::to_string(cache.numBlocks - 1));
    std::memcpy(at(block, 0, slot % blockSize), k + t * kvStride, sizeof(float) * kvFeatures);
    std::memcpy(at(block, 1, slot % blockSize), v + t * kvStride, sizeof(float) * kvFeatures);
    // An FP8 KV cache holds E4M3 values: the cpu cache stays f32 but holds
    // exactly those (quant::roundThroughE4M3), as the forward reads them.
    for (auto [which, scale] : {std::pair{0, kCacheScale}, std::pair{1, vCacheScale}})
      for (float *x = at(block, which, slot % blockSize), *end = x + kvFeatures;
           scale > 0 && x < end; ++x)
        *x = quant::roundThroughE4M3(*x, scale);
  }

  float *dst = out.mutableF32();
  int64_t group = numHeads / numKvHeads;
  std::vector<double> scores;
  std::vector<const float *> keys, values;
  for (int64_t s = 0; s < numSeqs; ++s) {
    int64_t begin = seqStarts->i64()[s], end = seqStarts->i64()[s + 1];
    if (begin == end)
      continue;
    int64_t contextLen = contextLens->i64()[s], n = end - begin;
    if (begin < 0 || end < begin || end > tokens || contextLen < n ||
        contextLen > maxBlocks * blockSize)
      return args.error("sequence " + std::to_string(s) + " has rows [" + std::to_string(begin) +
                        ", " + std::to_string(end) + ") and context length " +
                        std::to_string(contextLen) + ", which do not fit");
    const int64_t *table = blockTables->i64() + s * maxBlocks;
    keys.resize(static_cast<size_t>(contextLen));
    values.resize(static_cast<size_t>(contextLen));
    for (int64_t p = 0; p < contextLen; ++p) {
      int64_t block = table[p / blockSize];
      if (block < 0 || block >= cache.numBlocks)
        return args.error("block " + std::to_string(block) + " of sequence " + std::to_string(s) +
                          " is outside the KV cache");
      keys[p] = at(block, 0, p % blockSize);
      values[p] = at(block, 1, p % blockSize);
    }
    scores.resize(static_cast<size_t>(contextLen));
    for (int64_t j = 0; j < n; ++j) {
      int64_t row = begin + j, visible = contextLen - n + j + 1;
      int64_t first = reference::firstVisibleKey(visible, window);
      for (int64_t h = 0; h < numHeads; ++h) {
        const float *query = q + row * qStride + h * headDim;
        int64_t kvOffset = (h / group) * headDim;
        double slope = alibi * reference::alibiSlope(h, numHeads);
        int64_t position = visible - 1;
        double maximum = -std::numeric_limits<double>::infinity();
        for (int64_t p = first; p < visible; ++p) {
          double dot = 0;
          for (int64_t d = 0; d < headDim; ++d)
            dot += double(query[d]) * double(keys[p][kvOffset + d]);
          double score = dot * scale;
          if (softcap > 0)
            score = softcap * std::tanh(score / softcap);
          score += slope * double(p - position);
          scores[p] = score;
          maximum = std::max(maximum, score);
        }
        double sum = 0;
        for (int64_t p = first; p < visible; ++p) {
          scores[p] = std::exp(scores[p] - maximum);
          sum += scores[p];
        }
        for (int64_t d = 0; d < headDim; ++d) {
          double acc = 0;
          for (int64_t p = first; p < visible; ++p)
            acc += scores[p] * double(values[p][kvOffset + d]);
          dst[row * qFeatures + h * headDim + d] = float(acc / sum);
        }
      }
    }
  }
  return okStatus();
}

} // namespace infer::cpu
