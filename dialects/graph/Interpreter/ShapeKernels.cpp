//===- ShapeKernels.cpp - shape manipulation, indexing and generators -----===//
//
// Data movement is element-type agnostic: elements are copied as bytes of
// elementSize(dtype).
//
//===----------------------------------------------------------------------===//

#include "dialects/graph/Interpreter/Kernels.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Parallel.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <type_traits>

using namespace infer::interp;
using namespace infer::interp::kernels;

namespace {

/// `input`'s elements under a new shape with the same element count.
Tensor withShape(const Tensor &input, Shape shape) {
  Tensor out(input.dtype(), std::move(shape));
  if (input.byteSize() > 0)
    std::memcpy(out.rawData(), input.rawData(), input.byteSize());
  return out;
}

/// Fills `out` with the elements of `input` at the offsets an OffsetWalker
/// over out's shape visits with `strides` from `base`.
void copyStrided(const Tensor &input, Tensor &out, const Shape &strides, int64_t base = 0) {
  int64_t size = elementSize(input.dtype());
  const char *src = static_cast<const char *>(input.rawData());
  char *dst = static_cast<char *>(out.rawData());
  OffsetWalker walker(out.shape(), {strides}, {base});
  for (int64_t i = 0, n = out.numElements(); i < n; ++i, walker.next())
    std::memcpy(dst + i * size, src + walker.offset(0) * size, size);
}

/// out[b, j, i] = in[b, i, j] of a [batch, rows, cols] view, elements of
/// kBytes: 64 x 64 tiles, each band of tile rows on a thread. The element
/// walk of copyStrided misses the cache at every element of a weight matrix,
/// and pack_weights transposes every weight of a model (billions of
/// elements on each run: the FP8 KV cache's calibration of an 8B model).
template <int64_t kBytes>
void transposeLastTwo(const char *src, char *dst, int64_t batch, int64_t rows, int64_t cols) {
  constexpr int64_t kTile = 64;
  const int64_t bands = (rows + kTile - 1) / kTile;
  llvm::parallelFor(0, size_t(batch * bands), [&](size_t task) {
    const int64_t b = int64_t(task) / bands, i0 = int64_t(task) % bands * kTile;
    const int64_t i1 = std::min(rows, i0 + kTile);
    const char *in = src + b * rows * cols * kBytes;
    char *out = dst + b * rows * cols * kBytes;
    for (int64_t j0 = 0; j0 < cols; j0 += kTile) {
      const int64_t j1 = std::min(cols, j0 + kTile);
      for (int64_t j = j0; j < j1; ++j)
        for (int64_t i = i0; i < i1; ++i)
          std::memcpy(out + (j * rows + i) * kBytes, in + (i * cols + j) * kBytes, kBytes);
    }
  });
}

/// Whether `perm` swaps the last two dimensions and keeps the others.
bool swapsLastTwo(llvm::ArrayRef<int64_t> perm) {
  const int64_t rank = int64_t(perm.size());
  if (rank < 2 || perm[rank - 2] != rank - 1 || perm[rank - 1] != rank - 2)
    return false;
  for (int64_t d = 0; d + 2 < rank; ++d)
    if (perm[d] != d)
      return false;
  return true;
}

/// Normalises `axes` against `rank` and rejects duplicates.
llvm::Expected<std::vector<int64_t>> normalizeAxes(std::vector<int64_t> axes, int64_t rank) {
  std::vector<bool> seen(rank, false);
  for (int64_t &axis : axes) {
    llvm::Expected<int64_t> normalized = normalizeAxis(axis, rank, "axis");
    if (!normalized)
      return normalized.takeError();
    if (seen[*normalized])
      return kernelError("axis " + llvm::Twine(axis) + " appears twice");
    seen[*normalized] = true;
    axis = *normalized;
  }
  return axes;
}

/// Reads a one-element operand of any dtype as double (Range's scalars).
llvm::Expected<double> readNumber(const Tensor &tensor, llvm::StringRef what) {
  if (tensor.rank() > 1 || tensor.numElements() != 1)
    return kernelError(what + " must be a scalar, got shape " + tensor.shapeString());
  if (tensor.dtype() == DType::F32)
    return double(tensor.f32()[0]);
  if (tensor.dtype() == DType::I64)
    return double(tensor.i64()[0]);
  return kernelError(what + " must be f32 or i64");
}

} // namespace

llvm::Expected<Tensor> kernels::shapeOf(const Tensor &input, int64_t start,
                                        std::optional<int64_t> end) {
  int64_t rank = input.rank();
  auto clampIndex = [rank](int64_t index) {
    if (index < 0)
      index += rank;
    return std::clamp<int64_t>(index, 0, rank);
  };
  int64_t first = clampIndex(start);
  int64_t last = end ? clampIndex(*end) : rank;
  std::vector<int64_t> dims;
  for (int64_t d = first; d < last; ++d)
    dims.push_back(input.shape()[d]);
  int64_t count = static_cast<int64_t>(dims.size());
  return Tensor::fromI64({count}, std::move(dims));
}

