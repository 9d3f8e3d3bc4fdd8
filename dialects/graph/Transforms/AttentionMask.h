//===- AttentionMask.h - what an exported attention mask says ---*- C++ -*-===//
//
// Exporters build the additive mask of attention from the sequence length
// (HF's masking utilities: causal, sliding window, packed-sequence checks).
// RaiseAttention replaces the mask by attributes of graph.attention; this
// reads which ones from the mask's values at a length where they differ.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_DIALECTS_GRAPH_TRANSFORMS_ATTENTIONMASK_H
#define INFER_DIALECTS_GRAPH_TRANSFORMS_ATTENTIONMASK_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>
#include <vector>

namespace infer::graph {

/// A causal mask, with a sliding window of `window` keys (the query's own
/// position and window - 1 before it) when window > 0.
struct CausalMask {
  int64_t window = 0;
  /// The sequence length the mask was read at: a window is seen only past it.
  int64_t checkedLength = 0;
  /// ALiBi: visible key j of query i has bias slopes[m] * (j - i) (plus a
  /// constant per row), m the mask's [seq, seq] matrix (one per head, in
  /// order, broadcast over the batch); empty when there is no bias.
  std::vector<double> slopes;
};

/// The ALiBi slopes of `heads` heads (Press et al.; BLOOM's, MPT's and
/// Falcon's build_alibi_tensor): 2^(-8 (h + 1) / n) for the first n = the
/// largest power of two <= heads, then the odd powers of 2^(-4 / n).
std::vector<double> alibiSlopes(int64_t heads);

/// The causal mask `mask` ([..., seq, seq], 0 or an ALiBi bias where a key is
/// visible and at most -1e4 where not, a function of the sequence length only), read at
/// batch 1 and a length past every window constant of its slice; nullopt
/// when it is anything else or too long to evaluate (windows past
/// kMaxCheckedWindow).
std::optional<CausalMask> readCausalMask(mlir::func::FuncOp func,
                                         mlir::Value mask);

constexpr int64_t kMaxCheckedWindow = 8192;

} // namespace infer::graph

#endif // INFER_DIALECTS_GRAPH_TRANSFORMS_ATTENTIONMASK_H
