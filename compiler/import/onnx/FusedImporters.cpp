//===- FusedImporters.cpp - opset-23 LLM ops straight to the fused ops ----===//
//
// ONNX opset 23 added RMSNormalization, RotaryEmbedding and Attention: the
// same building blocks the optimization pipeline raises decomposed graphs to.
// They import straight to graph.rms_norm, graph.rotary and graph.attention.
// The fused ops are token-major ([batch, seq, heads * head_dim]); ONNX's 4-D
// [batch, heads, seq, head_dim] form is transposed in and out around them:
//
//   [b, h, s, d] --transpose(0,2,1,3)--> [b, s, h, d] --reshape(0,0,h*d)--> [b, s, h*d]
//
// What the fused ops cannot express (attention masks, KV caches, the
// qk_matmul_output output, V heads of another size, ...) is an error that
// names the input or attribute, one per feature, so --check lists them all.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/onnx/OpImporters.h"

#include "compiler/import/onnx/ShapeInference.h"
#include "dialects/graph/IR/GraphOps.h"

#include <cmath>

using namespace mlir;
using namespace infer::import;
namespace graph = infer::graph;

namespace {

constexpr int64_t kFusedOpsOpset = 23;
constexpr int64_t kDynamic = ShapedType::kDynamic;

/// These op names mean nothing before opset 23.
LogicalResult checkOpset(NodeImporter &n) {
  if (n.opset >= kFusedOpsOpset)
    return success();
  return n.error() << n.node.op_type() << " is an opset-" << kFusedOpsOpset
                   << " op; the model imports opset " << n.opset;
}

/// [b, h, s, d] → [b, s, h * d]. `x` has rank 4.
Value toTokenMajor(NodeImporter &n, Value x, int64_t heads, int64_t headDim) {
  Shape s = *shapeOf(x);
  Type element = NodeImporter::elementTypeOf(x);
  Value swapped = graph::TransposeOp::create(
      n.builder, n.loc, RankedTensorType::get({s[0], s[2], heads, headDim}, element), x,
      n.builder.getDenseI64ArrayAttr({0, 2, 1, 3}));
  return graph::ReshapeOp::create(n.builder, n.loc,
                                  RankedTensorType::get({s[0], s[2], heads * headDim}, element),
                                  swapped, n.constantInts({0, 0, heads * headDim}),
                                  n.builder.getBoolAttr(false));
}

/// [b, s, h * d] → [b, h, s, d], typed as ONNX output 0 where it is declared.
Value toHeadMajor(NodeImporter &n, Value x, int64_t heads, int64_t headDim) {
  Shape s = *shapeOf(x);
  Type element = NodeImporter::elementTypeOf(x);
  Value split = graph::ReshapeOp::create(
      n.builder, n.loc, RankedTensorType::get({s[0], s[1], heads, headDim}, element), x,
      n.constantInts({0, 0, heads, headDim}), n.builder.getBoolAttr(false));
  Shape outShape{s[0], heads, s[1], headDim};
  return graph::TransposeOp::create(n.builder, n.loc, n.resultType(0, element, outShape), split,
                                    n.builder.getDenseI64ArrayAttr({0, 2, 1, 3}));
}

/// Dim `i` of `value`, or kDynamic when the rank or the dim is unknown.
int64_t dimOf(Value value, size_t i) {
  std::optional<Shape> shape = shapeOf(value);
  return shape && i < shape->size() ? (*shape)[i] : kDynamic;
}

std::string dimText(int64_t dim) { return dim == kDynamic ? "?" : std::to_string(dim); }

//===----------------------------------------------------------------------===//
// RMSNormalization
//===----------------------------------------------------------------------===//

LogicalResult importRmsNorm(NodeImporter &n, SmallVectorImpl<Value> &results) {
  if (failed(checkOpset(n)) ||
      failed(n.checkAttributes({{"axis", kInt}, {"epsilon", kFloat}, {"stash_type", kInt}})) ||
      failed(n.checkArity({2, 2})))
    return failure();
  bool ok = true;
  if (int64_t stash = n.intAttr("stash_type", 1); stash != 1) {
    n.error() << "stash_type " << stash << " is not supported (only 1: float32 statistics)";
    ok = false;
  }
  auto x = n.requiredInput(0);
  auto scale = n.requiredInput(1);
  if (failed(x) || failed(scale))
    return failure();
  std::optional<int64_t> rank = NodeImporter::rankOf(*x);
  if (!rank)
    return n.error() << "needs an input X of known rank";
  int64_t axisValue = n.intAttr("axis", -1);
  auto axis = n.normalizeAxis(axisValue, *x);
  if (failed(axis))
    return failure();
  // ONNX normalises over dims [axis, rank); graph.rms_norm over the last one.
  if (*axis != *rank - 1) {
    n.error() << "axis " << axisValue << " normalises over the last " << *rank - *axis
              << " dims of a rank-" << *rank
              << " input; only the last axis (-1 or rank - 1) is supported";
    ok = false;
  }
  int64_t hidden = dimOf(*x, *rank - 1);
  std::optional<Shape> scaleShape = shapeOf(*scale);
  if (*axis == *rank - 1 && scaleShape) {
    bool matches = scaleShape->size() == 1 &&
                   (hidden == kDynamic || (*scaleShape)[0] == kDynamic || (*scaleShape)[0] == hidden);
    if (!matches) {
      auto diag = n.error() << "scale must be 1-D [" << dimText(hidden)
                            << "] (the last dim of X), got [";
      llvm::interleave(*scaleShape, diag, [&](int64_t d) { diag << dimText(d); }, ", ");
      diag << "]";
      ok = false;
    }
  }
  if (!ok)
    return failure();
  Type type = n.resultType(0, NodeImporter::elementTypeOf(*x), shapeOf(*x));
  results.push_back(graph::RmsNormOp::create(
      n.builder, n.loc, type, *x, *scale, n.builder.getF32FloatAttr(n.floatAttr("epsilon", 1e-5f)),
      n.builder.getF32FloatAttr(0.0f)));
  return success();
}

//===----------------------------------------------------------------------===//
// RotaryEmbedding
//===----------------------------------------------------------------------===//

// X is [batch, seq, num_heads * head_dim] (num_heads from the attribute) or
// [batch, heads, seq, head_dim]. With position_ids [batch, seq] the caches are
// [max_position, rotary_dim / 2], read at each position; without, they are
// [batch, seq, rotary_dim / 2], one row per token. graph.rotary takes both.
LogicalResult importRotary(NodeImporter &n, SmallVectorImpl<Value> &results) {
  if (failed(checkOpset(n)) ||
      failed(n.checkAttributes(
          {{"interleaved", kInt}, {"num_heads", kInt}, {"rotary_embedding_dim", kInt}})) ||
      failed(n.checkArity({3, 4})))
    return failure();
  auto x = n.requiredInput(0);
  auto cosCache = n.requiredInput(1);
  auto sinCache = n.requiredInput(2);
  if (failed(x) || failed(cosCache) || failed(sinCache))
    return failure();
  Value positions = n.input(3);
  std::optional<Shape> shape = shapeOf(*x);
  if (!shape || (shape->size() != 3 && shape->size() != 4))
    return n.error() << "X must be 3-D [batch, seq, hidden] or 4-D [batch, heads, seq, head_dim]";
  bool headMajor = shape->size() == 4;
  int64_t numHeadsAttr = n.intAttr("num_heads", 0);
  int64_t heads, headDim;
  if (headMajor) {
    heads = (*shape)[1];
    headDim = (*shape)[3];
    if (heads == kDynamic || headDim == kDynamic)
      return n.error() << "4-D X needs static heads and head_dim (dims 1 and 3)";
    if (numHeadsAttr != 0 && numHeadsAttr != heads)
      return n.error() << "num_heads " << numHeadsAttr << " disagrees with X's " << heads
                       << " heads";
  } else {
    heads = numHeadsAttr;
    int64_t hidden = (*shape)[2];
    if (heads <= 0)
      return n.error() << "3-D X needs a positive num_heads, got " << heads;
    if (hidden == kDynamic)
      return n.error() << "3-D X needs a static hidden size (dim 2)";
    if (hidden % heads != 0)
      return n.error() << "hidden size " << hidden << " is not a multiple of num_heads " << heads;
    headDim = hidden / heads;
  }
  int64_t rotaryDim = n.intAttr("rotary_embedding_dim", 0);
  if (rotaryDim == 0)
    rotaryDim = headDim;
  if (rotaryDim < 0 || rotaryDim > headDim || rotaryDim % 2 != 0)
    return n.error() << "rotary_embedding_dim " << rotaryDim << " must be even and in (0, "
                     << headDim << "]";
  if (cosCache->getType() != sinCache->getType())
    return n.error() << "cos_cache " << cosCache->getType() << " and sin_cache "
                     << sinCache->getType() << " must have the same type";
  std::optional<int64_t> cacheRank = NodeImporter::rankOf(*cosCache);
  int64_t expectedRank = positions ? 2 : 3;
  if (cacheRank != expectedRank)
    return n.error() << "the caches must be " << expectedRank << "-D "
                     << (positions ? "[max_position, rotary_dim / 2] with position_ids"
                                   : "[batch, seq, rotary_dim / 2] without position_ids");
  if (positions && !NodeImporter::elementTypeOf(positions).isInteger(64))
    return n.error() << "position_ids must be int64";

  Value tokens = headMajor ? toTokenMajor(n, *x, heads, headDim) : *x;
  Type tokensType = headMajor ? tokens.getType()
                              : n.resultType(0, NodeImporter::elementTypeOf(*x), shape);
  Value rotated = graph::RotaryOp::create(
      n.builder, n.loc, tokensType, tokens, /*inv_freq=*/Value(), *cosCache, *sinCache, positions,
      n.builder.getI64IntegerAttr(heads), n.builder.getI64IntegerAttr(heads),
      n.builder.getI64IntegerAttr(headDim), n.builder.getI64IntegerAttr(rotaryDim),
      n.builder.getBoolAttr(n.intAttr("interleaved", 0) != 0));
  results.push_back(headMajor ? toHeadMajor(n, rotated, heads, headDim) : rotated);
  return success();
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

// Q is [batch, q_seq, q_heads * head_dim] and K, V [batch, kv_seq, kv_heads *
// head_dim] (heads from q_num_heads, kv_num_heads), or all 4-D [batch, heads,
// seq, head_dim]. ONNX's is_causal without a cache aligns the mask top-left
// (query i sees keys j <= i); graph.attention aligns it bottom-right (a KV
// cache before the queries). They agree when q_seq == kv_seq.
LogicalResult importAttention(NodeImporter &n, SmallVectorImpl<Value> &results) {
  if (failed(checkOpset(n)) ||
      failed(n.checkAttributes({{"is_causal", kInt},
                                {"kv_num_heads", kInt},
                                {"q_num_heads", kInt},
                                {"qk_matmul_output_mode", kInt},
                                {"scale", kFloat},
                                {"softcap", kFloat},
                                {"softmax_precision", kInt},
                                {"left_window_size", kInt},
                                {"right_window_size", kInt}})) ||
      failed(n.checkArity({3, 7}, {1, 4})))
    return failure();
  bool ok = true;
  static const char *const optionalInputs[] = {nullptr,    nullptr,      nullptr,
                                               "attn_mask", "past_key", "past_value",
                                               "nonpad_kv_seqlen"};
  for (size_t i = 3; i < n.numInputs(); ++i) {
    if (!n.input(i))
      continue;
    n.error() << "input " << i << " ("
              << (i < std::size(optionalInputs) ? optionalInputs[i] : "unknown")
              << ") is not supported (graph.attention takes no mask and no KV cache)";
    ok = false;
  }
  static const char *const outputs[] = {"Y", "present_key", "present_value", "qk_matmul_output"};
  for (size_t i = 1; i < n.numOutputs(); ++i) {
    if (!n.outputUsed(i))
      continue;
    n.error() << "output " << i << " (" << (i < std::size(outputs) ? outputs[i] : "unknown")
              << ") is not supported; only Y is";
    ok = false;
  }
  for (StringRef window : {"left_window_size", "right_window_size"})
    if (int64_t size = n.intAttr(window, -1); size != -1) {
      n.error() << window << " " << size << " is not supported (sliding-window attention)";
      ok = false;
    }
  // graph.attention's softmax runs in fp32: enough for a requested fp32,
  // fp16 or bf16 softmax, not for fp64.
  if (n.attribute("softmax_precision")) {
    int64_t p = n.intAttr("softmax_precision", 0);
    if (p != onnx::TensorProto::FLOAT && p != onnx::TensorProto::FLOAT16 &&
        p != onnx::TensorProto::BFLOAT16) {
      n.error() << "softmax_precision " << p
                << " is not supported (the softmax runs in float32)";
      ok = false;
    }
  }
  float softcap = n.floatAttr("softcap", 0.0f);
  if (softcap < 0) {
    n.error() << "softcap " << softcap << " is not supported (must be >= 0)";
    ok = false;
  }
  auto q = n.requiredInput(0), k = n.requiredInput(1), v = n.requiredInput(2);
  if (failed(q) || failed(k) || failed(v) || !ok)
    return failure();

  std::optional<int64_t> rank = NodeImporter::rankOf(*q);
  if (!rank || (*rank != 3 && *rank != 4) || NodeImporter::rankOf(*k) != rank ||
      NodeImporter::rankOf(*v) != rank)
    return n.error() << "Q, K and V must all be 3-D [batch, seq, hidden] or all 4-D "
                        "[batch, heads, seq, head_dim]";
  bool headMajor = *rank == 4;
  int64_t qHeadsAttr = n.intAttr("q_num_heads", 0), kvHeadsAttr = n.intAttr("kv_num_heads", 0);
  int64_t qHeads, kvHeads, qkHeadDim, kHeadDim, vHeadDim;
  if (headMajor) {
    qHeads = dimOf(*q, 1);
    kvHeads = dimOf(*k, 1);
    qkHeadDim = dimOf(*q, 3);
    kHeadDim = dimOf(*k, 3);
    vHeadDim = dimOf(*v, 3);
    if (qHeads == kDynamic || kvHeads == kDynamic || dimOf(*v, 1) != kvHeads)
      return n.error() << "4-D Q, K and V need static head counts (dim 1), the same for K and V";
    if ((qHeadsAttr && qHeadsAttr != qHeads) || (kvHeadsAttr && kvHeadsAttr != kvHeads))
      return n.error() << "q_num_heads/kv_num_heads disagree with the 4-D inputs' heads";
  } else {
    qHeads = qHeadsAttr;
    kvHeads = kvHeadsAttr;
    if (qHeads <= 0 || kvHeads <= 0)
      return n.error() << "3-D Q, K and V need positive q_num_heads and kv_num_heads";
    auto headSize = [](int64_t hidden, int64_t heads) {
      return hidden == kDynamic || hidden % heads ? kDynamic : hidden / heads;
    };
    qkHeadDim = headSize(dimOf(*q, 2), qHeads);
    kHeadDim = headSize(dimOf(*k, 2), kvHeads);
    vHeadDim = headSize(dimOf(*v, 2), kvHeads);
  }
  if (qkHeadDim == kDynamic || kHeadDim != qkHeadDim)
    return n.error() << "Q and K need the same static head size";
  if (vHeadDim != qkHeadDim)
    return n.error() << "V's head size (" << vHeadDim << ") differs from Q and K's ("
                     << qkHeadDim << "); graph.attention has one head_dim";
  if (qHeads % kvHeads != 0)
    return n.error() << "q heads (" << qHeads << ") must be a multiple of kv heads (" << kvHeads
                     << ")";
  bool causal = n.intAttr("is_causal", 0) != 0;
  int64_t seqDim = headMajor ? 2 : 1;
  int64_t qSeq = dimOf(*q, seqDim), kvSeq = dimOf(*k, seqDim);
  if (causal && (qSeq == kDynamic || qSeq != kvSeq))
    return n.error() << "is_causal needs q and kv sequence lengths known to be equal (got "
                     << dimText(qSeq) << " and " << dimText(kvSeq)
                     << "): ONNX aligns the causal mask top-left, graph.attention bottom-right";

  int64_t headDim = qkHeadDim;
  float scale = n.attribute("scale") ? n.floatAttr("scale", 1.0f)
                                     : float(1.0 / std::sqrt(double(headDim)));
  Type element = NodeImporter::elementTypeOf(*q);
  SmallVector<Value> tokens{*q, *k, *v};
  if (headMajor) {
    tokens[0] = toTokenMajor(n, *q, qHeads, headDim);
    tokens[1] = toTokenMajor(n, *k, kvHeads, headDim);
    tokens[2] = toTokenMajor(n, *v, kvHeads, headDim);
  }
  Shape outShape{dimOf(*q, 0), qSeq, qHeads * headDim};
  Type type = headMajor ? RankedTensorType::get(outShape, element)
                        : n.resultType(0, element, outShape);
  Value attention = graph::AttentionOp::create(
      n.builder, n.loc, type, tokens, n.builder.getI64IntegerAttr(qHeads),
      n.builder.getI64IntegerAttr(kvHeads), n.builder.getI64IntegerAttr(headDim),
      n.builder.getF32FloatAttr(scale), n.builder.getBoolAttr(causal),
      n.builder.getF32FloatAttr(softcap), /*window=*/n.builder.getI64IntegerAttr(0),
      /*alibi=*/n.builder.getF32FloatAttr(0), /*k_cache_scale=*/n.builder.getF32FloatAttr(0),
      /*v_cache_scale=*/n.builder.getF32FloatAttr(0));
  results.push_back(headMajor ? toHeadMajor(n, attention, qHeads, headDim) : attention);
  return success();
}

} // namespace

void infer::import::addFusedImporters(llvm::StringMap<NodeImportFn> &table) {
  table["RMSNormalization"] = importRmsNorm;
  table["RotaryEmbedding"] = importRotary;
  table["Attention"] = importAttention;
}