llvm::Expected<Tensor> kernels::reshape(const Tensor &data, const Tensor &shape, bool allowZero) {
  llvm::Expected<std::vector<int64_t>> requested = readIndexVector(shape, "shape");
  if (!requested)
    return requested.takeError();
  Shape dims = *requested;
  std::optional<size_t> inferred;
  bool hasZero = false;
  int64_t known = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == -1) {
      if (inferred)
        return kernelError("shape " + formatShape(*requested) + " has more than one -1");
      inferred = i;
      continue;
    }
    if (dims[i] < -1)
      return kernelError("shape " + formatShape(*requested) + " has a negative dim");
    if (dims[i] == 0) {
      hasZero = true;
      if (!allowZero) {
        if (static_cast<int64_t>(i) >= data.rank())
          return kernelError("shape " + formatShape(*requested) + " copies dim " + llvm::Twine(i) +
                             " (0) but the input " + data.shapeString() + " has rank " +
                             llvm::Twine(data.rank()));
        dims[i] = data.shape()[i];
      }
    }
    known *= dims[i];
  }
  if (allowZero && hasZero && inferred)
    return kernelError("shape " + formatShape(*requested) +
                       " has both 0 and -1, which allowzero forbids");
  if (inferred) {
    if (known == 0 || data.numElements() % known != 0)
      return kernelError("cannot reshape " + data.shapeString() + " (" +
                         llvm::Twine(data.numElements()) + " elements) to " +
                         formatShape(*requested));
    dims[*inferred] = data.numElements() / known;
  } else if (known != data.numElements()) {
    return kernelError("cannot reshape " + data.shapeString() + " (" +
                       llvm::Twine(data.numElements()) + " elements) to " +
                       formatShape(*requested) + " (" + llvm::Twine(known) + " elements)");
  }
  return withShape(data, std::move(dims));
}

llvm::Expected<Tensor> kernels::expand(const Tensor &input, const Tensor &shape) {
  llvm::Expected<std::vector<int64_t>> dims = readIndexVector(shape, "shape");
  if (!dims)
    return dims.takeError();
  for (int64_t dim : *dims)
    if (dim < 0)
      return kernelError("shape " + formatShape(*dims) + " has a negative dim");
  llvm::Expected<Shape> outShape = broadcastShapes(input.shape(), *dims);
  if (!outShape)
    return outShape.takeError();
  return broadcastTo(input, *outShape);
}

llvm::Expected<Tensor> kernels::tile(const Tensor &input, const Tensor &repeats) {
  llvm::Expected<std::vector<int64_t>> counts = readIndexVector(repeats, "repeats");
  if (!counts)
    return counts.takeError();
  if (static_cast<int64_t>(counts->size()) != input.rank())
    return kernelError("repeats has " + llvm::Twine(counts->size()) +
                       " entries but the input has rank " + llvm::Twine(input.rank()));
  Shape outShape(input.shape());
  for (size_t d = 0; d < outShape.size(); ++d) {
    if ((*counts)[d] < 0)
      return kernelError("repeats " + formatShape(*counts) + " has a negative entry");
    outShape[d] *= (*counts)[d];
  }
  llvm::Expected<Tensor> out = allocate(input.dtype(), outShape);
  if (!out)
    return out.takeError();
  // Output index i reads input index i mod in_dim along every dim.
  int64_t size = elementSize(input.dtype());
  Shape inStrides = stridesOf(input.shape());
  const char *src = static_cast<const char *>(input.rawData());
  char *dst = static_cast<char *>(out->rawData());
  OffsetWalker walker(outShape, {});
  for (int64_t i = 0, n = out->numElements(); i < n; ++i, walker.next()) {
    int64_t offset = 0;
    for (size_t d = 0; d < outShape.size(); ++d)
      offset += (walker.index()[d] % input.shape()[d]) * inStrides[d];
    std::memcpy(dst + i * size, src + offset * size, size);
  }
  return out;
}

llvm::Expected<Tensor> kernels::flatten(const Tensor &input, int64_t axis) {
  // Flatten accepts axis == rank (everything in the outer dim).
  llvm::Expected<int64_t> normalized = normalizeAxis(axis, input.rank() + 1, "axis");
  if (!normalized)
    return normalized.takeError();
  llvm::ArrayRef<int64_t> dims = input.shape();
  return withShape(input,
                   {product(dims.take_front(*normalized)), product(dims.drop_front(*normalized))});
}

llvm::Expected<Tensor> kernels::squeeze(const Tensor &input, const Tensor *axes) {
  std::vector<bool> drop(input.rank(), false);
  if (axes) {
    llvm::Expected<std::vector<int64_t>> list = readIndexVector(*axes, "axes");
    if (!list)
      return list.takeError();
    llvm::Expected<std::vector<int64_t>> normalized = normalizeAxes(*list, input.rank());
    if (!normalized)
      return normalized.takeError();
    for (int64_t axis : *normalized) {
      if (input.shape()[axis] != 1)
        return kernelError("cannot squeeze axis " + llvm::Twine(axis) + " of " +
                           input.shapeString() + ": its size is not 1");
      drop[axis] = true;
    }
  } else {
    for (int64_t d = 0; d < input.rank(); ++d)
      drop[d] = input.shape()[d] == 1;
  }
  Shape dims;
  for (int64_t d = 0; d < input.rank(); ++d)
    if (!drop[d])
      dims.push_back(input.shape()[d]);
  return withShape(input, std::move(dims));
}

