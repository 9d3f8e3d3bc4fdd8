//===- AttentionKernel.cpp - causal / full attention with grouped KV heads -===//
//
// Packed operand per token: | q0 … q(H-1) | k0 … k(KV-1) | v0 … v(KV-1) |, each
// head_dim wide, or separate q [T, H*D], k and v [batch*kv_seq, KV*D]. Query
// head h reads kv head h / (H / KV). Causal: query i sees keys
// j <= i + kv_seq - seq. Scores, softmax and the weighted sum in double.

#include "runtime/cpu/CpuKernels.h"
#include "runtime/base/ReferenceMath.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace infer::cpu {
using reference::HeadView;

Status runAttention(const LaunchArgs &args) {
  std::vector<const View *> inputs = args.all(artifact::ROLE_INPUTS);
  ASSIGN_OR_RETURN(int64_t numHeads, args.intAttr("num_heads"));
  ASSIGN_OR_RETURN(int64_t numKvHeads, args.intAttr("num_kv_heads"));
  ASSIGN_OR_RETURN(int64_t headDim, args.intAttr("head_dim"));
  ASSIGN_OR_RETURN(double scaleAttr, args.floatAttr("scale"));
  bool causal = args.boolAttr("causal", false);
  double softcap = float(args.floatAttr("softcap", 0.0));
  int64_t window = args.intAttr("window", 0);
  double alibi = float(args.floatAttr("alibi", 0.0));
  double scale = float(scaleAttr);
  if (inputs.size() != 1 && inputs.size() != 3)
    return args.error("takes a packed qkv operand or q, k and v");
  if (numHeads <= 0 || numKvHeads <= 0 || headDim <= 0 || numHeads % numKvHeads != 0)
    return args.error("has inconsistent head counts");
  if (window < 0 || (window > 0 && !causal))
    return args.error("has a window that is not a positive count of keys of "
                      "causal attention");
  int64_t batch = args.batch, seq = args.seq;
  int64_t qFeatures = numHeads * headDim, kvFeatures = numKvHeads * headDim;
  HeadView q, k, v;
  int64_t kvSeq = seq;
  if (inputs.size() == 1) {
    int64_t packed = qFeatures + 2 * kvFeatures;
    RETURN_IF_ERROR(args.expectF32(*inputs[0], args.tokens * packed, "packed qkv"));
    q = {inputs[0]->f32(), seq, packed, 0, headDim};
    k = {inputs[0]->f32(), seq, packed, qFeatures, headDim};
    v = {inputs[0]->f32(), seq, packed, qFeatures + kvFeatures, headDim};
  } else {
    RETURN_IF_ERROR(args.expectF32(*inputs[0], args.tokens * qFeatures, "q"));
    if (batch == 0 || inputs[1]->elements % (batch * kvFeatures) != 0)
      return args.error("k is not [batch, kv_seq, num_kv_heads * head_dim]");
    kvSeq = inputs[1]->elements / (batch * kvFeatures);
    RETURN_IF_ERROR(args.expectF32(*inputs[1], batch * kvSeq * kvFeatures, "k"));
    RETURN_IF_ERROR(args.expectF32(*inputs[2], batch * kvSeq * kvFeatures, "v"));
    q = {inputs[0]->f32(), seq, qFeatures, 0, headDim};
    k = {inputs[1]->f32(), kvSeq, kvFeatures, 0, headDim};
    v = {inputs[2]->f32(), kvSeq, kvFeatures, 0, headDim};
  }
  if (seq > 0 && (kvSeq == 0 || (causal && kvSeq < seq)))
    return args.error("query 0 sees no key");
  const View &out = args.outputs[0];
  RETURN_IF_ERROR(args.expectF32(out, args.tokens * qFeatures, "output"));
  // An FP8 KV cache's K and V (the step program's, whose prefill reads them
  // back from the cache): the forward reads them rounded the same way.
  k.cacheScale = float(args.floatAttr("k_cache_scale", 0.0));
  v.cacheScale = float(args.floatAttr("v_cache_scale", 0.0));
  reference::attention(
      q, k, v,
      {batch, seq, kvSeq, numHeads, numKvHeads, headDim, scale, softcap, causal, window, alibi},
      out.mutableF32());
  return okStatus();
}

} // namespace infer::cpu
