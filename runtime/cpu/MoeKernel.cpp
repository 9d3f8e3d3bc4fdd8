//===- MoeKernel.cpp - a mixture-of-experts MLP per token -----------------===//
//
// exec.moe on runtime/base/ReferenceMoe.h's loops, the ones the reference
// interpreter runs: the backend and the interpreter agree bit for bit.

#include "runtime/base/ReferenceMoe.h"
#include "runtime/cpu/CpuKernels.h"

namespace infer::cpu {

Status runMoe(const LaunchArgs &args) {
  ASSIGN_OR_RETURN(const View *input, args.required(artifact::ROLE_INPUT));
  ASSIGN_OR_RETURN(const View *router, args.required(artifact::ROLE_ROUTER));
  ASSIGN_OR_RETURN(const View *gateUp, args.required(artifact::ROLE_GATE_UP));
  ASSIGN_OR_RETURN(const View *down, args.required(artifact::ROLE_DOWN));
  ASSIGN_OR_RETURN(int64_t hidden, args.intAttr("hidden"));
  ASSIGN_OR_RETURN(int64_t experts, args.intAttr("experts"));
  ASSIGN_OR_RETURN(int64_t inter, args.intAttr("inter"));
  ASSIGN_OR_RETURN(int64_t topK, args.intAttr("top_k"));
  if (hidden < 1 || experts < 1 || inter < 1 || topK < 1 || topK > experts)
    return args.error("hidden, experts, inter must be positive and top_k in [1, experts]");
  RETURN_IF_ERROR(args.expectF32(*input, args.tokens * hidden, "input"));
  RETURN_IF_ERROR(args.expectF32(*router, experts * hidden, "router"));
  RETURN_IF_ERROR(args.expectF32(*gateUp, experts * 2 * inter * hidden, "gate_up"));
  RETURN_IF_ERROR(args.expectF32(*down, experts * hidden * inter, "down"));
  const View &out = args.outputs[0];
  RETURN_IF_ERROR(args.expectF32(out, args.tokens * hidden, "output"));
  reference::MoeShape shape{args.tokens, hidden, experts,
                            inter,       topK,   args.boolAttr("normalize", true)};
  StatusOr<std::string> scoringAttr = args.stringAttr("scoring");
  const std::string scoring = scoringAttr.ok() ? *scoringAttr : "softmax";
  if (scoring != "softmax" && scoring != "sigmoid")
    return args.error("scoring must be softmax or sigmoid, got '" + scoring + "'");
  shape.sigmoid = scoring == "sigmoid";
  shape.groups = args.intAttr("groups", 1);
  shape.topkGroups = args.intAttr("topk_groups", 1);
  shape.scale = args.floatAttr("scale", 1.0);
  if (std::string error = reference::routingError(shape); !error.empty())
    return args.error(error);
  const View *bias = args.operand(artifact::ROLE_SCORE_BIAS);
  if (bias)
    RETURN_IF_ERROR(args.expectF32(*bias, experts, "score_bias"));
  reference::moe(input->f32(), router->f32(), gateUp->f32(), down->f32(),
                 bias ? bias->f32() : nullptr, shape, out.mutableF32());
  return okStatus();
}

} // namespace infer::cpu