llvm::Expected<Tensor> kernels::unsqueeze(const Tensor &input, const Tensor &axes) {
  llvm::Expected<std::vector<int64_t>> list = readIndexVector(axes, "axes");
  if (!list)
    return list.takeError();
  int64_t outRank = input.rank() + static_cast<int64_t>(list->size());
  llvm::Expected<std::vector<int64_t>> normalized = normalizeAxes(*list, outRank);
  if (!normalized)
    return normalized.takeError();
  Shape dims;
  auto next = input.shape().begin();
  for (int64_t d = 0; d < outRank; ++d)
    dims.push_back(llvm::is_contained(*normalized, d) ? 1 : *next++);
  return withShape(input, std::move(dims));
}

llvm::Expected<Tensor> kernels::transpose(const Tensor &input, llvm::ArrayRef<int64_t> perm) {
  if (static_cast<int64_t>(perm.size()) != input.rank())
    return kernelError("perm has " + llvm::Twine(perm.size()) + " entries but the input has rank " +
                       llvm::Twine(input.rank()));
  std::vector<bool> seen(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= input.rank() || seen[p])
      return kernelError("perm " + formatShape(perm) + " is not a permutation");
    seen[p] = true;
  }
  Shape inStrides = stridesOf(input.shape());
  Shape outShape, strides;
  for (int64_t p : perm) {
    outShape.push_back(input.shape()[p]);
    strides.push_back(inStrides[p]);
  }
  Tensor out(input.dtype(), outShape);
  // Large matrices (weights) tile by tile; the rest element by element.
  constexpr int64_t kTiledElements = 1 << 16;
  if (swapsLastTwo(perm) && input.numElements() >= kTiledElements) {
    const int64_t rows = input.shape()[input.rank() - 2], cols = input.shape().back();
    const int64_t batch = input.numElements() / (rows * cols);
    const char *src = static_cast<const char *>(input.rawData());
    char *dst = static_cast<char *>(out.rawData());
    switch (elementSize(input.dtype())) {
    case 8:
      transposeLastTwo<8>(src, dst, batch, rows, cols);
      return out;
    case 4:
      transposeLastTwo<4>(src, dst, batch, rows, cols);
      return out;
    case 1:
      transposeLastTwo<1>(src, dst, batch, rows, cols);
      return out;
    default:
      break;
    }
  }
  copyStrided(input, out, strides);
  return out;
}

llvm::Expected<Tensor> kernels::concat(llvm::ArrayRef<const Tensor *> inputs, int64_t axis) {
  if (inputs.empty())
    return kernelError("needs at least one input");
  const Tensor &first = *inputs.front();
  llvm::Expected<int64_t> dim = normalizeAxis(axis, first.rank(), "axis");
  if (!dim)
    return dim.takeError();
  Shape outShape(first.shape());
  outShape[*dim] = 0;
  for (const Tensor *input : inputs) {
    bool compatible = input->dtype() == first.dtype() && input->rank() == first.rank();
    for (int64_t d = 0; compatible && d < first.rank(); ++d)
      compatible = d == *dim || input->shape()[d] == first.shape()[d];
    if (!compatible)
      return kernelError("cannot concatenate " + llvm::Twine(dtypeName(input->dtype())) +
                         input->shapeString() + " with " + dtypeName(first.dtype()) +
                         first.shapeString() + " along axis " + llvm::Twine(*dim));
    outShape[*dim] += input->shape()[*dim];
  }
  if (llvm::Error error = checkElements(outShape))
    return std::move(error);
  Tensor out(first.dtype(), outShape);
  // Each input contributes a block of dim_i * inner elements per outer index.
  llvm::ArrayRef<int64_t> dims = outShape;
  int64_t outer = product(dims.take_front(*dim));
  int64_t inner = product(dims.drop_front(*dim + 1)) * elementSize(first.dtype());
  char *dst = static_cast<char *>(out.rawData());
  for (int64_t o = 0; o < outer; ++o) {
    for (const Tensor *input : inputs) {
      int64_t block = input->shape()[*dim] * inner;
      if (block == 0)
        continue;
      std::memcpy(dst, static_cast<const char *>(input->rawData()) + o * block, block);
      dst += block;
    }
  }
  return out;
}

