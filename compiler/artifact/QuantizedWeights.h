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

/// The stored bytes of both of a graph.quantize_weight's results.
struct QuantizedWeightBytes {
  std::vector<char> q;
  std::vector<char> scales; ///< f32, little endian
};

/// `op`'s q and scales; nullopt when its weight is not a graph.weight or a
/// pack of them in f32, bf16, f16 or f64 (or its input_scale no constant).
std::optional<QuantizedWeightBytes> quantizedWeightBytes(graph::QuantizeWeightOp op);

} // namespace infer::compiler

#endif // INFER_COMPILER_ARTIFACT_QUANTIZEDWEIGHTS_H
