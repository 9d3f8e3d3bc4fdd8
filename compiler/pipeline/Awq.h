//===- Awq.h - activation-aware scales for int4 weights ---------*- C++ -*-===//
//
// `infer-compile --quantize int4 --method awq --calibration FILE`: after the
// quantize stage, each int4 graph.quantized_linear gets AWQ's per-input-
// channel scales (Lin et al., "AWQ: Activation-aware Weight Quantization",
// 2023): f = mean|x|^α over the calibration activations, normalized, with α
// on a grid chosen to minimize the layer's output error on them. The scales
// become a graph.constant `input_scale` of its quantize_weight (w * f is
// quantized) and of the linear (x / f is multiplied). Then the clipping
// search: per row and group, the ratio of its max |w f| to clamp it to before
// RTN, a graph.constant `clip` of the quantize_weight.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_COMPILER_PIPELINE_AWQ_H
#define INFER_COMPILER_PIPELINE_AWQ_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <vector>

namespace infer::pipeline {

/// Scales every int4 quantized linear of `module`'s entry (prompts: token
/// ids, run on the reference interpreter to collect each linear's inputs).
/// Prints one summary line to `log`.
llvm::Error applyAwq(mlir::ModuleOp module, const std::vector<std::vector<int64_t>> &prompts,
                     llvm::raw_ostream &log);

} // namespace infer::pipeline

#endif