llvm::Expected<std::vector<Tensor>> kernels::split(const Tensor &input, const Tensor *sizes,
                                                   int64_t axis, size_t numOutputs) {
  llvm::Expected<int64_t> dim = normalizeAxis(axis, input.rank(), "axis");
  if (!dim)
    return dim.takeError();
  int64_t extent = input.shape()[*dim];
  std::vector<int64_t> parts;
  if (sizes) {
    llvm::Expected<std::vector<int64_t>> list = readIndexVector(*sizes, "split");
    if (!list)
      return list.takeError();
    parts = *list;
    if (parts.size() != numOutputs)
      return kernelError("split has " + llvm::Twine(parts.size()) + " sizes but the op has " +
                         llvm::Twine(numOutputs) + " results");
    int64_t total = 0; // at most extent: a part past what is left is refused before the sum
    for (int64_t part : parts) {
      if (part < 0)
        return kernelError("split sizes " + formatShape(parts) + " have a negative entry");
      if (part > extent - total)
        return kernelError("split sizes " + formatShape(parts) + " sum past axis " +
                           llvm::Twine(*dim) + " of " + input.shapeString() + " (size " +
                           llvm::Twine(extent) + ")");
      total += part;
    }
    if (total != extent)
      return kernelError("split sizes " + formatShape(parts) + " sum to " + llvm::Twine(total) +
                         " but axis " + llvm::Twine(*dim) + " of " + input.shapeString() +
                         " has size " + llvm::Twine(extent));
  } else {
    // Opset 18: parts of ceil(extent / n) while the dim lasts, so the last
    // non-empty part may be smaller and any after it are empty (5 into 4 is
    // [2, 2, 1, 0], as the ONNX reference's numpy split gives).
    int64_t n = static_cast<int64_t>(numOutputs);
    if (n == 0)
      return kernelError("needs at least one result");
    int64_t chunk = (extent + n - 1) / n;
    for (int64_t i = 0; i < n; ++i)
      parts.push_back(std::clamp<int64_t>(extent - i * chunk, 0, chunk));
  }
  llvm::ArrayRef<int64_t> dims = input.shape();
  int64_t outer = product(dims.take_front(*dim));
  int64_t inner = product(dims.drop_front(*dim + 1)) * elementSize(input.dtype());
  const char *src = static_cast<const char *>(input.rawData());
  std::vector<Tensor> results;
  int64_t offset = 0; // in bytes, within one outer row
  for (int64_t part : parts) {
    Shape shape(dims.begin(), dims.end());
    shape[*dim] = part;
    Tensor out(input.dtype(), shape);
    int64_t block = part * inner;
    char *dst = static_cast<char *>(out.rawData());
    for (int64_t o = 0; o < outer && block > 0; ++o)
      std::memcpy(dst + o * block, src + o * extent * inner + offset, block);
    offset += block;
    results.push_back(std::move(out));
  }
  return results;
}

