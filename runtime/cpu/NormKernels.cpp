//===- NormKernels.cpp - rms_norm and layer_norm over the last axis -------===//
//
// Sums in double, one f32 rounding per result (as the reference interpreter).

#include "runtime/cpu/CpuKernels.h"

#include <algorithm>
#include <cmath>

namespace infer::cpu {

namespace {

/// Rows of `width` elements a norm's output holds: one per token, or per
/// (token, head) for a per-head norm (Qwen3's q/k RMSNorm, Persimmon's q/k
/// LayerNorm over [batch, seq, heads, head_dim]).
StatusOr<int64_t> normRows(const LaunchArgs &args, int64_t width) {
  if (width <= 0 || args.outputs[0].elements % width != 0 ||
      (args.outputs[0].elements / width) % std::max<int64_t>(args.tokens, 1) != 0)
    return args.error("output of " + std::to_string(args.outputs[0].elements) +
                      " elements is not whole rows of " + std::to_string(width) + " per token");
  return args.outputs[0].elements / width;
}

} // namespace

Status runRmsNorm(const LaunchArgs &args) {
  ASSIGN_OR_RETURN(const View *input, args.required(artifact::ROLE_INPUT));
  ASSIGN_OR_RETURN(const View *weight, args.required(artifact::ROLE_WEIGHT));
  ASSIGN_OR_RETURN(int64_t width, args.intAttr("features"));
  ASSIGN_OR_RETURN(double epsilon, args.floatAttr("epsilon"));
  double weightOffset = args.floatAttr("weight_offset", 0.0);
  ASSIGN_OR_RETURN(int64_t rows, normRows(args, width));
  RETURN_IF_ERROR(args.expectF32(*input, rows * width, "input"));
  RETURN_IF_ERROR(args.expectF32(*weight, width, "weight"));
  RETURN_IF_ERROR(args.expectF32(args.outputs[0], rows * width, "output"));
  const float *gamma = weight->f32();
  for (int64_t r = 0; r < rows; ++r) {
    const float *x = input->f32() + r * width;
    float *y = args.outputs[0].mutableF32() + r * width;
    double sumOfSquares = 0;
    for (int64_t i = 0; i < width; ++i)
      sumOfSquares += double(x[i]) * x[i];
    double invRms = 1.0 / std::sqrt(sumOfSquares / double(width) + double(float(epsilon)));
    for (int64_t i = 0; i < width; ++i)
      y[i] = float(x[i] * invRms * (double(gamma[i]) + float(weightOffset)));
  }
  return okStatus();
}

Status runLayerNorm(const LaunchArgs &args) {
  ASSIGN_OR_RETURN(const View *input, args.required(artifact::ROLE_INPUT));
  ASSIGN_OR_RETURN(const View *scale, args.required(artifact::ROLE_SCALE));
  const View *bias = args.operand(artifact::ROLE_BIAS);
  ASSIGN_OR_RETURN(int64_t width, args.intAttr("features"));
  ASSIGN_OR_RETURN(double epsilon, args.floatAttr("epsilon"));
  ASSIGN_OR_RETURN(int64_t rows, normRows(args, width));
  RETURN_IF_ERROR(args.expectF32(*input, rows * width, "input"));
  RETURN_IF_ERROR(args.expectF32(*scale, width, "scale"));
  if (bias)
    RETURN_IF_ERROR(args.expectF32(*bias, width, "bias"));
  RETURN_IF_ERROR(args.expectF32(args.outputs[0], rows * width, "output"));
  for (int64_t r = 0; r < rows; ++r) {
    const float *x = input->f32() + r * width;
    float *y = args.outputs[0].mutableF32() + r * width;
    double mean = 0, variance = 0;
    for (int64_t i = 0; i < width; ++i)
      mean += x[i];
    mean /= double(width);
    for (int64_t i = 0; i < width; ++i)
      variance += (x[i] - mean) * (x[i] - mean);
    variance /= double(width);
    double invStdDev = 1.0 / std::sqrt(variance + double(float(epsilon)));
    for (int64_t i = 0; i < width; ++i) {
      double value = (x[i] - mean) * invStdDev * scale->f32()[i];
      if (bias)
        value += bias->f32()[i];
      y[i] = float(value);
    }
  }
  return okStatus();
}

} // namespace infer::cpu
