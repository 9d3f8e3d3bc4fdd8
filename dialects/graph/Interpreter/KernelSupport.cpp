//===- KernelSupport.cpp - helpers shared by the reference kernels --------===//

#include "dialects/graph/Interpreter/Interpreter.h"
#include "dialects/graph/Interpreter/Kernels.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cstring>
#include <limits>

using namespace infer::interp;
using namespace infer::interp::kernels;

namespace {
/// The most elements one tensor may have (16 GiB of f32). Shapes come from
/// data (Range, ConstantOfShape, Expand, Tile), so a corrupt value must give
/// an error rather than an allocation failure.
constexpr int64_t kMaxElements = int64_t(1) << 32;
/// ScopedElementLimit's cap on this thread.
thread_local int64_t scopedMaxElements = kMaxElements;
/// What ScopedWorkLimit leaves of its cap on this thread (unbounded outside one).
constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max();
thread_local int64_t scopedWorkLeft = kUnbounded;
} // namespace

ScopedWorkLimit::ScopedWorkLimit(int64_t maxElements)
    : previous_(scopedWorkLeft), start_(std::min(scopedWorkLeft, maxElements)) {
  scopedWorkLeft = start_;
}

// The enclosing scope is charged what this one spent.
ScopedWorkLimit::~ScopedWorkLimit() {
  const int64_t spent = start_ - scopedWorkLeft;
  scopedWorkLeft = previous_ == kUnbounded ? kUnbounded : std::max<int64_t>(0, previous_ - spent);
}

llvm::Error kernels::chargeWork(int64_t elements) {
  if (scopedWorkLeft == kUnbounded)
    return llvm::Error::success();
  if (elements > scopedWorkLeft) {
    scopedWorkLeft = 0;
    return kernelError("the evaluation passed its bound on computed elements");
  }
  scopedWorkLeft -= elements;
  return llvm::Error::success();
}

ScopedElementLimit::ScopedElementLimit(int64_t maxElements) : previous_(scopedMaxElements) {
  scopedMaxElements = std::min(previous_, maxElements);
}

ScopedElementLimit::~ScopedElementLimit() { scopedMaxElements = previous_; }

llvm::Error kernels::kernelError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

int64_t kernels::product(llvm::ArrayRef<int64_t> dims) {
  int64_t result = 1;
  for (int64_t dim : dims)
    result *= dim;
  return result;
}

Shape kernels::stridesOf(llvm::ArrayRef<int64_t> shape) {
  Shape strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

llvm::Error kernels::checkElements(llvm::ArrayRef<int64_t> shape) {
  // Multiply only the nonzero dims so that overflow cannot hide behind a 0.
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0)
      return kernelError("shape " + formatShape(shape) + " has a negative dim");
    if (dim == 0)
      continue;
    if (count > scopedMaxElements / dim)
      return kernelError("shape " + formatShape(shape) + " has more than " +
                         llvm::Twine(scopedMaxElements) + " elements");
    count *= dim;
  }
  return llvm::Error::success();
}

llvm::Expected<Tensor> kernels::allocate(DType dtype, Shape shape) {
  if (llvm::Error error = checkElements(shape))
    return std::move(error);
  return Tensor(dtype, std::move(shape));
}

llvm::Expected<int64_t> kernels::normalizeAxis(int64_t axis, int64_t rank,
                                               const llvm::Twine &what) {
  if (axis < -rank || axis >= rank)
    return kernelError(what + " " + llvm::Twine(axis) + " is out of range for rank " +
                       llvm::Twine(rank));
  return axis < 0 ? axis + rank : axis;
}

llvm::Expected<std::vector<int64_t>> kernels::readIndexVector(const Tensor &tensor,
                                                              const llvm::Twine &what) {
  if (tensor.dtype() != DType::I64)
    return kernelError(what + " must be an integer tensor, got " + dtypeName(tensor.dtype()));
  if (tensor.rank() > 1)
    return kernelError(what + " must be 1-D, got shape " + tensor.shapeString());
  return std::vector<int64_t>(tensor.i64(), tensor.i64() + tensor.numElements());
}