llvm::Expected<Tensor> kernels::slice(const Tensor &data, const Tensor &starts, const Tensor &ends,
                                      const Tensor &axes, const Tensor &steps) {
  llvm::Expected<std::vector<int64_t>> startList = readIndexVector(starts, "starts");
  if (!startList)
    return startList.takeError();
  llvm::Expected<std::vector<int64_t>> endList = readIndexVector(ends, "ends");
  if (!endList)
    return endList.takeError();
  llvm::Expected<std::vector<int64_t>> axisList = readIndexVector(axes, "axes");
  if (!axisList)
    return axisList.takeError();
  llvm::Expected<std::vector<int64_t>> stepList = readIndexVector(steps, "steps");
  if (!stepList)
    return stepList.takeError();
  size_t count = startList->size();
  if (endList->size() != count || axisList->size() != count || stepList->size() != count)
    return kernelError("starts, ends, axes and steps have " + llvm::Twine(count) + ", " +
                       llvm::Twine(endList->size()) + ", " + llvm::Twine(axisList->size()) +
                       " and " + llvm::Twine(stepList->size()) + " entries; they must match");
  llvm::Expected<std::vector<int64_t>> normalized = normalizeAxes(*axisList, data.rank());
  if (!normalized)
    return normalized.takeError();

  // Untouched axes keep start 0, step 1 and their full size.
  Shape outShape(data.shape());
  Shape first(data.rank(), 0), step(data.rank(), 1);
  for (size_t i = 0; i < count; ++i) {
    int64_t axis = (*normalized)[i];
    int64_t dim = data.shape()[axis];
    int64_t s = (*stepList)[i];
    if (s == 0)
      return kernelError("slice step for axis " + llvm::Twine(axis) + " is 0");
    // Negative starts and ends count from the back, then both are clamped:
    // to [0, dim] for positive steps and [0, dim-1] / [-1, dim-1] for negative.
    int64_t begin = (*startList)[i], end = (*endList)[i];
    if (begin < 0)
      begin += dim;
    if (end < 0)
      end += dim;
    int64_t size;
    if (dim == 0) {
      size = 0, begin = 0;
    } else if (s > 0) {
      begin = std::clamp<int64_t>(begin, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      // 1 + (n - 1) / s rather than (n + s - 1) / s: a step near INT64_MAX must not overflow.
      size = end > begin ? 1 + (end - begin - 1) / s : 0;
    } else {
      begin = std::clamp<int64_t>(begin, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
      size = begin <= end                               ? 0
             : s == std::numeric_limits<int64_t>::min() ? 1
                                                        : 1 + (begin - end - 1) / (-s);
    }
    outShape[axis] = size;
    first[axis] = begin;
    // One element (or none) takes no step: a huge step would only overflow
    // the strides the copy walks with. Two or more keep s * stride in range.
    step[axis] = size <= 1 ? 1 : s;
  }
  Tensor out(data.dtype(), outShape);
  Shape inStrides = stridesOf(data.shape());
  Shape strides(data.rank());
  int64_t base = 0;
  for (int64_t d = 0; d < data.rank(); ++d) {
    strides[d] = step[d] * inStrides[d];
    base += first[d] * inStrides[d];
  }
  if (out.numElements() > 0)
    copyStrided(data, out, strides, base);
  return out;
}

llvm::Expected<Tensor> kernels::gather(const Tensor &data, const Tensor &indices, int64_t axis) {
  if (data.rank() == 0)
    return kernelError("data must have rank >= 1");
  llvm::Expected<int64_t> dim = normalizeAxis(axis, data.rank(), "axis");
  if (!dim)
    return dim.takeError();
  if (llvm::Error error = expectDType(indices, {DType::I64}, "indices"))
    return std::move(error);
  llvm::ArrayRef<int64_t> dims = data.shape();
  int64_t extent = dims[*dim];
  // out shape = data[:axis] + indices.shape + data[axis+1:]
  Shape outShape(dims.begin(), dims.begin() + *dim);
  outShape.insert(outShape.end(), indices.shape().begin(), indices.shape().end());
  outShape.insert(outShape.end(), dims.begin() + *dim + 1, dims.end());
  if (llvm::Error error = checkElements(outShape))
    return std::move(error);
  Tensor out(data.dtype(), outShape);
  int64_t outer = product(dims.take_front(*dim));
  int64_t inner = product(dims.drop_front(*dim + 1)) * elementSize(data.dtype());
  int64_t numIndices = indices.numElements();
  const int64_t *ids = indices.i64();
  for (int64_t j = 0; j < numIndices; ++j)
    if (ids[j] < -extent || ids[j] >= extent)
      return kernelError("index " + llvm::Twine(ids[j]) + " is out of range for axis " +
                         llvm::Twine(*dim) + " of size " + llvm::Twine(extent));
  if (inner == 0)
    return out;
  const char *src = static_cast<const char *>(data.rawData());
  char *dst = static_cast<char *>(out.rawData());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < numIndices; ++j) {
      int64_t index = ids[j] < 0 ? ids[j] + extent : ids[j];
      std::memcpy(dst, src + (o * extent + index) * inner, inner);
      dst += inner;
    }
  }
  return out;
}

namespace {

/// kernels::topK over elements of type T (f32 or i64).
template <typename T>
void topKRows(const T *src, T *values, int64_t *indices, int64_t outer, int64_t extent,
              int64_t inner, int64_t k) {
  std::vector<int64_t> order(static_cast<size_t>(extent));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t j) { return src[(o * extent + j) * inner + i]; };
      std::iota(order.begin(), order.end(), 0);
      // Descending; NaN counts as the largest (as ONNX Runtime orders it).
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        T x = at(a), y = at(b);
        if constexpr (std::is_floating_point_v<T>)
          if (std::isnan(x) || std::isnan(y))
            return std::isnan(x) && !std::isnan(y);
        return x > y;
      });
      for (int64_t j = 0; j < k; ++j) {
        values[(o * k + j) * inner + i] = at(order[size_t(j)]);
        indices[(o * k + j) * inner + i] = order[size_t(j)];
      }
    }
}

} // namespace

llvm::Expected<std::vector<Tensor>> kernels::topK(const Tensor &input, int64_t k, int64_t axis) {
  llvm::Expected<int64_t> dim = normalizeAxis(axis, input.rank(), "axis");
  if (!dim)
    return dim.takeError();
  if (llvm::Error error = expectDType(input, {DType::F32, DType::I64}, "input"))
    return std::move(error);
  llvm::ArrayRef<int64_t> dims = input.shape();
  int64_t extent = dims[*dim];
  if (k < 1 || k > extent)
    return kernelError("k " + llvm::Twine(k) + " is outside [1, " + llvm::Twine(extent) +
                       "] (axis " + llvm::Twine(*dim) + ")");
  Shape outShape(dims.begin(), dims.end());
  outShape[*dim] = k;
  Tensor values(input.dtype(), outShape), indices(DType::I64, outShape);
  int64_t outer = product(dims.take_front(*dim)), inner = product(dims.drop_front(*dim + 1));
  if (input.dtype() == DType::F32)
    topKRows(input.f32(), values.f32(), indices.i64(), outer, extent, inner, k);
  else
    topKRows(input.i64(), values.i64(), indices.i64(), outer, extent, inner, k);
  std::vector<Tensor> out;
  out.push_back(std::move(values));
  out.push_back(std::move(indices));
  return out;
}

