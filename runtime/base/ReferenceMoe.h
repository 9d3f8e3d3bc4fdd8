//===- ReferenceMoe.h - mixture-of-experts math of the references -*- C++ -*-===//
//
// The loops the reference interpreter and the cpu backend share for a
// mixture-of-experts MLP (Mixtral, Qwen-MoE): a router picks each token's
// top-k experts, and the token's output is the routing-weighted sum of those
// experts' gated MLPs. Double accumulation, one f32 rounding per result.
// LLVM-free.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_BASE_REFERENCEMOE_H
#define INFER_RUNTIME_BASE_REFERENCEMOE_H

#include <cstdint>
#include <vector>

namespace infer::reference {

struct MoeShape {
  int64_t tokens = 0, hidden = 0, experts = 0, inter = 0, topK = 0;
  /// Divide the top-k probabilities by their sum (Mixtral, Qwen3-MoE; not
  /// Qwen2-MoE's default).
  bool normalize = true;
};

/// The experts of one token, best first, and their routing weights: the
/// softmax of `logits` over the experts, its `topK` largest (ties: the lower
/// expert first, as ONNX TopK), renormalized when `normalize`.
void routeToken(const double *logits, const MoeShape &shape, std::vector<int64_t> &experts,
                std::vector<double> &weights);

/// x [tokens, hidden]; router [experts, hidden]; gateUp [experts, 2 * inter,
/// hidden] (the gate's rows, then up's); down [experts, hidden, inter]. dst
/// [tokens, hidden]: sum over the token's experts e of weight_e *
/// down_e · (silu(gate_e · x) * (up_e · x)).
void moe(const float *x, const float *router, const float *gateUp, const float *down,
         const MoeShape &shape, float *dst);

} // namespace infer::reference

#endif // INFER_RUNTIME_BASE_REFERENCEMOE_H
