//===- KernelParamsPacking.cpp --------------------------------------------===//

#include "runtime/cuda/KernelParamsPacking.h"

#include "runtime/artifact/ArtifactFormat.h"
#include "runtime/base/MoeWorkspace.h"
#include "runtime/base/Quantization.h"
#include "runtime/base/ReferenceMoe.h"
#include "runtime/cuda/abi/KernelParams.h"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace infer::cuda {
namespace art = artifact;
namespace k = kernels;
namespace {

template <typename Params> PackedParams pack(const Params &params) {
  PackedParams packed;
  packed.bytes.resize(sizeof(Params));
  std::memcpy(packed.bytes.data(), &params, sizeof(Params));
  return packed;
}

/// k_cache_scale / v_cache_scale: 0 (none) or a positive finite scale.
StatusOr<float> cacheScale(const exec::LaunchArgs &args, const char *name) {
  float scale = float(args.floatAttr(name, 0.0));
  if (!(scale >= 0) || !std::isfinite(scale))
    return args.error(std::string("has a ") + name + " that is not a finite scale >= 0");
  return scale;
}

const char *offsetBy(const exec::View &view, int64_t elements) {
  return static_cast<const char *>(view.data) +
         elements * static_cast<int64_t>(art::elementSize(view.type));
}

StatusOr<PackedParams> embedding(const exec::LaunchArgs &args, const StepContext *step) {
  ASSIGN_OR_RETURN(const exec::View *table, args.required(art::ROLE_TABLE));
  ASSIGN_OR_RETURN(const exec::View *ids, args.required(art::ROLE_IDS));
  ASSIGN_OR_RETURN(int64_t hidden, args.intAttr("hidden"));
  if (ids->type != art::ELEMENT_TYPE_I64 || ids->elements != args.tokens)
    return args.error("ids must be i64 with one id per token");
  const exec::View *positions = args.operand(art::ROLE_POSITION_TABLE);
  k::EmbeddingParams p{};
  p.ids = static_cast<const long long *>(ids->data);
  p.table = table->data;
  p.positionTable = positions ? positions->data : nullptr;
  p.output = args.outputs[0].data;
  p.tokens = args.tokens;
  p.seq = args.seq;
  p.hidden = hidden;
  p.positionOffset = args.intAttr("position_offset", 0);
  const exec::View *positionIds = args.operand(art::ROLE_POSITION_IDS);
  p.positionIds = positionIds ? static_cast<const long long *>(positionIds->data) : nullptr;
  if (step) {
    p.fedCount = step->fedCount;
    p.fedIds = step->fedIds;
  }
  return pack(p);
}

StatusOr<PackedParams> rmsNorm(const exec::LaunchArgs &args) {
  ASSIGN_OR_RETURN(const exec::View *input, args.required(art::ROLE_INPUT));
  ASSIGN_OR_RETURN(const exec::View *weight, args.required(art::ROLE_WEIGHT));
  ASSIGN_OR_RETURN(int64_t features, args.intAttr("features"));
  ASSIGN_OR_RETURN(double epsilon, args.floatAttr("epsilon"));
  const exec::View &out = args.outputs[0];
  if (features <= 0 || out.elements % features != 0 || input->elements != out.elements ||
      weight->elements != features)
    return args.error("operands are not rows of features = " + std::to_string(features));
  k::RmsNormParams p{};
  p.input = input->data;
  p.weight = weight->data;
  p.output = out.data;
  p.rows = out.elements / features;
  p.features = features;
  p.epsilon = float(epsilon);
  p.weightOffset = float(args.floatAttr("weight_offset", 0.0));
  return pack(p);
}

StatusOr<PackedParams> layerNorm(const exec::LaunchArgs &args) {
  ASSIGN_OR_RETURN(const exec::View *input, args.required(art::ROLE_INPUT));
  ASSIGN_OR_RETURN(const exec::View *scale, args.required(art::ROLE_SCALE));
  ASSIGN_OR_RETURN(int64_t features, args.intAttr("features"));
  ASSIGN_OR_RETURN(double epsilon, args.floatAttr("epsilon"));
  const exec::View &out = args.outputs[0];
  if (features <= 0 || out.elements % features != 0 || input->elements != out.elements ||
      scale->elements != features)
    return args.error("operands are not rows of features = " + std::to_string(features));
  const exec::View *bias = args.operand(art::ROLE_BIAS);
  k::LayerNormParams p{};
  p.input = input->data;
  p.scale = scale->data;
  p.bias = bias ? bias->data : nullptr;
  p.output = out.data;
  p.rows = out.elements / features;
  p.features = features;
  p.epsilon = float(epsilon);
  return pack(p);
}

StatusOr<PackedParams> rotary(const exec::LaunchArgs &args) {
  ASSIGN_OR_RETURN(const exec::View *input, args.required(art::ROLE_INPUT));
  const exec::View *invFreq = args.operand(art::ROLE_INV_FREQ);
  const exec::View *cosCache = args.operand(art::ROLE_COS_CACHE);
  const exec::View *sinCache = args.operand(art::ROLE_SIN_CACHE);
  const exec::View *positions = args.operand(art::ROLE_POSITIONS);
  ASSIGN_OR_RETURN(int64_t numHeads, args.intAttr("num_heads"));
  ASSIGN_OR_RETURN(int64_t rotatedHeads, args.intAttr("rotated_heads"));
  ASSIGN_OR_RETURN(int64_t headDim, args.intAttr("head_dim"));
  ASSIGN_OR_RETURN(int64_t rotaryDim, args.intAttr("rotary_dim"));
  if (numHeads <= 0 || headDim <= 0 || rotatedHeads < 0 || rotatedHeads > numHeads ||
      rotaryDim <= 0 || rotaryDim > headDim || rotaryDim % 2 != 0)
    return args.error("has inconsistent head attributes");
  if (bool(cosCache) != bool(sinCache) || bool(invFreq) == bool(cosCache))
    return args.error("takes inv_freq or the cos and sin caches");
  int64_t half = rotaryDim / 2;
  if (input->elements != args.tokens * numHeads * headDim)
    return args.error("input is not [tokens, num_heads * head_dim]");
  if (invFreq && invFreq->elements != half)
    return args.error("inv_freq is not rotary_dim / 2 long");
  k::RotaryParams p{};
  p.input = input->data;
  p.output = args.outputs[0].data;
  p.invFreq = invFreq ? invFreq->data : nullptr;
  p.cosCache = cosCache ? cosCache->data : nullptr;
  p.sinCache = sinCache ? sinCache->data : nullptr;
  p.positions = positions ? static_cast<const long long *>(positions->data) : nullptr;
  p.tokens = args.tokens;
  p.seq = args.seq;
  p.numHeads = numHeads;
  p.rotatedHeads = rotatedHeads;
  p.headDim = headDim;
  p.rotaryDim = rotaryDim;
  p.interleaved = args.boolAttr("interleaved", false) ? 1 : 0;
  if (cosCache) {
    if (sinCache->elements != cosCache->elements || cosCache->elements % half != 0)
      return args.error("caches are not rows of rotary_dim / 2 = " + std::to_string(half));
    p.cacheRows = cosCache->elements / half;
    if (cosCache->isBuffer || cosCache->shape.size() == 3) {
      int64_t cacheBatch = cosCache->elements / (args.seq * half);
      if (cosCache->elements % (args.seq * half) != 0 ||
          (cacheBatch != 1 && cacheBatch != args.batch) || positions)
        return args.error("per-token caches must be [batch or 1, seq, rotary_dim / 2]");
      p.perTokenCacheBatch = cacheBatch;
    } else if (args.seq > p.cacheRows && !positions) {
      return invalidArgumentError("position " + std::to_string(args.seq - 1) +
                                  " is outside the rotary caches' " + std::to_string(p.cacheRows) +
                                  " rows");
    }
  }
  if (positions) {
    if (positions->type != art::ELEMENT_TYPE_I64 ||
        (positions->elements != args.seq && positions->elements != args.tokens))
      return args.error("positions must be i64 [batch or 1, seq]");
    p.positionBatch = positions->elements / args.seq;
  }
  return pack(p);
}

StatusOr<PackedParams> attention(const exec::LaunchArgs &args) {
  std::vector<const exec::View *> inputs = args.all(art::ROLE_INPUTS);
  ASSIGN_OR_RETURN(int64_t numHeads, args.intAttr("num_heads"));
  ASSIGN_OR_RETURN(int64_t numKvHeads, args.intAttr("num_kv_heads"));
  ASSIGN_OR_RETURN(int64_t headDim, args.intAttr("head_dim"));
  ASSIGN_OR_RETURN(double scale, args.floatAttr("scale"));
  if (inputs.size() != 1 && inputs.size() != 3)
    return args.error("takes a packed qkv operand or q, k and v");
  if (numHeads <= 0 || numKvHeads <= 0 || headDim <= 0 || numHeads % numKvHeads != 0)
    return args.error("has inconsistent head counts");
  int64_t qFeatures = numHeads * headDim, kvFeatures = numKvHeads * headDim;
  k::AttentionParams p{};
  p.output = args.outputs[0].data;
  p.batch = args.batch;
  p.seq = args.seq;
  p.numHeads = numHeads;
  p.numKvHeads = numKvHeads;
  p.headDim = headDim;
  p.scale = float(scale);
  p.softcap = float(args.floatAttr("softcap", 0.0));
  p.causal = args.boolAttr("causal", false) ? 1 : 0;
  p.window = int(args.intAttr("window", 0));
  p.alibi = float(args.floatAttr("alibi", 0.0));
  ASSIGN_OR_RETURN(p.kCacheScale, cacheScale(args, "k_cache_scale"));
  ASSIGN_OR_RETURN(p.vCacheScale, cacheScale(args, "v_cache_scale"));
  if (p.window < 0 || args.intAttr("window", 0) > INT32_MAX ||
      (p.window > 0 && !p.causal))
    return args.error("has a window that is not a positive count of keys of "
                      "causal attention");
  if (inputs.size() == 1) {
    int64_t packed = qFeatures + 2 * kvFeatures;
    if (inputs[0]->elements != args.tokens * packed)
      return args.error("packed qkv is not [tokens, (H + 2 KV) * D]");
    p.q = inputs[0]->data;
    p.k = offsetBy(*inputs[0], qFeatures);
    p.v = offsetBy(*inputs[0], qFeatures + kvFeatures);
    p.qRowStride = p.kRowStride = p.vRowStride = packed;
    p.kvSeq = args.seq;
  } else {
    if (inputs[0]->elements != args.tokens * qFeatures ||
        inputs[1]->elements % (args.batch * kvFeatures) != 0 ||
        inputs[2]->elements != inputs[1]->elements)
      return args.error("q, k, v are not [batch, seq, heads * head_dim]");
    p.q = inputs[0]->data;
    p.k = inputs[1]->data;
    p.v = inputs[2]->data;
    p.qRowStride = qFeatures;
    p.kRowStride = p.vRowStride = kvFeatures;
    p.kvSeq = inputs[1]->elements / (args.batch * kvFeatures);
  }
  if (p.kvSeq == 0 || (p.causal && p.kvSeq < p.seq))
    return args.error("query 0 sees no key");
  if (args.outputs[0].elements != args.tokens * qFeatures)
    return args.error("output is not [tokens, num_heads * head_dim]");
  return pack(p);
}

StatusOr<PackedParams> kvAttention(const exec::LaunchArgs &args, const StepContext *step) {
  if (!step)
    return args.error("runs only in a step");
  std::vector<const exec::View *> inputs = args.all(art::ROLE_INPUTS);
  ASSIGN_OR_RETURN(int64_t numHeads, args.intAttr("num_heads"));
  ASSIGN_OR_RETURN(int64_t numKvHeads, args.intAttr("num_kv_heads"));
  ASSIGN_OR_RETURN(int64_t headDim, args.intAttr("head_dim"));
  ASSIGN_OR_RETURN(int64_t blockSize, args.intAttr("block_size"));
  ASSIGN_OR_RETURN(int64_t layer, args.intAttr("layer"));
  ASSIGN_OR_RETURN(double scale, args.floatAttr("scale"));
  if (inputs.size() != 1 && inputs.size() != 3)
    return args.error("takes a packed qkv operand or q, k and v");
  if (numHeads <= 0 || numKvHeads <= 0 || headDim <= 0 || numHeads % numKvHeads != 0)
    return args.error("has inconsistent head counts");
  if (layer < 0 || layer >= int64_t(step->kvLayers.size()) || blockSize != step->blockSize)
    return args.error("does not match the allocated KV cache");
  k::KvAttentionParams p{};
  int64_t qFeatures = numHeads * headDim, kvFeatures = numKvHeads * headDim;
  if (inputs.size() == 1) {
    int64_t packed = qFeatures + 2 * kvFeatures;
    if (inputs[0]->elements != args.tokens * packed)
      return args.error("packed qkv is not [tokens, (H + 2 KV) * D]");
    p.q = inputs[0]->data;
    p.k = offsetBy(*inputs[0], qFeatures);
    p.v = offsetBy(*inputs[0], qFeatures + kvFeatures);
    p.qRowStride = p.kRowStride = p.vRowStride = packed;
  } else {
    if (inputs[0]->elements != args.tokens * qFeatures ||
        inputs[1]->elements != args.tokens * kvFeatures ||
        inputs[2]->elements != args.tokens * kvFeatures)
      return args.error("q, k, v are not [tokens, heads * head_dim]");
    p.q = inputs[0]->data;
    p.k = inputs[1]->data;
    p.v = inputs[2]->data;
    p.qRowStride = qFeatures;
    p.kRowStride = p.vRowStride = kvFeatures;
  }
  auto meta = [&](art::OperandRole role) -> StatusOr<const long long *> {
    ASSIGN_OR_RETURN(const exec::View *view, args.required(role));
    if (view->type != art::ELEMENT_TYPE_I64)
      return args.error(art::operandRoleName(role) + " must be i64");
    return static_cast<const long long *>(view->data);
  };
  ASSIGN_OR_RETURN(p.seqStarts, meta(art::ROLE_SEQ_STARTS));
  ASSIGN_OR_RETURN(p.contextLens, meta(art::ROLE_CONTEXT_LENS));
  ASSIGN_OR_RETURN(p.blockTables, meta(art::ROLE_BLOCK_TABLES));
  ASSIGN_OR_RETURN(p.slotIds, meta(art::ROLE_SLOT_IDS));
  p.output = args.outputs[0].data;
  p.cache = step->kvLayers[size_t(layer)];
  p.workspace = step->kvWorkspace;
  p.counters = step->kvCounters;
  p.tokens = args.tokens;
  p.numSeqs = step->numSeqs;
  p.maxBlocksPerSeq = step->maxBlocksPerSeq;
  p.blockSize = blockSize;
  p.numHeads = numHeads;
  p.numKvHeads = numKvHeads;
  p.headDim = headDim;
  p.scale = float(scale);
  p.softcap = float(args.floatAttr("softcap", 0.0));
  p.window = args.intAttr("window", 0);
  p.alibi = float(args.floatAttr("alibi", 0.0));
  if (p.window < 0)
    return args.error("has a negative window");
  ASSIGN_OR_RETURN(p.kCacheScale, cacheScale(args, "k_cache_scale"));
  ASSIGN_OR_RETURN(p.vCacheScale, cacheScale(args, "v_cache_scale"));
  if ((p.kCacheScale > 0) != step->kvFp8 || (p.vCacheScale > 0) != step->kvFp8)
    return args.error(step->kvFp8 ? "reads an FP8 KV cache without its scales"
                                  : "has FP8 cache scales for a cache that is not FP8");
  return pack(p);
}

StatusOr<PackedParams> gatedActivation(const exec::LaunchArgs &args) {
  std::vector<const exec::View *> inputs = args.all(art::ROLE_INPUTS);
  ASSIGN_OR_RETURN(std::string activation, args.stringAttr("activation"));
  ASSIGN_OR_RETURN(int64_t features, args.intAttr("features"));
  k::GatedActivationParams p{};
  if (activation == "silu")
    p.activation = 0;
  else if (activation == "gelu")
    p.activation = 1;
  else if (activation == "gelu_tanh")
    p.activation = 2;
  else
    return unimplementedError("gated_activation: activation '" + activation +
                              "' has no cuda kernel (silu, gelu, gelu_tanh)");
  p.output = args.outputs[0].data;
  p.tokens = args.tokens;
  p.features = features;
  if (inputs.size() == 1) {
    if (inputs[0]->elements != args.tokens * 2 * features)
      return args.error("packed gate_up is not [tokens, 2 * features]");
    p.gate = inputs[0]->data;
    p.up = offsetBy(*inputs[0], features);
    p.gateRowStride = p.upRowStride = 2 * features;
  } else if (inputs.size() == 2) {
    if (inputs[0]->elements != args.tokens * features || inputs[1]->elements != args.tokens * features)
      return args.error("gate and up are not [tokens, features]");
    p.gate = inputs[0]->data;
    p.up = inputs[1]->data;
    p.gateRowStride = p.upRowStride = features;
  } else {
    return args.error("takes gate_up or gate and up");
  }
  return pack(p);
}

StatusOr<PackedParams> copy(const exec::LaunchArgs &args) {
  ASSIGN_OR_RETURN(const exec::View *input, args.required(art::ROLE_INPUT));
  ASSIGN_OR_RETURN(int64_t inFeatures, args.intAttr("in_features"));
  ASSIGN_OR_RETURN(int64_t offset, args.intAttr("offset"));
  ASSIGN_OR_RETURN(int64_t length, args.intAttr("length"));
  const exec::View &out = args.outputs[0];
  const exec::View *map = args.operand(art::ROLE_MAP);
  if (inFeatures <= 0 || length <= 0 || offset < 0 || (!map && offset + length > inFeatures) ||
      out.elements % length != 0 || input->elements != out.elements / length * inFeatures)
    return args.error("copies elements outside its rows");
  if (map && (map->type != art::ELEMENT_TYPE_I64 || map->elements != length || offset != 0))
    return args.error("needs an i64 map of " + std::to_string(length) + " entries");
  k::CopyParams p{};
  // The kernel skips map entries outside [0, inFeatures).
  p.featureMap = map ? static_cast<const long long *>(map->data) : nullptr;
  p.input = input->data;
  p.output = out.data;
  p.rows = out.elements / length;
  p.inFeatures = inFeatures;
  p.offset = offset;
  p.length = length;
  p.elementBytes = static_cast<long long>(art::elementSize(out.type));
  return pack(p);
}

StatusOr<PackedParams> gatherRows(const exec::LaunchArgs &args) {
  ASSIGN_OR_RETURN(const exec::View *input, args.required(art::ROLE_INPUT));
  ASSIGN_OR_RETURN(const exec::View *indices, args.required(art::ROLE_INDICES));
  ASSIGN_OR_RETURN(int64_t features, args.intAttr("features"));
  const exec::View &out = args.outputs[0];
  if (features <= 0 || indices->type != art::ELEMENT_TYPE_I64 || input->type != out.type ||
      out.elements != indices->elements * features || input->elements % features != 0)
    return args.error("needs i64 indices and rows of " + std::to_string(features) +
                      " elements of one type");
  k::CopyParams p{};
  p.input = input->data;
  p.output = out.data;
  p.rows = indices->elements;
  p.inFeatures = p.length = features;
  p.elementBytes = static_cast<long long>(art::elementSize(out.type));
  p.rowIndices = static_cast<const long long *>(indices->data);
  return pack(p);
}

StatusOr<PackedParams> elementwise(const exec::LaunchArgs &args) {
  if (args.operands.size() > size_t(k::kMaxElementwiseOperands) ||
      args.outputs.size() > size_t(k::kMaxElementwiseOperands))
    return args.error("has more operands than a generated kernel takes");
  k::ElementwiseParams p{};
  for (size_t i = 0; i < args.operands.size(); ++i)
    p.inputs[i] = args.operands[i].data;
  for (size_t i = 0; i < args.outputs.size(); ++i)
    p.outputs[i] = args.outputs[i].data;
  p.batch = args.batch;
  p.seq = args.seq;
  p.tokens = args.tokens;
  return pack(p);
}

} // namespace

