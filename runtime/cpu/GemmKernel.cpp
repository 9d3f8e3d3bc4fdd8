//===- GemmKernel.cpp - out[T, n] = input[T, k] x weight (+ bias) (+ residual)
//
// The weight is [k, n], or [n, k] with transpose_weight. Double accumulation.

#include "runtime/cpu/CpuKernels.h"

#include <algorithm>
#include <vector>

namespace infer::cpu {

Status runGemm(const LaunchArgs &args) {
  ASSIGN_OR_RETURN(const View *input, args.required(artifact::ROLE_INPUT));
  ASSIGN_OR_RETURN(const View *weight, args.required(artifact::ROLE_WEIGHT));
  const View *bias = args.operand(artifact::ROLE_BIAS);
  const View *residual = args.operand(artifact::ROLE_RESIDUAL);
  ASSIGN_OR_RETURN(int64_t k, args.intAttr("k"));
  ASSIGN_OR_RETURN(int64_t n, args.intAttr("n"));
  bool transposed = args.boolAttr("transpose_weight", false);
  int64_t rows = args.tokens;
  RETURN_IF_ERROR(args.expectF32(*input, rows * k, "input"));
  RETURN_IF_ERROR(args.expectF32(*weight, k * n, "weight"));
  if (bias)
    RETURN_IF_ERROR(args.expectF32(*bias, n, "bias"));
  if (residual)
    RETURN_IF_ERROR(args.expectF32(*residual, rows * n, "residual"));
  const View &out = args.outputs[0];
  RETURN_IF_ERROR(args.expectF32(out, rows * n, "output"));
  const float *w = weight->f32();
  std::vector<double> acc(static_cast<size_t>(n));
  for (int64_t r = 0; r < rows; ++r) {
    const float *x = input->f32() + r * k;
    if (transposed) {
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        const float *column = w + j * k;
        for (int64_t i = 0; i < k; ++i)
          sum += double(x[i]) * column[i];
        acc[j] = sum;
      }
    } else {
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t i = 0; i < k; ++i) {
        double xi = x[i];
        const float *row = w + i * n;
        for (int64_t j = 0; j < n; ++j)
          acc[j] += xi * row[j];
      }
    }
    // The residual may alias nothing the loop above reads (the planner keeps
    // a launch's inputs and output apart), so write in place.
    float *y = out.mutableF32() + r * n;
    for (int64_t j = 0; j < n; ++j) {
      double value = acc[j];
      if (bias)
        value += bias->f32()[j];
      if (residual)
        value += residual->f32()[r * n + j];
      y[j] = float(value);
    }
  }
  return okStatus();
}

} // namespace infer::cpu
