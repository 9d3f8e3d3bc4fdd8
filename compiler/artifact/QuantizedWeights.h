//===- QuantizedWeights.h - the stored bytes of graph.quantize_weight -*- C++ -*-===//
//
// The artifact writer stores a graph.quantize_weight's two results as two
// weights; their bytes are computed here from the mmap'd source weights
// (runtime/base/Quantization.h does the arithmetic).
//
//===----------------------------------------------------------------------===//
#ifndef INFER_COMPILER_ARTIFACT_QUANTIZEDWEIGHTS_H
#define INFER_COMPILER_ARTIFACT_QUANTIZEDWEIGHTS_H

#include "dialects/graph/IR/GraphOps.h"

#include <optional>
#include <vector>

namespace infer::compiler {

/// The bytes of `op`'s q, or with `scales` of its f32 scales (little
/// endian); nullopt when its weight is not a graph.weight or a pack of them
/// in f32, bf16, f16 or f64.
std::optional<std::vector<char>> quantizedWeightBytes(graph::QuantizeWeightOp op, bool scales);

} // namespace infer::compiler

#endif // INFER_COMPILER_ARTIFACT_QUANTIZEDWEIGHTS_H