StatusOr<PackedParams> packGemvParams(const exec::LaunchArgs &args, float *workspace,
                                      unsigned int *counters, const exec::LaunchArgs *folded,
                                      int64_t prefetchBytes, const exec::LaunchArgs *gatedNext,
                                      unsigned long long *argmax) {
  ASSIGN_OR_RETURN(const exec::View *input, args.required(art::ROLE_INPUT));
  ASSIGN_OR_RETURN(const exec::View *weight, args.required(art::ROLE_WEIGHT));
  ASSIGN_OR_RETURN(int64_t k, args.intAttr("k"));
  ASSIGN_OR_RETURN(int64_t n, args.intAttr("n"));
  const exec::View &out = args.outputs[0];
  const exec::View *bias = args.operand(art::ROLE_BIAS);
  const exec::View *residual = args.operand(art::ROLE_RESIDUAL);
  if (input->type != out.type || weight->type != out.type || input->elements != args.tokens * k ||
      out.elements != args.tokens * n || weight->elements != k * n ||
      (bias && bias->elements != n) || (residual && residual->elements != args.tokens * n))
    return args.error("operand sizes do not match k = " + std::to_string(k) + ", n = " +
                      std::to_string(n));
  k::GemvParams p{};
  p.input = input->data;
  p.weight = weight->data;
  p.bias = bias ? bias->data : nullptr;
  p.residual = residual ? residual->data : nullptr;
  p.output = out.data;
  p.workspace = workspace;
  p.counters = counters;
  p.rows = args.tokens;
  p.k = k;
  p.n = n;
  p.transposed = args.boolAttr("transpose_weight", false) ? 1 : 0;
  p.inputRowStride = k;
  p.prefetchBytes = prefetchBytes;
  p.argmax = argmax;
  if (folded) {
    // The GEMM's input is the folded launch's output; read its inputs instead.
    if (folded->launch->kind() == art::Launch::RMS_NORM) {
      ASSIGN_OR_RETURN(PackedParams bytes, rmsNorm(*folded));
      k::RmsNormParams norm;
      std::memcpy(&norm, bytes.bytes.data(), sizeof norm);
      if (norm.features != k || norm.rows != args.tokens)
        return folded->error("is not an rms_norm over the GEMM's input rows");
      p.prologue = 1;
      p.input = norm.input;
      p.normWeight = norm.weight;
      p.normEpsilon = norm.epsilon;
      p.normWeightOffset = norm.weightOffset;
    } else if (folded->launch->kind() == art::Launch::GATED_ACTIVATION) {
      ASSIGN_OR_RETURN(PackedParams bytes, gatedActivation(*folded));
      k::GatedActivationParams gated;
      std::memcpy(&gated, bytes.bytes.data(), sizeof gated);
      if (gated.features != k || gated.tokens != args.tokens)
        return folded->error("is not a gated activation of the GEMM's input rows");
      p.prologue = 2;
      p.activation = gated.activation;
      p.input = gated.gate;
      p.up = gated.up;
      p.inputRowStride = gated.gateRowStride;
      p.upRowStride = gated.upRowStride;
    } else {
      return folded->error("cannot be folded into a GEMV");
    }
  }
  if (gatedNext) {
    // The GEMV writes act(gate) * up for the two halves of its output.
    if (gatedNext->launch->kind() != art::Launch::GATED_ACTIVATION)
      return gatedNext->error("is not a gated activation");
    ASSIGN_OR_RETURN(PackedParams bytes, gatedActivation(*gatedNext));
    k::GatedActivationParams gated;
    std::memcpy(&gated, bytes.bytes.data(), sizeof gated);
    const exec::View &written = gatedNext->outputs[0];
    if (n % 2 != 0 || gated.features * 2 != n || gated.tokens != args.tokens ||
        gated.gate != out.data || gated.up != offsetBy(out, n / 2) ||
        gated.gateRowStride != n || written.type != out.type ||
        written.elements != args.tokens * (n / 2))
      return gatedNext->error("does not read the GEMM's output as one packed gate_up");
    p.output = gated.output;
    p.activation = gated.activation;
  }
  return pack(p);
}

