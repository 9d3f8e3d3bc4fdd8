//===- KvCacheScales.cpp - the FP8 KV cache's per-layer scales ------------===//

#include "compiler/pipeline/KvCacheScales.h"

#include "compiler/pipeline/Pipeline.h"
#include "dialects/graph/IR/GraphOps.h"
#include "dialects/graph/Interpreter/Interpreter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/Format.h"

#include <chrono>
#include <cmath>
#include <random>

using namespace mlir;
using namespace infer;
using interp::Tensor;

namespace {

constexpr float kE4M3Max = 448.0f;
/// The most prompts the interpreter runs at once (a batch's activations and
/// logits grow with it; an 8B model's logits of 8 x 256 tokens are 1 GB).
constexpr size_t kMaxBatch = 8;

SmallVector<graph::AttentionOp> attentions(func::FuncOp func) {
  SmallVector<graph::AttentionOp> ops;
  func.walk([&](graph::AttentionOp op) { ops.push_back(op); });
  return ops;
}

/// `func` with every attention's inputs appended to its results; the index
/// of each attention's first.
std::vector<size_t> appendProbes(func::FuncOp func) {
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  SmallVector<Value> results(ret.getOperands());
  std::vector<size_t> first;
  for (graph::AttentionOp op : attentions(func)) {
    first.push_back(results.size());
    results.append(op.getInputs().begin(), op.getInputs().end());
  }
  OpBuilder builder(ret);
  func::ReturnOp::create(builder, ret.getLoc(), results);
  ret.erase();
  func.setFunctionType(FunctionType::get(func.getContext(), func.getArgumentTypes(),
                                         ValueRange(results).getTypes()));
  return first;
}

/// max |x| over features [begin, begin + count) of every row of `t` (rows of
/// `width` features).
float columnsAbsMax(const Tensor &t, int64_t width, int64_t begin, int64_t count) {
  float best = 0;
  for (int64_t r = 0; r < t.numElements() / width; ++r)
    for (int64_t j = begin; j < begin + count; ++j) {
      float a = std::fabs(t.f32()[r * width + j]);
      best = std::isnan(a) ? a : std::max(best, a);
      if (std::isnan(best))
        return best;
    }
  return best;
}

} // namespace

std::vector<std::vector<int64_t>> pipeline::randomPrompts(int64_t vocab, int count, int length,
                                                          uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> token(0, std::max<int64_t>(vocab - 1, 0));
  std::vector<std::vector<int64_t>> prompts(static_cast<size_t>(count));
  for (std::vector<int64_t> &prompt : prompts)
    for (int i = 0; i < length; ++i)
      prompt.push_back(token(rng));
  return prompts;
}

