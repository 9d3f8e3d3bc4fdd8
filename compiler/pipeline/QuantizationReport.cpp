//===- QuantizationReport.cpp - what --quantize costs in accuracy ---------===//

#include "compiler/pipeline/QuantizationReport.h"

#include "dialects/graph/Interpreter/Interpreter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace infer;
using interp::Tensor;

namespace {

/// log-softmax of `count` logits, in double.
std::vector<double> logSoftmax(const float *logits, int64_t count) {
  double top = *std::max_element(logits, logits + count);
  double sum = 0;
  for (int64_t i = 0; i < count; ++i)
    sum += std::exp(double(logits[i]) - top);
  double log = top + std::log(sum);
  std::vector<double> out(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i)
    out[i] = double(logits[i]) - log;
  return out;
}

llvm::Expected<Tensor> logitsOf(func::FuncOp func, const std::vector<int64_t> &prompt) {
  Tensor ids = Tensor::fromI64({1, static_cast<int64_t>(prompt.size())}, prompt);
  auto outputs = interp::runFunction(func, {ids});
  if (!outputs)
    return outputs.takeError();
  Tensor &logits = outputs->front();
  if (logits.dtype() != interp::DType::F32 || logits.rank() != 3 ||
      logits.shape()[1] != static_cast<int64_t>(prompt.size()))
    return llvm::createStringError("the model's first output is not logits [1, seq, vocab]");
  return std::move(logits);
}

} // namespace

llvm::Expected<pipeline::QuantizationAccuracy>
pipeline::measureQuantization(ModuleOp module, const std::vector<PipelineStage> &stages,
                              const std::vector<std::vector<int64_t>> &prompts,
                              const std::function<llvm::Error(ModuleOp)> &refine) {
  if (stages.empty())
    return llvm::createStringError("no pipeline stages");
  auto runStage = [&](const PipelineStage &stage) -> llvm::Error {
    PassManager pm(module.getContext());
    stage.addPasses(pm);
    if (failed(pm.run(module)))
      return llvm::createStringError("stage '" + stage.name + "' failed");
    return llvm::Error::success();
  };
  for (size_t i = 0; i + 1 < stages.size(); ++i)
    if (llvm::Error error = runStage(stages[i]))
      return std::move(error);
  OwningOpRef<ModuleOp> unquantized = module.clone();
  if (llvm::Error error = runStage(stages.back()))
    return std::move(error);
  if (refine)
    if (llvm::Error error = refine(module))
      return std::move(error);
  func::FuncOp before = pipeline::singleFunction(*unquantized),
               after = pipeline::singleFunction(module);
  if (!before || !after || before.getNumArguments() != 1)
    return llvm::createStringError(
        "--calibration needs a model with one function whose only input is the token ids");

  QuantizationAccuracy result;
  int64_t agree = 0, predicted = 0;
  double kl = 0, nll = 0, quantizedNll = 0;
  for (const std::vector<int64_t> &prompt : prompts) {
    if (prompt.empty())
      continue;
    llvm::Expected<Tensor> reference = logitsOf(before, prompt);
    if (!reference)
      return reference.takeError();
    llvm::Expected<Tensor> quantized = logitsOf(after, prompt);
    if (!quantized)
      return quantized.takeError();
    int64_t vocab = reference->shape()[2];
    for (int64_t t = 0; t < static_cast<int64_t>(prompt.size()); ++t) {
      const float *p = reference->f32() + t * vocab, *q = quantized->f32() + t * vocab;
      std::vector<double> logP = logSoftmax(p, vocab), logQ = logSoftmax(q, vocab);
      for (int64_t v = 0; v < vocab; ++v)
        kl += std::exp(logP[v]) * (logP[v] - logQ[v]);
      agree += std::max_element(p, p + vocab) - p == std::max_element(q, q + vocab) - q;
      if (t + 1 < static_cast<int64_t>(prompt.size())) {
        int64_t next = prompt[t + 1];
        if (next < 0 || next >= vocab)
          return llvm::createStringError("calibration token id " + std::to_string(next) +
                                         " is outside the model's vocabulary");
        nll -= logP[next];
        quantizedNll -= logQ[next];
        ++predicted;
      }
    }
    result.positions += static_cast<int64_t>(prompt.size());
    ++result.prompts;
  }
  if (result.positions == 0)
    return llvm::createStringError("the calibration prompts hold no tokens");
  result.top1Agreement = double(agree) / double(result.positions);
  result.meanKl = kl / double(result.positions);
  result.perplexity = predicted ? std::exp(nll / double(predicted)) : NAN;
  result.quantizedPerplexity = predicted ? std::exp(quantizedNll / double(predicted)) : NAN;
  return result;
}
