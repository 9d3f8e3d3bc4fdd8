//===- AttentionMask.cpp --------------------------------------------------===//

#include "dialects/graph/Transforms/AttentionMask.h"

#include "dialects/graph/Transforms/MatchUtils.h"
#include "dialects/graph/Transforms/Validation.h"
#include "runtime/base/ReferenceMath.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "llvm/ADT/SetVector.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

using namespace mlir;
using namespace infer::graph;

namespace {

/// A hidden key's mask value: fp16's lowest (-65504) and below. Its weight
/// exp(score + mask - max) is 0 in fp32 unless scores span 10^4.
constexpr double kMasked = -1e4;

/// The largest plausible window constant in the mask's slice: a sliding
/// window of W tokens looks causal until the sequence is longer than W.
int64_t largestMaskConstant(Value mask) {
  llvm::SetVector<Operation *> slice;
  BackwardSliceOptions options;
  options.omitBlockArguments = true;
  if (Operation *def = mask.getDefiningOp())
    (void)getBackwardSlice(def, &slice, options);
  int64_t largest = 0;
  for (Operation *op : slice)
    if (auto values =
            getConstantInts(op->getNumResults() ? op->getResult(0) : Value()))
      for (int64_t v : *values)
        if (std::llabs(v) < (int64_t(1) << 40))
          largest = std::max<int64_t>(largest, std::llabs(v));
  return largest;
}

} // namespace

std::optional<CausalMask> infer::graph::readCausalMask(func::FuncOp func,
                                                       Value mask) {
  int64_t largest = largestMaskConstant(mask);
  if (largest > kMaxCheckedWindow)
    return std::nullopt;
  // Past every constant; where the mask cannot be built that long (MPT's
  // ALiBi table ends at its max_seq_len), at the longest length it can.
  int64_t seq = 0;
  std::optional<ShapeOnlyValue> value;
  for (int64_t length : {largest + 2, largest, int64_t(17)}) {
    seq = std::max<int64_t>(length, 17);
    if ((value = evaluateShapeOnly(func, mask, 1, seq)))
      break;
  }
  // An empty mask (a zero-sized broadcast dim) has no matrix to read.
  if (!value || value->shape.size() < 2 || value->shape.back() != seq ||
      value->shape[value->shape.size() - 2] != seq || value->values.empty() ||
      value->values.size() % size_t(seq * seq) != 0)
    return std::nullopt;
  // Every [seq, seq] matrix of the mask (one per broadcast batch or head)
  // must be the same windowed causal mask; the last row gives the window.
  // Visible entries are 0, or slope * j plus a constant per row (ALiBi's
  // bias, the row's constant cancelling in the softmax).
  const std::vector<double> &v = value->values;
  auto visible = [](double x) { return x > kMasked; };
  int64_t firstOfLast = 0;
  while (firstOfLast < seq && !visible(v[(seq - 1) * seq + firstOfLast]))
    ++firstOfLast;
  CausalMask form;
  form.window = firstOfLast == 0 ? 0 : seq - firstOfLast;
  form.checkedLength = seq;
  bool biased = false;
  for (size_t base = 0; base < v.size(); base += size_t(seq * seq)) {
    const double *m = v.data() + base;
    double slope = m[(seq - 1) * seq + seq - 1] - m[(seq - 1) * seq + seq - 2];
    for (int64_t i = 0; i < seq; ++i) {
      int64_t first = form.window > 0 ? std::max<int64_t>(0, i - form.window + 1) : 0;
      double diagonal = m[i * seq + i];
      for (int64_t j = 0; j < seq; ++j) {
        double x = m[i * seq + j];
        if (visible(x) != (j >= first && j <= i))
          return std::nullopt;
        double expected = diagonal + slope * double(j - i);
        if (visible(x) && std::abs(x - expected) > 1e-5 * std::max(1.0, std::abs(x)) * seq)
          return std::nullopt;
      }
    }
    biased |= slope != 0;
    form.slopes.push_back(slope);
  }
  if (!biased)
    form.slopes.clear();
  return form;
}

std::vector<double> infer::graph::alibiSlopes(int64_t heads) {
  std::vector<double> slopes;
  for (int64_t h = 0; h < heads; ++h)
    slopes.push_back(infer::reference::alibiSlope(h, heads));
  return slopes;
}
