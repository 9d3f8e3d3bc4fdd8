//===- QuantizedWeights.cpp - the stored bytes of graph.quantize_weight ---===//

#include "compiler/artifact/QuantizedWeights.h"

#include "compiler/artifact/TransposeTiled.h"
#include "runtime/base/LowPrecision.h"
#include "runtime/base/Quantization.h"

#include "llvm/Support/Parallel.h"

#include <cstring>

using namespace mlir;

namespace infer::compiler {
namespace {

/// Calls `fn` with the codec (TransposeTiled.h) of a float element type;
/// false for others.
template <typename Fn> bool withCodec(Type type, Fn fn) {
  if (type.isF32())
    fn(F32Codec());
  else if (type.isF64())
    fn(F64Codec());
  else if (type.isBF16())
    fn(BF16Codec());
  else if (type.isF16())
    fn(F16Codec());
  else
    return false;
  return true;
}

/// Decodes the rows x cols elements at `in` into f32 at `out`, whose rows are
/// `outStride` floats apart (rows in parallel).
template <typename Codec>
void decodeRows(const char *in, uint64_t rows, uint64_t cols, float *out, uint64_t outStride) {
  using Bits = typename Codec::Bits;
  llvm::parallelFor(0, rows, [&](size_t r) {
    const char *from = in + r * cols * sizeof(Bits);
    float *to = out + r * outStride;
    for (uint64_t c = 0; c < cols; ++c) {
      Bits bits;
      std::memcpy(&bits, from + c * sizeof(Bits), sizeof(Bits));
      to[c] = Codec::decode(bits);
    }
  });
}

/// The f32 rows [n, k] (one per output channel) of the weight `op` reads:
/// the concatenation [rows, cols] of its graph.weight sources along the
/// pack's axis, transposed when the pack's and the op's layouts say so. Each
/// source is decoded (and transposed) straight into its place:
///
///   not transposed: axis 0 places a source at row `offset`, axis 1 at column
///   `offset` (rows `cols` apart); transposed: its transpose lands at column
///   `offset` (axis 0) or row `offset` (axis 1) of the [cols, rows] result.
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
  std::vector<float> result(static_cast<size_t>(rows * cols));
  uint64_t offset = 0; // rows (axis 0) or columns (axis 1) placed so far
  for (graph::WeightOp part : parts) {
    auto type = cast<RankedTensorType>(part.getType());
    const char *data = part.getValue().getData().data();
    uint64_t partRows = type.getDimSize(0), partCols = type.getDimSize(1);
    bool known = withCodec(type.getElementType(), [&](auto codec) {
      using Codec = decltype(codec);
      if (!transpose) {
        float *place = result.data() + (axis == 0 ? offset * cols : offset);
        return decodeRows<Codec>(data, partRows, partCols, place, cols);
      }
      char *place = reinterpret_cast<char *>(result.data() + (axis == 0 ? offset : offset * rows));
      transposeTiled<typename Codec::Bits, float>(data, partRows, partCols, place, rows,
                                                  Codec::decode);
    });
    if (!known)
      return std::nullopt;
    offset += axis == 0 ? partRows : partCols;
  }
  n = transpose ? cols : rows;
  k = transpose ? rows : cols;
  return result;
}

/// Calls fn(begin, end) on consecutive ranges of [0, n) rows in parallel.
template <typename Fn> void forRowRanges(int64_t n, Fn fn) {
  constexpr int64_t kRows = 64;
  llvm::parallelFor(0, (n + kRows - 1) / kRows, [&](size_t chunk) {
    int64_t begin = static_cast<int64_t>(chunk) * kRows;
    fn(begin, std::min(begin + kRows, n));
  });
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
    forRowRanges(n, [&](int64_t begin, int64_t end) {
      quant::scaleColumns(rows->data() + begin * k, end - begin, k, f.data());
    });
  }
  if (Value clip = op.getClip()) {
    auto constant = clip.getDefiningOp<graph::ConstantOp>();
    auto values = constant ? dyn_cast<DenseFPElementsAttr>(constant.getValue()) : nullptr;
    if (!values || group <= 0 || values.getNumElements() != n * (k / group))
      return std::nullopt;
    std::vector<float> ratio(values.getValues<float>().begin(), values.getValues<float>().end());
    forRowRanges(n, [&](int64_t begin, int64_t end) {
      quant::clipGroups(rows->data() + begin * k, end - begin, k, group,
                        ratio.data() + begin * (k / group));
    });
  }
  std::vector<uint8_t> q(static_cast<size_t>(quant::quantizedBytes(*scheme, n, k)));
  std::vector<float> scaleValues(static_cast<size_t>(quant::scaleCount(*scheme, n, k, group)));
  // Rows quantize independently; an int4 row is k / 2 whole bytes (k is even).
  forRowRanges(n, [&](int64_t begin, int64_t end) {
    quant::quantize(*scheme, rows->data() + begin * k, end - begin, k, group,
                    q.data() + quant::quantizedBytes(*scheme, begin, k),
                    scaleValues.data() + quant::scaleCount(*scheme, begin, k, group));
  });
  QuantizedWeightBytes bytes{std::vector<char>(q.begin(), q.end()),
                             std::vector<char>(scaleValues.size() * 4)};
  std::memcpy(bytes.scales.data(), scaleValues.data(), bytes.scales.size());
  return bytes;
}

} // namespace infer::compiler
