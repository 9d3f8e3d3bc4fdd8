//===- QuantizedWeights.cpp - the stored bytes of graph.quantize_weight ---===//

#include "compiler/artifact/QuantizedWeights.h"

#include "runtime/base/LowPrecision.h"
#include "runtime/base/Quantization.h"

#include <cstring>

using namespace mlir;

namespace infer::compiler {
namespace {

/// Element `index` of a float weight's data as f32; nullopt for other types.
std::optional<float> elementAsF32(Type type, const char *data, uint64_t index) {
  if (type.isF32()) {
    float value;
    std::memcpy(&value, data + 4 * index, 4);
    return value;
  }
  if (type.isF64()) {
    double value;
    std::memcpy(&value, data + 8 * index, 8);
    return static_cast<float>(value);
  }
  if (type.isBF16() || type.isF16()) {
    uint16_t bits;
    std::memcpy(&bits, data + 2 * index, 2);
    return type.isBF16() ? lowp::floatFromBF16(bits) : lowp::floatFromF16(bits);
  }
  return std::nullopt;
}

/// The f32 rows [n, k] (one per output channel) of the weight `op` reads:
/// the concatenation of its graph.weight sources, transposed when the pack's
/// and the op's layouts say so.
std::optional<std::vector<float>> sourceRows(graph::QuantizeWeightOp op, int64_t &n, int64_t &k) {
  SmallVector<graph::WeightOp> parts;
  int64_t axis = 0;
  bool transpose = op.getTranspose();
  if (auto pack = op.getWeight().getDefiningOp<graph::PackWeightsOp>()) {
    for (Value operand : pack.getWeights())
      parts.push_back(operand.getDefiningOp<graph::WeightOp>());
    axis = pack.getAxis();
    transpose ^= pack.getTranspose();
  } else {
    parts.push_back(op.getWeight().getDefiningOp<graph::WeightOp>());
  }
  int64_t rows = 0, cols = 0;
  for (graph::WeightOp part : parts) {
    auto type = part ? dyn_cast<RankedTensorType>(part.getType()) : RankedTensorType();
    if (!type || type.getRank() != 2 || !type.hasStaticShape())
      return std::nullopt;
    rows = axis == 0 ? rows + type.getDimSize(0) : type.getDimSize(0);
    cols = axis == 1 ? cols + type.getDimSize(1) : type.getDimSize(1);
  }
  std::vector<float> concat(static_cast<size_t>(rows * cols));
  int64_t offset = 0; // rows (axis 0) or columns (axis 1) placed so far
  for (graph::WeightOp part : parts) {
    auto type = cast<RankedTensorType>(part.getType());
    const char *data = part.getValue().getData().data();
    int64_t partRows = type.getDimSize(0), partCols = type.getDimSize(1);
    for (int64_t r = 0; r < partRows; ++r)
      for (int64_t c = 0; c < partCols; ++c) {
        std::optional<float> value =
            elementAsF32(type.getElementType(), data, static_cast<uint64_t>(r * partCols + c));
        if (!value)
          return std::nullopt;
        int64_t at = axis == 0 ? (offset + r) * cols + c : r * cols + offset + c;
        concat[static_cast<size_t>(at)] = *value;
      }
    offset += axis == 0 ? partRows : partCols;
  }
  if (!transpose) {
    n = rows, k = cols;
    return concat;
  }
  n = cols, k = rows;
  std::vector<float> transposed(concat.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      transposed[static_cast<size_t>(c * rows + r)] = concat[static_cast<size_t>(r * cols + c)];
  return transposed;
}

} // namespace

std::optional<QuantizedWeightBytes> quantizedWeightBytes(graph::QuantizeWeightOp op) {
  std::optional<quant::Scheme> scheme = quant::parseScheme(op.getScheme().str());
  int64_t n = 0, k = 0, group = static_cast<int64_t>(op.getGroupSize());
  std::optional<std::vector<float>> rows = scheme ? sourceRows(op, n, k) : std::nullopt;
  if (!rows)
    return std::nullopt;
  if (Value scale = op.getInputScale()) {
    auto constant = scale.getDefiningOp<graph::ConstantOp>();
    auto values = constant ? dyn_cast<DenseFPElementsAttr>(constant.getValue()) : nullptr;
    if (!values || values.getNumElements() != k)
      return std::nullopt;
    std::vector<float> f(values.getValues<float>().begin(), values.getValues<float>().end());
    quant::scaleColumns(rows->data(), n, k, f.data());
  }
  if (Value clip = op.getClip()) {
    auto constant = clip.getDefiningOp<graph::ConstantOp>();
    auto values = constant ? dyn_cast<DenseFPElementsAttr>(constant.getValue()) : nullptr;
    if (!values || group <= 0 || values.getNumElements() != n * (k / group))
      return std::nullopt;
    std::vector<float> ratio(values.getValues<float>().begin(), values.getValues<float>().end());
    quant::clipGroups(rows->data(), n, k, group, ratio.data());
  }
  std::vector<uint8_t> q(static_cast<size_t>(quant::quantizedBytes(*scheme, n, k)));
  std::vector<float> scaleValues(static_cast<size_t>(quant::scaleCount(*scheme, n, k, group)));
  quant::quantize(*scheme, rows->data(), n, k, group, q.data(), scaleValues.data());
  QuantizedWeightBytes bytes{std::vector<char>(q.begin(), q.end()),
                             std::vector<char>(scaleValues.size() * 4)};
  std::memcpy(bytes.scales.data(), scaleValues.data(), bytes.scales.size());
  return bytes;
}

} // namespace infer::compiler