StatusOr<PackedParams> packRotaryKvWriteParams(const exec::LaunchArgs &rotaryArgs,
                                               const PackedParams &kvAttention) {
  if (rotaryArgs.launch->kind() != art::Launch::ROTARY ||
      kvAttention.bytes.size() != sizeof(k::KvAttentionParams))
    return rotaryArgs.error("cannot be folded into a KV write");
  ASSIGN_OR_RETURN(PackedParams rotaryBytes, rotary(rotaryArgs));
  k::RotaryKvWriteParams p{};
  std::memcpy(&p.rotary, rotaryBytes.bytes.data(), sizeof p.rotary);
  std::memcpy(&p.kv, kvAttention.bytes.data(), sizeof p.kv);
  // The KV write reads K and V from the rotary's output row (packed qkv).
  if (p.kv.q != p.rotary.output || p.kv.tokens != p.rotary.tokens)
    return rotaryArgs.error("does not write the next paged attention's packed qkv");
  return pack(p);
}

StatusOr<PackedParams> packKvDecodeParams(const exec::LaunchArgs &rotaryArgs,
                                          const PackedParams &kvAttention) {
  ASSIGN_OR_RETURN(PackedParams packed, packRotaryKvWriteParams(rotaryArgs, kvAttention));
  k::RotaryKvWriteParams p{};
  std::memcpy(&p, packed.bytes.data(), sizeof p);
  // infer_kv_decode reads q, k and v at their offsets (whole heads of 16-bit
  // elements) in the rotary's input row, with the attention's fast path
  // (16-byte aligned cache).
  const long long features = p.rotary.numHeads * p.rotary.headDim;
  const long long headBytes = 2 * p.kv.headDim;
  auto wholeHeads = [&](const void *at) {
    return (static_cast<const char *>(at) - static_cast<const char *>(p.rotary.output)) %
               headBytes == 0;
  };
  if (p.kv.qRowStride != features || p.kv.kRowStride != features ||
      p.kv.vRowStride != features || p.kv.headDim % 8 != 0 || p.kv.headDim > 128 ||
      p.rotary.headDim != p.kv.headDim || !wholeHeads(p.kv.q) || !wholeHeads(p.kv.k) ||
      !wholeHeads(p.kv.v) || reinterpret_cast<uintptr_t>(p.kv.cache) % 16 != 0)
    return rotaryArgs.error("cannot run with the next paged attention as infer_kv_decode");
  return packed;
}

