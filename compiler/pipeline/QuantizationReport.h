//===- QuantizationReport.h - what --quantize costs in accuracy -*- C++ -*-===//
//
// `infer-compile --quantize ... --calibration FILE [--accuracy-gate KL]`:
// the optimized graph before and after the quantize stage, run on the
// reference interpreter over the calibration prompts, compared on the
// next-token distributions (docs/quantization.md, "Accuracy").
//
//===----------------------------------------------------------------------===//
#ifndef INFER_COMPILER_PIPELINE_QUANTIZATIONREPORT_H
#define INFER_COMPILER_PIPELINE_QUANTIZATIONREPORT_H

#include "compiler/pipeline/Pipeline.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace infer::pipeline {

struct QuantizationAccuracy {
  int64_t prompts = 0, positions = 0;
  /// Positions whose most likely next token is the same, as a fraction.
  double top1Agreement = 0;
  /// Mean over positions of KL(unquantized || quantized), in nats.
  double meanKl = 0;
  /// exp(mean negative log-likelihood of each prompt's own next tokens).
  double perplexity = 0, quantizedPerplexity = 0;
};

/// Runs `stages` on `module`, whose entry takes token ids [batch, seq] and
/// returns logits [batch, seq, vocab] first, measuring the last stage (the
/// quantize stage) on `prompts` (token ids, one prompt each), after
/// `refine` (AWQ, when given) has run on the quantized module. The module is
/// left fully optimized.
llvm::Expected<QuantizationAccuracy>
measureQuantization(mlir::ModuleOp module, const std::vector<PipelineStage> &stages,
                    const std::vector<std::vector<int64_t>> &prompts,
                    const std::function<llvm::Error(mlir::ModuleOp)> &refine = nullptr);

} // namespace infer::pipeline

#endif