/// Calls `visit(i, offset)` for each element i of `indices` (data's rank),
/// offset being the element of `data` it names: its own position but
/// indices[i] on `axis` (negative values wrap). GatherElements reads there,
/// ScatterElements writes there.
static llvm::Error forEachAxisIndex(const Tensor &data, const Tensor &indices, int64_t axis,
                                    llvm::function_ref<llvm::Error(int64_t, int64_t)> visit) {
  llvm::ArrayRef<int64_t> dims = data.shape();
  Shape dataStrides = stridesOf(dims), indexStrides = stridesOf(indices.shape());
  int64_t extent = dims[axis];
  const int64_t *ids = indices.i64();
  for (int64_t i = 0, count = indices.numElements(); i < count; ++i) {
    int64_t index = ids[i];
    if (index < -extent || index >= extent)
      return kernelError("index " + llvm::Twine(index) + " is out of range for axis " +
                         llvm::Twine(axis) + " of size " + llvm::Twine(extent));
    int64_t offset = 0;
    for (int64_t d = 0, rest = i; d < data.rank(); ++d) {
      int64_t at = rest / indexStrides[d];
      rest %= indexStrides[d];
      offset += (d == axis ? (index < 0 ? index + extent : index) : at) * dataStrides[d];
    }
    if (llvm::Error error = visit(i, offset))
      return error;
  }
  return llvm::Error::success();
}

llvm::Expected<Tensor> kernels::gatherElements(const Tensor &data, const Tensor &indices,
                                               int64_t axis) {
  llvm::Expected<int64_t> dim = normalizeAxis(axis, data.rank(), "axis");
  if (!dim)
    return dim.takeError();
  if (llvm::Error error = expectDType(indices, {DType::I64}, "indices"))
    return std::move(error);
  if (indices.rank() != data.rank())
    return kernelError("indices " + indices.shapeString() + " and data " + data.shapeString() +
                       " must have the same rank");
  llvm::ArrayRef<int64_t> dims = data.shape(), indexDims = indices.shape();
  for (int64_t d = 0; d < data.rank(); ++d)
    if (d != *dim && indexDims[d] > dims[d])
      return kernelError("indices " + indices.shapeString() + " exceed data " + data.shapeString() +
                         " on axis " + llvm::Twine(d));
  Tensor out(data.dtype(), Shape(indexDims.begin(), indexDims.end()));
  int64_t size = elementSize(data.dtype());
  const char *src = static_cast<const char *>(data.rawData());
  char *dst = static_cast<char *>(out.rawData());
  llvm::Error error = forEachAxisIndex(data, indices, *dim, [&](int64_t i, int64_t offset) {
    std::memcpy(dst + i * size, src + offset * size, size);
    return llvm::Error::success();
  });
  if (error)
    return std::move(error);
  return out;
}

namespace {

/// Writes element `from` of `updates` over element `to` of `out`, or combines
/// the two by `reduction`.
llvm::Error scatterOne(Tensor &out, int64_t to, const Tensor &updates, int64_t from,
                       llvm::StringRef reduction) {
  if (reduction == "none") {
    int64_t size = elementSize(out.dtype());
    std::memcpy(static_cast<char *>(out.rawData()) + to * size,
                static_cast<const char *>(updates.rawData()) + from * size, size);
    return llvm::Error::success();
  }
  auto combine = [&](auto a, auto b) {
    return reduction == "add"   ? a + b
           : reduction == "mul" ? a * b
           : reduction == "min" ? std::min(a, b)
                                : std::max(a, b);
  };
  if (out.dtype() == DType::F32)
    out.f32()[to] = combine(out.f32()[to], updates.f32()[from]);
  else if (out.dtype() == DType::I64)
    out.i64()[to] = combine(out.i64()[to], updates.i64()[from]);
  else
    return kernelError("reduction '" + reduction + "' needs f32 or i64 data");
  return llvm::Error::success();
}

} // namespace

llvm::Expected<Tensor> kernels::scatterND(const Tensor &data, const Tensor &indices,
                                          const Tensor &updates, llvm::StringRef reduction) {
  if (llvm::Error error = expectDType(indices, {DType::I64}, "indices"))
    return std::move(error);
  if (updates.dtype() != data.dtype())
    return kernelError("updates and data must share one element type");
  llvm::ArrayRef<int64_t> dataDims = data.shape(), indexDims = indices.shape();
  int64_t r = data.rank(), q = indices.rank();
  if (q < 1 || indexDims.back() < 1 || indexDims.back() > r)
    return kernelError("indices " + indices.shapeString() + " do not index data " +
                       data.shapeString());
  int64_t k = indexDims.back();
  // updates.shape = indices.shape[:-1] + data.shape[k:]
  Shape expected(indexDims.begin(), indexDims.end() - 1);
  expected.insert(expected.end(), dataDims.begin() + k, dataDims.end());
  if (updates.shape() != expected)
    return kernelError("updates " + updates.shapeString() + " do not match indices " +
                       indices.shapeString() + " and data " + data.shapeString());
  Tensor out = data;
  int64_t sliceElements = product(dataDims.drop_front(k));
  Shape strides = stridesOf(dataDims);
  const int64_t *ids = indices.i64();
  for (int64_t t = 0, tuples = product(indexDims.drop_back()); t < tuples; ++t) {
    int64_t offset = 0;
    for (int64_t j = 0; j < k; ++j) {
      int64_t extent = dataDims[j], index = ids[t * k + j];
      if (index < -extent || index >= extent)
        return kernelError("index " + llvm::Twine(index) + " is out of range for data dim " +
                           llvm::Twine(j) + " of size " + llvm::Twine(extent));
      offset += (index < 0 ? index + extent : index) * strides[j];
    }
    for (int64_t e = 0; e < sliceElements; ++e)
      if (llvm::Error error =
              scatterOne(out, offset + e, updates, t * sliceElements + e, reduction))
        return std::move(error);
  }
  return out;
}