StatusOr<PackedParams> moe(const exec::LaunchArgs &args) {
  ASSIGN_OR_RETURN(const exec::View *input, args.required(art::ROLE_INPUT));
  ASSIGN_OR_RETURN(const exec::View *router, args.required(art::ROLE_ROUTER));
  ASSIGN_OR_RETURN(const exec::View *gateUp, args.required(art::ROLE_GATE_UP));
  ASSIGN_OR_RETURN(const exec::View *down, args.required(art::ROLE_DOWN));
  ASSIGN_OR_RETURN(const exec::View *workspace, args.required(art::ROLE_WORKSPACE));
  ASSIGN_OR_RETURN(int64_t hidden, args.intAttr("hidden"));
  ASSIGN_OR_RETURN(int64_t experts, args.intAttr("experts"));
  ASSIGN_OR_RETURN(int64_t inter, args.intAttr("inter"));
  ASSIGN_OR_RETURN(int64_t topK, args.intAttr("top_k"));
  const exec::View &out = args.outputs[0];
  if (hidden < 1 || experts < 1 || inter < 1 || topK < 1 || topK > experts)
    return args.error("hidden, experts, inter must be positive and top_k in [1, experts]");
  if (input->elements != args.tokens * hidden || out.elements != args.tokens * hidden ||
      router->elements != experts * hidden || gateUp->elements != experts * 2 * inter * hidden ||
      down->elements != experts * hidden * inter)
    return args.error("operands are not [tokens, hidden], [experts, hidden], [experts, 2 * "
                      "inter, hidden] and [experts, hidden, inter]");
  moe::WorkspaceLayout layout = moe::layout(args.tokens, hidden, inter, experts, topK);
  if (workspace->elements * int64_t(art::elementSize(workspace->type)) < layout.bytes)
    return args.error("workspace of " + std::to_string(workspace->elements) +
                      " elements is smaller than the " + std::to_string(layout.bytes) +
                      " bytes the kernels use");
  char *base = static_cast<char *>(workspace->data);
  k::MoeParams p{};
  p.input = input->data;
  p.router = router->data;
  p.gateUp = gateUp->data;
  p.down = down->data;
  p.output = out.data;
  p.expertIds = reinterpret_cast<int *>(base + layout.expertIds);
  p.pairWeights = reinterpret_cast<float *>(base + layout.pairWeights);
  p.pairsByExpert = reinterpret_cast<int *>(base + layout.pairsByExpert);
  p.expertStarts = reinterpret_cast<int *>(base + layout.expertStarts);
  p.activations = reinterpret_cast<float *>(base + layout.activations);
  p.expertOutputs = reinterpret_cast<float *>(base + layout.expertOutputs);
  p.tokens = args.tokens;
  p.hidden = hidden;
  p.inter = inter;
  p.experts = experts;
  p.topK = topK;
  p.normalize = args.boolAttr("normalize", true) ? 1 : 0;
  StatusOr<std::string> scoring = args.stringAttr("scoring");
  if (scoring.ok() && *scoring != "softmax" && *scoring != "sigmoid")
    return args.error("scoring must be softmax or sigmoid, got '" + *scoring + "'");
  p.sigmoid = scoring.ok() && *scoring == "sigmoid" ? 1 : 0;
  reference::MoeShape routing{args.tokens, hidden, experts, inter, topK, p.normalize != 0};
  routing.groups = args.intAttr("groups", 1);
  routing.topkGroups = args.intAttr("topk_groups", 1);
  routing.scale = args.floatAttr("scale", 1.0);
  if (std::string error = reference::routingError(routing); !error.empty())
    return args.error(error);
  p.groups = int(routing.groups);
  p.topkGroups = int(routing.topkGroups);
  p.scale = float(routing.scale);
  if (const exec::View *bias = args.operand(art::ROLE_SCORE_BIAS)) {
    if (bias->elements != experts ||
        (bias->type != art::ELEMENT_TYPE_F32 && bias->type != art::ELEMENT_TYPE_F16 &&
         bias->type != art::ELEMENT_TYPE_BF16))
      return args.error("score_bias must be [experts] f32, f16 or bf16");
    p.scoreBias = bias->data;
    p.scoreBiasType = int(bias->type);
  }
  return pack(p);
}

