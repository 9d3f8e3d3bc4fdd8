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
#include <string>
#include <vector>

namespace infer::reference {

struct MoeShape {
  int64_t tokens = 0, hidden = 0, experts = 0, inter = 0, topK = 0;
  /// Divide the top-k probabilities by their sum (Mixtral, Qwen3-MoE; not
  /// Qwen2-MoE's default).
  bool normalize = true;
  /// DeepSeek-V3's routing: sigmoid scores instead of the softmax; experts
  /// chosen by score + scoreBias (the weights stay the scores); only the
  /// `topkGroups` best of `groups` equal groups of experts (a group's score:
  /// the sum of its two best) are eligible; the weights times `scale`.
  bool sigmoid = false;
  int64_t groups = 1, topkGroups = 1;
  double scale = 1.0;
};

/// Why `shape`'s routing cannot run, or "" when it can: top_k in [1, experts],
/// groups dividing the experts, topkGroups in [1, groups] leaving top_k
/// experts eligible, a finite scale. The reference and both backends check it.
std::string routingError(const MoeShape &shape);

/// The experts of one token, best first, and their routing weights: the
/// scores of `logits` (softmax or sigmoid), the `topK` largest of score +
/// `scoreBias` (nullptr: 0) among the eligible groups (ties: the lower
/// expert or group first, as ONNX TopK), renormalized when `normalize`,
/// times `scale`.
void routeToken(const double *logits, const float *scoreBias, const MoeShape &shape,
                std::vector<int64_t> &experts, std::vector<double> &weights);

/// x [tokens, hidden]; router [experts, hidden]; scoreBias [experts] or nullptr; gateUp [experts, 2
/// * inter, hidden] (the gate's rows, then up's); down [experts, hidden, inter]. dst [tokens,
/// hidden]: sum over the token's experts e of weight_e * down_e · (silu(gate_e · x) * (up_e · x)).
void moe(const float *x, const float *router, const float *gateUp, const float *down,
         const float *scoreBias, const MoeShape &shape, float *dst);

} // namespace infer::reference

#endif // INFER_RUNTIME_BASE_REFERENCEMOE_H
