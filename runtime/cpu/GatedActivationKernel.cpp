//===- GatedActivationKernel.cpp - out = act(gate) * up --------------------===//
//
// One packed [gate | up] operand (2 * features per token) or gate and up.

#include "runtime/cpu/CpuKernels.h"

#include <cmath>

namespace infer::cpu {
namespace {

constexpr double kPi = 3.14159265358979323846;
double silu(double x) { return x / (1.0 + std::exp(-x)); }
double geluErf(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double geluTanh(double x) {
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / kPi) * (x + 0.044715 * x * x * x)));
}

} // namespace

Status runGatedActivation(const LaunchArgs &args) {
  std::vector<const View *> inputs = args.all(artifact::ROLE_INPUTS);
  ASSIGN_OR_RETURN(std::string activation, args.stringAttr("activation"));
  ASSIGN_OR_RETURN(int64_t width, args.intAttr("features"));
  double (*act)(double) = nullptr;
  if (activation == "silu")
    act = silu;
  else if (activation == "gelu")
    act = geluErf;
  else if (activation == "gelu_tanh")
    act = geluTanh;
  else
    return unimplementedError("gated_activation: activation '" + activation +
                              "' is not supported by the cpu backend (silu, gelu, gelu_tanh)");
  const float *gate = nullptr, *up = nullptr;
  int64_t stride = width, upOffset = 0;
  if (inputs.size() == 1) {
    RETURN_IF_ERROR(args.expectF32(*inputs[0], args.tokens * 2 * width, "packed gate_up"));
    gate = up = inputs[0]->f32();
    stride = 2 * width;
    upOffset = width;
  } else if (inputs.size() == 2) {
    RETURN_IF_ERROR(args.expectF32(*inputs[0], args.tokens * width, "gate"));
    RETURN_IF_ERROR(args.expectF32(*inputs[1], args.tokens * width, "up"));
    gate = inputs[0]->f32();
    up = inputs[1]->f32();
  } else {
    return args.error("takes gate_up or gate and up");
  }
  const View &out = args.outputs[0];
  RETURN_IF_ERROR(args.expectF32(out, args.tokens * width, "output"));
  float *dst = out.mutableF32();
  for (int64_t r = 0; r < args.tokens; ++r)
    for (int64_t i = 0; i < width; ++i)
      dst[r * width + i] = float(act(gate[r * stride + i]) * up[r * stride + upOffset + i]);
  return okStatus();
}

} // namespace infer::cpu