llvm::Error pipeline::applyKvCacheScales(ModuleOp module,
                                         const std::vector<std::vector<int64_t>> &prompts,
                                         llvm::raw_ostream &log) {
  func::FuncOp entry = pipeline::singleFunction(module);
  if (!entry || entry.getNumArguments() != 1)
    return llvm::createStringError("--kv-cache-dtype fp8 needs a model with one function whose "
                                   "only input is the token ids");
  SmallVector<graph::AttentionOp> ops = attentions(entry);
  if (ops.empty())
    return llvm::createStringError("--kv-cache-dtype fp8: the model has no attention to cache");
  OwningOpRef<ModuleOp> probe = module.clone();
  func::FuncOp func = pipeline::singleFunction(*probe);
  std::vector<size_t> first = appendProbes(func);
  std::vector<float> kMax(ops.size(), 0.0f), vMax(ops.size(), 0.0f);
  // The reference interpreter takes minutes on a model of billions of
  // weights: say so before the first prompt, and how each went.
  log << llvm::format("kv cache fp8: measuring %zu layers' K and V on %zu prompts with the "
                      "reference interpreter...\n",
                      ops.size(), prompts.size());
  log.flush();
  // Prompts of one length run together (rows of one batch, when the model's
  // batch dim is dynamic): each run decodes every weight once.
  auto inputType = cast<RankedTensorType>(func.getArgumentTypes()[0]);
  size_t batchCap = inputType.getRank() == 2 && inputType.isDynamicDim(0) ? kMaxBatch : 1;
  std::vector<bool> done(prompts.size(), false);
  for (size_t p = 0; p < prompts.size(); ++p) {
    if (done[p] || prompts[p].empty())
      continue;
    std::vector<size_t> batch;
    for (size_t q = p; q < prompts.size() && batch.size() < batchCap; ++q)
      if (!done[q] && prompts[q].size() == prompts[p].size())
        batch.push_back(q), done[q] = true;
    const auto start = std::chrono::steady_clock::now();
    std::vector<int64_t> ids;
    for (size_t q : batch)
      ids.insert(ids.end(), prompts[q].begin(), prompts[q].end());
    Tensor input = Tensor::fromI64(
        {static_cast<int64_t>(batch.size()), static_cast<int64_t>(prompts[p].size())}, ids);
    auto outputs = interp::runFunction(func, {input});
    if (!outputs)
      return llvm::createStringError("--kv-cache-dtype fp8: " +
                                     llvm::toString(outputs.takeError()));
    std::string which;
    for (size_t q : batch)
      which += (which.empty() ? "" : ", ") + std::to_string(q + 1);
    log << llvm::format(
        "  %s %s of %zu (%zu tokens%s): %.1f s\n", batch.size() == 1 ? "prompt" : "prompts",
        which.c_str(), prompts.size(), prompts[p].size(), batch.size() == 1 ? "" : " each",
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    log.flush();
    for (size_t a = 0; a < ops.size(); ++a) {
      graph::AttentionOp op = ops[a];
      int64_t q = int64_t(op.getNumHeads() * op.getHeadDim());
      int64_t kv = int64_t(op.getNumKvHeads() * op.getHeadDim());
      float k, v;
      if (op.getInputs().size() == 1) {
        const Tensor &packed = (*outputs)[first[a]];
        k = columnsAbsMax(packed, q + 2 * kv, q, kv);
        v = columnsAbsMax(packed, q + 2 * kv, q + kv, kv);
      } else {
        k = columnsAbsMax((*outputs)[first[a] + 1], kv, 0, kv);
        v = columnsAbsMax((*outputs)[first[a] + 2], kv, 0, kv);
      }
      kMax[a] = std::isnan(k) || std::isnan(kMax[a]) ? NAN : std::max(kMax[a], k);
      vMax[a] = std::isnan(v) || std::isnan(vMax[a]) ? NAN : std::max(vMax[a], v);
    }
  }
  float kLow = INFINITY, kHigh = 0, vLow = INFINITY, vHigh = 0;
  for (size_t a = 0; a < ops.size(); ++a) {
    if (!std::isfinite(kMax[a]) || !std::isfinite(vMax[a]))
      return llvm::createStringError(
          "--kv-cache-dtype fp8: layer " + std::to_string(a) +
          "'s K or V is not finite on the prompts; no scale can hold it");
    float k = kMax[a] > 0 ? kMax[a] / kE4M3Max : 1.0f, v = vMax[a] > 0 ? vMax[a] / kE4M3Max : 1.0f;
    Builder builder(module.getContext());
    ops[a].setKCacheScaleAttr(builder.getF32FloatAttr(k));
    ops[a].setVCacheScaleAttr(builder.getF32FloatAttr(v));
    kLow = std::min(kLow, kMax[a]), kHigh = std::max(kHigh, kMax[a]);
    vLow = std::min(vLow, vMax[a]), vHigh = std::max(vHigh, vMax[a]);
  }
  log << llvm::format("kv cache fp8: %zu layers' scales from %zu prompts: max |K| %.3g-%.3g, max "
                      "|V| %.3g-%.3g (scale = max / 448)\n",
                      ops.size(), prompts.size(), kLow, kHigh, vLow, vHigh);
  return llvm::Error::success();
}