llvm::Expected<Tensor> kernels::scatterElements(const Tensor &data, const Tensor &indices,
                                                const Tensor &updates, int64_t axis,
                                                llvm::StringRef reduction) {
  llvm::Expected<int64_t> dim = normalizeAxis(axis, data.rank(), "axis");
  if (!dim)
    return dim.takeError();
  if (llvm::Error error = expectDType(indices, {DType::I64}, "indices"))
    return std::move(error);
  if (updates.dtype() != data.dtype())
    return kernelError("updates and data must share one element type");
  if (indices.shape() != updates.shape() || indices.rank() != data.rank())
    return kernelError("indices " + indices.shapeString() + " and updates " +
                       updates.shapeString() + " must have one shape, of data " +
                       data.shapeString() + "'s rank");
  llvm::ArrayRef<int64_t> dims = data.shape(), indexDims = indices.shape();
  for (int64_t d = 0; d < data.rank(); ++d)
    if (d != *dim && indexDims[d] > dims[d])
      return kernelError("indices " + indices.shapeString() + " exceed data " + data.shapeString() +
                         " on axis " + llvm::Twine(d));
  Tensor out = data;
  if (llvm::Error error = forEachAxisIndex(data, indices, *dim, [&](int64_t i, int64_t offset) {
        return scatterOne(out, offset, updates, i, reduction);
      }))
    return std::move(error);
  return out;
}

llvm::Expected<Tensor> kernels::gatherND(const Tensor &data, const Tensor &indices,
                                         int64_t batchDims) {
  if (llvm::Error error = expectDType(indices, {DType::I64}, "indices"))
    return std::move(error);
  int64_t r = data.rank(), q = indices.rank(), b = batchDims;
  if (r < 1 || q < 1)
    return kernelError("data and indices must have rank >= 1");
  if (b < 0 || b >= std::min(r, q))
    return kernelError("batch_dims " + llvm::Twine(b) + " must be in [0, min(rank(data) = " +
                       llvm::Twine(r) + ", rank(indices) = " + llvm::Twine(q) + "))");
  llvm::ArrayRef<int64_t> dataDims = data.shape(), indexDims = indices.shape();
  if (dataDims.take_front(b) != indexDims.take_front(b))
    return kernelError("the first " + llvm::Twine(b) + " dims of data " + data.shapeString() +
                       " and indices " + indices.shapeString() + " must match");
  int64_t k = indexDims.back();
  if (k < 1 || k > r - b)
    return kernelError("the last dim of indices " + indices.shapeString() + " must be in [1, " +
                       llvm::Twine(r - b) + "]");
  // out shape = indices.shape[:-1] + data.shape[b+k:]
  Shape outShape(indexDims.begin(), indexDims.end() - 1);
  outShape.insert(outShape.end(), dataDims.begin() + b + k, dataDims.end());
  if (llvm::Error error = checkElements(outShape))
    return std::move(error);
  Tensor out(data.dtype(), outShape);

  int64_t batches = product(dataDims.take_front(b));
  int64_t tuplesPerBatch = product(indexDims.slice(b, q - b - 1));
  int64_t sliceBytes = product(dataDims.drop_front(b + k)) * elementSize(data.dtype());
  int64_t batchBytes = product(dataDims.drop_front(b)) * elementSize(data.dtype());
  Shape dataStrides = stridesOf(dataDims);
  const int64_t *ids = indices.i64();
  const char *src = static_cast<const char *>(data.rawData());
  char *dst = static_cast<char *>(out.rawData());
  for (int64_t batch = 0; batch < batches; ++batch) {
    for (int64_t t = 0; t < tuplesPerBatch; ++t) {
      const int64_t *tuple = ids + (batch * tuplesPerBatch + t) * k;
      int64_t offset = 0;
      for (int64_t j = 0; j < k; ++j) {
        int64_t extent = dataDims[b + j];
        int64_t index = tuple[j];
        if (index < -extent || index >= extent)
          return kernelError("index " + llvm::Twine(index) + " is out of range for data dim " +
                             llvm::Twine(b + j) + " of size " + llvm::Twine(extent));
        if (index < 0)
          index += extent;
        offset += index * dataStrides[b + j];
      }
      if (sliceBytes > 0)
        std::memcpy(dst, src + batch * batchBytes + offset * elementSize(data.dtype()), sliceBytes);
      dst += sliceBytes;
    }
  }
  return out;
}

