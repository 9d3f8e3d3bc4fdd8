//===- RotaryKernel.cpp - rotary position embedding of the first heads ----===//
//
// As graph.rotary (dialects/graph/Interpreter/FusedKernels.cpp): the first
// `rotated_heads` of `num_heads` heads (head_dim wide) turn pairs of their
// first `rotary_dim` features, half-split (i, i + half) or interleaved
// (2i, 2i + 1), by angle position * inv_freq[i] (an f32 product, as the ONNX
// graph forms it), or by cos/sin cache rows. Without `positions`, token s of
// every sequence is at position s. The other features are copied.

#include "runtime/cpu/CpuKernels.h"
#include "runtime/base/ReferenceMath.h"

#include <cmath>
#include <cstring>

namespace infer::cpu {

Status runRotary(const LaunchArgs &args) {
  ASSIGN_OR_RETURN(const View *input, args.required(artifact::ROLE_INPUT));
  const View *invFreq = args.operand(artifact::ROLE_INV_FREQ);
  const View *cosCache = args.operand(artifact::ROLE_COS_CACHE);
  const View *sinCache = args.operand(artifact::ROLE_SIN_CACHE);
  const View *positions = args.operand(artifact::ROLE_POSITIONS);
  ASSIGN_OR_RETURN(int64_t numHeads, args.intAttr("num_heads"));
  ASSIGN_OR_RETURN(int64_t rotatedHeads, args.intAttr("rotated_heads"));
  ASSIGN_OR_RETURN(int64_t headDim, args.intAttr("head_dim"));
  ASSIGN_OR_RETURN(int64_t rotaryDim, args.intAttr("rotary_dim"));
  bool interleaved = args.boolAttr("interleaved", false);
  if (numHeads <= 0 || headDim <= 0 || rotatedHeads < 0 || rotatedHeads > numHeads ||
      rotaryDim <= 0 || rotaryDim > headDim || rotaryDim % 2 != 0)
    return args.error("has inconsistent head attributes");
  if (bool(cosCache) != bool(sinCache) || bool(invFreq) == bool(cosCache))
    return args.error("takes inv_freq or the cos and sin caches");
  int64_t features = numHeads * headDim, half = rotaryDim / 2;
  int64_t batch = args.batch, seq = args.seq;
  RETURN_IF_ERROR(args.expectF32(*input, args.tokens * features, "input"));
  const View &out = args.outputs[0];
  RETURN_IF_ERROR(args.expectF32(out, args.tokens * features, "output"));
  if (invFreq)
    RETURN_IF_ERROR(args.expectF32(*invFreq, half, "inv_freq"));
  // Caches: [rows, half] indexed by position, or per token ([batch or 1, seq, half]).
  bool perToken = false;
  int64_t cacheRows = 0, cacheBatch = 1;
  if (cosCache) {
    RETURN_IF_ERROR(args.expectF32(*sinCache, cosCache->elements, "sin cache"));
    RETURN_IF_ERROR(args.expectF32(*cosCache, cosCache->elements, "cos cache"));
    if (cosCache->elements % half != 0)
      return args.error("caches are not rows of rotary_dim / 2 = " + std::to_string(half));
    perToken = cosCache->isBuffer || cosCache->shape.size() == 3;
    if (perToken) {
      cacheBatch = cosCache->elements / (seq * half);
      if (cosCache->elements % (seq * half) != 0 || (cacheBatch != 1 && cacheBatch != batch))
        return args.error("per-token caches must be [batch or 1, seq, rotary_dim / 2]");
      if (positions)
        return args.error("per-token caches take no positions");
    }
    cacheRows = cosCache->elements / half;
  }
  int64_t positionBatch = 1;
  if (positions) {
    if (positions->type != artifact::ELEMENT_TYPE_I64 ||
        (positions->elements != seq && positions->elements != args.tokens))
      return args.error("positions must be i64 [batch or 1, seq]");
    positionBatch = positions->elements / seq;
  }

  std::memcpy(out.data, input->data, sizeof(float) * static_cast<size_t>(args.tokens * features));
  const float *src = input->f32();
  float *dst = out.mutableF32();
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t s = 0; s < seq; ++s) {
      int64_t position = positions ? positions->i64()[(positionBatch == 1 ? 0 : b) * seq + s] : s;
      int64_t row = 0;
      if (perToken) {
        row = (cacheBatch == 1 ? 0 : b) * seq + s;
      } else if (cosCache) {
        if (position < 0 || position >= cacheRows)
          return invalidArgumentError("position " + std::to_string(position) +
                                      " is outside the rotary caches' " +
                                      std::to_string(cacheRows) + " rows");
        row = position;
      }
      int64_t base = (b * seq + s) * features;
      reference::rotateToken(src + base, dst + base, rotatedHeads, headDim, half, interleaved,
                             position, invFreq ? invFreq->f32() : nullptr,
                             cosCache ? cosCache->f32() + row * half : nullptr,
                             sinCache ? sinCache->f32() + row * half : nullptr);
    }
  }
  return okStatus();
}

} // namespace infer::cpu
