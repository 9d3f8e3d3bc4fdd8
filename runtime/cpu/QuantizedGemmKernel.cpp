//===- QuantizedGemmKernel.cpp - out[T, n] = input x dequantize(q, scales)ᵀ ===//
//
// The weight [n, k] is dequantized ((q - zero) * scale) a row at a time
// (runtime/base/Quantization.h), each row used for every token; fp8 rounds the input rows
// to E4M3 first. Double accumulation over k in order, as GemmKernel.cpp and
// the reference interpreter's quantized_linear, so all three agree exactly.

#include "runtime/base/Quantization.h"
#include "runtime/cpu/CpuKernels.h"

#include <vector>

namespace infer::cpu {

Status runQuantizedGemm(const LaunchArgs &args) {
  ASSIGN_OR_RETURN(const View *input, args.required(artifact::ROLE_INPUT));
  ASSIGN_OR_RETURN(const View *q, args.required(artifact::ROLE_Q));
  ASSIGN_OR_RETURN(const View *scales, args.required(artifact::ROLE_SCALES));
  const View *bias = args.operand(artifact::ROLE_BIAS);
  const View *residual = args.operand(artifact::ROLE_RESIDUAL);
  const View *inputScale = args.operand(artifact::ROLE_INPUT_SCALE);
  const View *zeros = args.operand(artifact::ROLE_ZEROS);
  ASSIGN_OR_RETURN(int64_t k, args.intAttr("k"));
  ASSIGN_OR_RETURN(int64_t n, args.intAttr("n"));
  ASSIGN_OR_RETURN(int64_t group, args.intAttr("group_size"));
  ASSIGN_OR_RETURN(std::string name, args.stringAttr("scheme"));
  std::optional<quant::Scheme> scheme = quant::parseScheme(name);
  if (!scheme)
    return args.error("unknown quantization scheme '" + name + "'");
  if (std::string error = quant::shapeError(*scheme, k, group); !error.empty())
    return args.error(error);
  if (q->type != artifact::ELEMENT_TYPE_U8 || q->elements != quant::quantizedBytes(*scheme, n, k))
    return args.error("q must hold the " + std::to_string(quant::quantizedBytes(*scheme, n, k)) +
                      " bytes of a [" + std::to_string(n) + ", " + std::to_string(k) + "] " + name +
                      " weight");
  RETURN_IF_ERROR(args.expectF32(*scales, quant::scaleCount(*scheme, n, k, group), "scales"));
  if (zeros && !quant::isGrouped(*scheme))
    return args.error(name + " weights have no zero points");
  if (zeros)
    RETURN_IF_ERROR(args.expectF32(*zeros, quant::scaleCount(*scheme, n, k, group), "zeros"));
  int64_t rows = args.tokens;
  RETURN_IF_ERROR(args.expectF32(*input, rows * k, "input"));
  if (bias)
    RETURN_IF_ERROR(args.expectF32(*bias, n, "bias"));
  if (residual)
    RETURN_IF_ERROR(args.expectF32(*residual, rows * n, "residual"));
  if (inputScale)
    RETURN_IF_ERROR(args.expectF32(*inputScale, k, "input_scale"));
  const View &out = args.outputs[0];
  RETURN_IF_ERROR(args.expectF32(out, rows * n, "output"));

  std::vector<float> x(input->f32(), input->f32() + rows * k);
  for (int64_t r = 0; inputScale && r < rows; ++r)
    for (int64_t i = 0; i < k; ++i)
      x[r * k + i] /= inputScale->f32()[i];
  if (*scheme == quant::Scheme::Fp8)
    for (int64_t r = 0; r < rows; ++r)
      quant::fakeQuantizeRowFp8(x.data() + r * k, k);
  // The residual may be the output (an in-place epilogue): read it for
  // column j before writing column j, one column at a time.
  std::vector<float> weightRow(static_cast<size_t>(k));
  const auto *bytes = static_cast<const uint8_t *>(q->data);
  float *y = out.mutableF32();
  for (int64_t j = 0; j < n; ++j) {
    quant::dequantizeRow(*scheme, bytes, scales->f32(), zeros ? zeros->f32() : nullptr, k, group, j,
                         weightRow.data());
    for (int64_t r = 0; r < rows; ++r) {
      double sum = 0;
      const float *xr = x.data() + r * k;
      for (int64_t i = 0; i < k; ++i)
        sum += double(xr[i]) * weightRow[i];
      if (bias)
        sum += bias->f32()[j];
      if (residual)
        sum += residual->f32()[r * n + j];
      y[r * n + j] = float(sum);
    }
  }
  return okStatus();
}

} // namespace infer::cpu