llvm::Expected<int64_t> kernels::readIndexScalar(const Tensor &tensor, const llvm::Twine &what) {
  if (tensor.dtype() != DType::I64)
    return kernelError(what + " must be an integer tensor, got " + dtypeName(tensor.dtype()));
  if (tensor.rank() > 1 || tensor.numElements() != 1)
    return kernelError(what + " must be a scalar, got shape " + tensor.shapeString());
  return tensor.i64()[0];
}

llvm::Error kernels::expectDType(const Tensor &tensor, llvm::ArrayRef<DType> allowed,
                                 const llvm::Twine &what) {
  if (llvm::is_contained(allowed, tensor.dtype()))
    return llvm::Error::success();
  std::string names;
  for (DType dtype : allowed)
    names += (names.empty() ? "" : " or ") + dtypeName(dtype).str();
  return kernelError(what + " must be " + names + ", got " + dtypeName(tensor.dtype()));
}

llvm::Expected<Shape> kernels::broadcastShapes(llvm::ArrayRef<int64_t> lhs,
                                               llvm::ArrayRef<int64_t> rhs) {
  size_t rank = std::max(lhs.size(), rhs.size());
  Shape result(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Align from the back: dim i of the result is dim i - (rank - size) of each input.
    int64_t l = i + lhs.size() >= rank ? lhs[i + lhs.size() - rank] : 1;
    int64_t r = i + rhs.size() >= rank ? rhs[i + rhs.size() - rank] : 1;
    if (l != r && l != 1 && r != 1)
      return kernelError("shapes " + formatShape(lhs) + " and " + formatShape(rhs) +
                         " are not broadcast-compatible");
    result[i] = l == 1 ? r : l;
  }
  return result;
}

Shape kernels::broadcastStrides(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> outShape) {
  Shape own = stridesOf(shape);
  Shape strides(outShape.size(), 0);
  size_t lead = outShape.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d)
    strides[lead + d] = (shape[d] == 1 && outShape[lead + d] != 1) ? 0 : own[d];
  return strides;
}

llvm::Expected<Tensor> kernels::broadcastTo(const Tensor &input, llvm::ArrayRef<int64_t> shape) {
  llvm::Expected<Shape> joined = broadcastShapes(input.shape(), shape);
  if (!joined)
    return joined.takeError();
  if (llvm::ArrayRef<int64_t>(*joined) != shape)
    return kernelError("shape " + input.shapeString() + " does not broadcast to " +
                       formatShape(shape));
  llvm::Expected<Tensor> out = allocate(input.dtype(), Shape(shape.begin(), shape.end()));
  if (!out)
    return out.takeError();
  int64_t size = elementSize(input.dtype());
  const char *src = static_cast<const char *>(input.rawData());
  char *dst = static_cast<char *>(out->rawData());
  OffsetWalker walker(shape, {broadcastStrides(input.shape(), shape)});
  for (int64_t i = 0, n = out->numElements(); i < n; ++i, walker.next())
    std::memcpy(dst + i * size, src + walker.offset(0) * size, size);
  return out;
}

OffsetWalker::OffsetWalker(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<Shape> strides,
                           llvm::ArrayRef<int64_t> bases)
    : dims(shape.begin(), shape.end()), operandStrides(strides.begin(), strides.end()),
      position(shape.size(), 0), offsets(strides.size(), 0) {
  for (size_t k = 0; k < bases.size(); ++k)
    offsets[k] = bases[k];
}

void OffsetWalker::next() {
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
    ++position[d];
    for (size_t k = 0; k < operandStrides.size(); ++k)
      offsets[k] += operandStrides[k][d];
    if (position[d] < dims[d])
      return;
    for (size_t k = 0; k < operandStrides.size(); ++k)
      offsets[k] -= operandStrides[k][d] * dims[d];
    position[d] = 0;
  }
}