StatusOr<PackedParams> packQuantizedGemmParams(const exec::LaunchArgs &args, void *output) {
  ASSIGN_OR_RETURN(const exec::View *input, args.required(art::ROLE_INPUT));
  ASSIGN_OR_RETURN(const exec::View *q, args.required(art::ROLE_Q));
  ASSIGN_OR_RETURN(const exec::View *scales, args.required(art::ROLE_SCALES));
  ASSIGN_OR_RETURN(int64_t k, args.intAttr("k"));
  ASSIGN_OR_RETURN(int64_t n, args.intAttr("n"));
  ASSIGN_OR_RETURN(std::string name, args.stringAttr("scheme"));
  const int64_t group = args.intAttr("group_size", 0);
  std::optional<quant::Scheme> scheme = quant::parseScheme(name);
  if (!scheme)
    return args.error("unknown quantization scheme '" + name + "'");
  if (std::string error = quant::shapeError(*scheme, k, group); !error.empty())
    return args.error(error);
  const exec::View &out = args.outputs[0];
  if (q->type != art::ELEMENT_TYPE_U8 || q->elements != quant::quantizedBytes(*scheme, n, k) ||
      scales->type != art::ELEMENT_TYPE_F32 ||
      scales->elements != quant::scaleCount(*scheme, n, k, group))
    return args.error("q and scales are not the u8 bytes and f32 scales of a [" +
                      std::to_string(n) + ", " + std::to_string(k) + "] " + name + " weight");
  if (input->elements != args.tokens * k || out.elements != args.tokens * n)
    return args.error("input and output are not [tokens, k] and [tokens, n]");
  // The 16-byte loads of the vector kernels (k a multiple of 16 or 32).
  auto aligned = [](const void *p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  if (k % 16 == 0 && (!aligned(input->data) || !aligned(q->data)))
    return args.error("input and q must be 16-byte aligned");
  k::QuantizedGemmParams p{};
  p.input = input->data;
  p.q = static_cast<const unsigned char *>(q->data);
  p.scales = static_cast<const float *>(scales->data);
  if (const exec::View *zeros = args.operand(art::ROLE_ZEROS)) {
    if (!quant::isGrouped(*scheme) || zeros->type != art::ELEMENT_TYPE_F32 ||
        zeros->elements != scales->elements)
      return args.error("zeros must be f32 shaped as the scales of an int4 or int8 weight");
    p.zeros = static_cast<const float *>(zeros->data);
  }
  if (const exec::View *inputScale = args.operand(art::ROLE_INPUT_SCALE)) {
    if (inputScale->elements != k ||
        (inputScale->type != art::ELEMENT_TYPE_F32 && inputScale->type != art::ELEMENT_TYPE_F16 &&
         inputScale->type != art::ELEMENT_TYPE_BF16))
      return args.error("input_scale must be [k] f32, f16 or bf16");
    p.inputScale = inputScale->data;
    p.inputScaleType = int(inputScale->type);
  }
  const exec::View *bias = args.operand(art::ROLE_BIAS);
  const exec::View *residual = args.operand(art::ROLE_RESIDUAL);
  if ((bias && bias->elements != n) || (residual && residual->elements != out.elements))
    return args.error("bias and residual are not [n] and [tokens, n]");
  p.bias = bias ? bias->data : nullptr;
  p.residual = residual ? residual->data : nullptr;
  p.output = output ? output : out.data;
  p.tokens = args.tokens;
  p.n = n;
  p.k = k;
  p.group = quant::isGrouped(*scheme) ? group : 0;
  return pack(p);
}

StatusOr<PackedParams> packKernelParams(const exec::LaunchArgs &args, const StepContext *step) {
  switch (args.launch->kind()) {
  case art::Launch::KV_ATTENTION:
    return kvAttention(args, step);
  case art::Launch::EMBEDDING:
    return embedding(args, step);
  case art::Launch::RMS_NORM:
    return rmsNorm(args);
  case art::Launch::LAYER_NORM:
    return layerNorm(args);
  case art::Launch::ROTARY:
    return rotary(args);
  case art::Launch::ATTENTION:
    return attention(args);
  case art::Launch::GATED_ACTIVATION:
    return gatedActivation(args);
  case art::Launch::COPY:
    return copy(args);
  case art::Launch::GATHER_ROWS:
    return gatherRows(args);
  case art::Launch::ELEMENTWISE:
    return elementwise(args);
  case art::Launch::MOE:
    return moe(args);
  case art::Launch::QUANTIZED_GEMM:
    return packQuantizedGemmParams(args, nullptr);
  default:
    return args.error("has no kernel parameters");
  }
}

} // namespace infer::cuda