llvm::Expected<Tensor> kernels::range(const Tensor &start, const Tensor &limit,
                                      const Tensor &delta) {
  if (start.dtype() != limit.dtype() || start.dtype() != delta.dtype())
    return kernelError("start, limit and delta must share one element type");
  if (start.dtype() == DType::I64) {
    llvm::Expected<int64_t> first = readIndexScalar(start, "start");
    if (!first)
      return first.takeError();
    llvm::Expected<int64_t> end = readIndexScalar(limit, "limit");
    if (!end)
      return end.takeError();
    llvm::Expected<int64_t> step = readIndexScalar(delta, "delta");
    if (!step)
      return step.takeError();
    if (*step == 0)
      return kernelError("delta is 0");
    // count = max(ceil((limit - start) / delta), 0), in 128 bits to avoid overflow.
    __int128 span = static_cast<__int128>(*end) - *first;
    __int128 count = 0;
    if (*step > 0 && span > 0)
      count = (span + *step - 1) / *step;
    else if (*step < 0 && span < 0)
      count = (-span + (-static_cast<__int128>(*step)) - 1) / -static_cast<__int128>(*step);
    if (count > std::numeric_limits<int32_t>::max())
      return kernelError("range of " + llvm::Twine(int64_t(std::min<__int128>(count, INT64_MAX))) +
                         " elements is too large");
    llvm::Expected<Tensor> out = allocate(DType::I64, {static_cast<int64_t>(count)});
    if (!out)
      return out.takeError();
    for (int64_t i = 0; i < out->numElements(); ++i)
      out->i64()[i] = *first + i * *step;
    return out;
  }
  if (start.dtype() != DType::F32)
    return kernelError("start, limit and delta must be f32 or i64");
  llvm::Expected<double> first = readNumber(start, "start");
  if (!first)
    return first.takeError();
  llvm::Expected<double> end = readNumber(limit, "limit");
  if (!end)
    return end.takeError();
  llvm::Expected<double> step = readNumber(delta, "delta");
  if (!step)
    return step.takeError();
  if (*step == 0)
    return kernelError("delta is 0");
  double count = std::max(std::ceil((*end - *first) / *step), 0.0);
  if (!(count <= std::numeric_limits<int32_t>::max()))
    return kernelError("range is too large or not finite");
  llvm::Expected<Tensor> out = allocate(DType::F32, {static_cast<int64_t>(count)});
  if (!out)
    return out.takeError();
  // output[i] = start + i * delta, as the ONNX spec writes it.
  for (int64_t i = 0; i < out->numElements(); ++i)
    out->f32()[i] = float(*first + double(i) * *step);
  return out;
}

llvm::Expected<Tensor> kernels::trilu(const Tensor &input, const Tensor *k, bool upper) {
  if (input.rank() < 2)
    return kernelError("input must have rank >= 2, got " + input.shapeString());
  int64_t diagonal = 0;
  if (k) {
    llvm::Expected<int64_t> value = readIndexScalar(*k, "k");
    if (!value)
      return value.takeError();
    diagonal = *value;
  }
  Tensor out(input.dtype(), input.shape());
  int64_t size = elementSize(input.dtype());
  int64_t rows = input.shape()[input.rank() - 2], cols = input.shape()[input.rank() - 1];
  int64_t matrices = product(llvm::ArrayRef<int64_t>(input.shape()).drop_back(2));
  const char *src = static_cast<const char *>(input.rawData());
  char *dst = static_cast<char *>(out.rawData());
  // Upper keeps j - i >= k, lower keeps j - i <= k; the rest stays zero.
  for (int64_t m = 0; m < matrices; ++m)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        bool keep = upper ? j - i >= diagonal : j - i <= diagonal;
        int64_t offset = ((m * rows + i) * cols + j) * size;
        if (keep)
          std::memcpy(dst + offset, src + offset, size);
      }
  return out;
}

llvm::Expected<Tensor> kernels::constantOfShape(const Tensor &shape, const Tensor &value) {
  llvm::Expected<std::vector<int64_t>> dims = readIndexVector(shape, "shape");
  if (!dims)
    return dims.takeError();
  if (value.numElements() != 1)
    return kernelError("value must have one element, got shape " + value.shapeString());
  llvm::Expected<Tensor> out = allocate(value.dtype(), *dims);
  if (!out)
    return out.takeError();
  int64_t size = elementSize(value.dtype());
  char *dst = static_cast<char *>(out->rawData());
  for (int64_t i = 0, n = out->numElements(); i < n; ++i)
    std::memcpy(dst + i * size, value.rawData(), size);
  return out;
}
