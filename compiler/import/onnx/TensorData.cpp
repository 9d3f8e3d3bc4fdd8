//===- TensorData.cpp - ONNX TensorProto → constants and weights ----------===//

#include "compiler/import/onnx/TensorData.h"

#include "compiler/import/onnx/ModelChecks.h"
#include "compiler/import/onnx/NodeImporter.h"
#include "dialects/graph/IR/GraphOps.h"
#include "dialects/graph/IR/GraphResources.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cstring>

using namespace mlir;
using namespace infer::import;
namespace graph = infer::graph;

namespace {

/// Bytes per element as stored in raw_data (bool: one byte; 4-bit values
/// are packed two a byte and unpacked by decodeTensor).
int64_t storageBytes(Type element) {
  unsigned bits = element.getIntOrFloatBitWidth();
  return bits == 1 || bits == 4 ? 1 : bits / 8;
}

/// Where a tensor's bytes are after decoding.
struct TensorBytes {
  const char *data = nullptr;
  size_t size = 0;
  std::unique_ptr<char[]> owned;        // typed-field data converted to bytes
  std::unique_ptr<std::string> rawData; // raw_data moved out of the proto
  std::optional<graph::FileRange> file; // external data
};

llvm::Error tensorError(const onnx::TensorProto &tensor, const llvm::Twine &message) {
  return llvm::createStringError("tensor '" + tensor.name() + "': " + message.str());
}

template <typename Field, typename Storage>
std::unique_ptr<char[]> packTypedField(const Field &field, size_t count) {
  auto bytes = std::make_unique<char[]>(count * sizeof(Storage));
  for (size_t i = 0; i < count; ++i) {
    Storage value = static_cast<Storage>(field.Get(i));
    std::memcpy(bytes.get() + i * sizeof(Storage), &value, sizeof(Storage));
  }
  return bytes;
}

llvm::Expected<TensorBytes> decodeBytes(onnx::TensorProto &tensor, Type element, int64_t count,
                                        StringRef modelDirectory) {
  TensorBytes result;
  const int64_t elementBytes = storageBytes(element);
  const uint64_t expected = static_cast<uint64_t>(count) * elementBytes;

  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    std::string location;
    uint64_t offset = 0, length = 0;
    bool hasLength = false;
    llvm::StringSet<> seen;
    for (const auto &entry : tensor.external_data()) {
      if (!seen.insert(entry.key()).second)
        return tensorError(tensor, "external data key '" + entry.key() + "' is given twice");
      // Decimal digits only: "0x10", "-1", " 8" or "8 bytes" are not an offset.
      auto number = [&](uint64_t &out) -> llvm::Error {
        StringRef text = entry.value();
        if (text.empty() || !llvm::all_of(text, llvm::isDigit) || text.getAsInteger(10, out))
          return tensorError(tensor, "external data " + entry.key() + " '" + text +
                                         "' is not a decimal integer");
        return llvm::Error::success();
      };
      if (entry.key() == "location") {
        location = entry.value();
      } else if (entry.key() == "offset") {
        if (auto err = number(offset))
          return std::move(err);
      } else if (entry.key() == "length") {
        if (auto err = number(length))
          return std::move(err);
        hasLength = true;
      } else if (entry.key() != "checksum") { // ONNX's optional SHA-1; not verified
        return tensorError(tensor, "unknown external data key '" + entry.key() +
                                       "' (expected location, offset, length, checksum)");
      }
    }
    if (location.empty())
      return tensorError(tensor, "external data has no 'location'");
    // As ONNX's checker: data must live beside the model, not anywhere on disk.
    if (llvm::sys::path::is_absolute(location) ||
        llvm::any_of(llvm::make_range(llvm::sys::path::begin(location), llvm::sys::path::end(location)),
                      [](StringRef part) { return part == ".."; }))
      return tensorError(tensor, "external data location '" + location +
                                     "' must be a relative path inside the model's directory");
    llvm::SmallString<256> path(modelDirectory);
    llvm::sys::path::append(path, location);
    if (!llvm::sys::fs::exists(path))
      return tensorError(tensor, "external data file '" + path + "' not found");
    // Links resolved, the file must still lie beside the model.
    auto resolved = graph::resolveInsideDirectory(modelDirectory, location);
    if (!resolved)
      return tensorError(tensor, "external data " + llvm::toString(resolved.takeError()));
    auto file = graph::MappedFile::open(*resolved);
    if (!file)
      return tensorError(tensor, llvm::toString(file.takeError()));
    if (!hasLength)
      length = expected;
    if (length != expected)
      return tensorError(tensor, "external data length " + llvm::Twine(length) +
                                     " does not match its shape and type (" +
                                     llvm::Twine(expected) + " bytes)");
    if (offset > (*file)->size() || length > (*file)->size() - offset)
      return tensorError(tensor, "external data range " + llvm::Twine(offset) + "+" +
                                     llvm::Twine(length) + " lies outside '" + path + "' (" +
                                     llvm::Twine((*file)->size()) + " bytes)");
    result.file = graph::FileRange{std::move(*file), offset, length};
    result.data = result.file->file->data() + offset;
    result.size = length;
    return result;
  }

  if (tensor.has_raw_data()) {
    if (tensor.raw_data().size() != expected)
      return tensorError(tensor, "raw_data holds " + llvm::Twine(tensor.raw_data().size()) +
                                     " bytes but its shape and type need " +
                                     llvm::Twine(expected));
    result.rawData.reset(tensor.release_raw_data());
    result.data = result.rawData->data();
    result.size = result.rawData->size();
    return result;
  }

  // Typed fields: ONNX stores small integer, bool, fp16 and bf16 in int32_data.
  auto checkCount = [&](int fieldSize) -> llvm::Error {
    if (fieldSize != count)
      return tensorError(tensor, "holds " + llvm::Twine(fieldSize) +
                                     " values but its shape needs " + llvm::Twine(count));
    return llvm::Error::success();
  };
  switch (tensor.data_type()) {
  case onnx::TensorProto::FLOAT:
    if (auto err = checkCount(tensor.float_data_size())) return std::move(err);
    result.owned = packTypedField<decltype(tensor.float_data()), float>(tensor.float_data(), count);
    break;
  case onnx::TensorProto::DOUBLE:
    if (auto err = checkCount(tensor.double_data_size())) return std::move(err);
    result.owned = packTypedField<decltype(tensor.double_data()), double>(tensor.double_data(), count);
    break;
  case onnx::TensorProto::INT64:
    if (auto err = checkCount(tensor.int64_data_size())) return std::move(err);
    result.owned = packTypedField<decltype(tensor.int64_data()), int64_t>(tensor.int64_data(), count);
    break;
  case onnx::TensorProto::UINT32:
  case onnx::TensorProto::UINT64:
    if (auto err = checkCount(tensor.uint64_data_size())) return std::move(err);
    if (elementBytes == 8)
      result.owned = packTypedField<decltype(tensor.uint64_data()), uint64_t>(tensor.uint64_data(), count);
    else
      result.owned = packTypedField<decltype(tensor.uint64_data()), uint32_t>(tensor.uint64_data(), count);
    break;
  default: {
    if (auto err = checkCount(tensor.int32_data_size())) return std::move(err);
    const auto &field = tensor.int32_data();
    if (elementBytes == 4)
      result.owned = packTypedField<decltype(field), int32_t>(field, count);
    else if (elementBytes == 2)
      result.owned = packTypedField<decltype(field), uint16_t>(field, count);
    else
      result.owned = packTypedField<decltype(field), uint8_t>(field, count);
    break;
  }
  }
  result.data = result.owned.get();
  result.size = expected;
  return result;
}

struct DecodedTensor {
  RankedTensorType type;
  TensorBytes bytes;
};

llvm::Expected<DecodedTensor> decodeTensor(MLIRContext *context, onnx::TensorProto &tensor,
                                           StringRef modelDirectory) {
  Type element = convertElementType(context, tensor.data_type());
  if (!element)
    return tensorError(tensor, "unsupported element type " + llvm::Twine(tensor.data_type()));
  SmallVector<int64_t> shape;
  int64_t count = 1;
  if (tensor.dims_size() > kMaxRank)
    return tensorError(tensor, "has " + llvm::Twine(tensor.dims_size()) +
                                   " dimensions; a tensor has at most " + llvm::Twine(kMaxRank));
  for (int64_t dim : tensor.dims()) {
    if (dim < 0 || dim > kMaxDimension)
      return tensorError(tensor, "dimension " + llvm::Twine(dim) + " does not lie in [0, " +
                                     llvm::Twine(kMaxDimension) + "]");
    shape.push_back(dim);
    if (dim != 0 && count > kMaxElements / dim)
      return tensorError(tensor, "has more than 2^40 elements");
    count *= dim;
  }
  if (element.getIntOrFloatBitWidth() == 4) {
    // ONNX packs int4 / uint4 two a byte, the even element in the low nibble
    // (in int32_data too, a byte an entry); MLIR holds one a byte.
    auto packed = decodeBytes(tensor, IntegerType::get(context, 8, IntegerType::Unsigned),
                              (count + 1) / 2, modelDirectory);
    if (!packed)
      return packed.takeError();
    TensorBytes bytes;
    bytes.owned = std::make_unique<char[]>(static_cast<size_t>(std::max<int64_t>(count, 1)));
    bool isSigned = !element.isUnsignedInteger();
    for (int64_t i = 0; i < count; ++i) {
      unsigned byte = static_cast<uint8_t>(packed->data[i / 2]);
      int nibble = static_cast<int>(i % 2 ? byte >> 4 : byte & 0xf);
      bytes.owned[i] = static_cast<char>(isSigned && nibble >= 8 ? nibble - 16 : nibble);
    }
    bytes.data = bytes.owned.get();
    bytes.size = static_cast<size_t>(count);
    return DecodedTensor{RankedTensorType::get(shape, element), std::move(bytes)};
  }
  auto bytes = decodeBytes(tensor, element, count, modelDirectory);
  if (!bytes)
    return bytes.takeError();
  return DecodedTensor{RankedTensorType::get(shape, element), std::move(*bytes)};
}

DenseElementsAttr denseFromBytes(RankedTensorType type, const char *data, size_t size) {
  if (type.getElementType().isInteger(1)) {
    SmallVector<bool> values;
    for (size_t i = 0; i < size; ++i)
      values.push_back(data[i] != 0);
    return DenseElementsAttr::get(type, values);
  }
  return DenseElementsAttr::getFromRawBuffer(type, ArrayRef<char>(data, size));
}

} // namespace

llvm::Expected<DenseElementsAttr> infer::import::denseAttrFromTensor(MLIRContext *context,
                                                                     onnx::TensorProto &tensor) {
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL)
    return tensorError(tensor, "constant values with external data are not supported");
  auto decoded = decodeTensor(context, tensor, "");
  if (!decoded)
    return decoded.takeError();
  return denseFromBytes(decoded->type, decoded->bytes.data, decoded->bytes.size);
}

llvm::Expected<Value> infer::import::materializeTensor(OpBuilder &builder, Location loc,
                                                       onnx::TensorProto &tensor,
                                                       StringRef modelDirectory,
                                                       int64_t *weightBytes) {
  MLIRContext *context = builder.getContext();
  auto decoded = decodeTensor(context, tensor, modelDirectory);
  if (!decoded)
    return decoded.takeError();
  RankedTensorType type = decoded->type;
  TensorBytes &bytes = decoded->bytes;
  if (type.getNumElements() <= kMaxInlineElements)
    return graph::ConstantOp::create(builder, loc, cast<ElementsAttr>(denseFromBytes(type, bytes.data, bytes.size)))
        .getResult();

  if (weightBytes)
    *weightBytes += bytes.size;
  auto insertWeight = [&]() -> graph::WeightHandle {
    if (bytes.file)
      return graph::insertFileWeight(context, tensor.name(), std::move(*bytes.file));
    if (bytes.rawData) {
      // Hand the moved-out raw_data string to the blob: no copy of the bytes.
      std::string *raw = bytes.rawData.release();
      return graph::insertWeightBlob(
          context, tensor.name(),
          AsmResourceBlob(ArrayRef<char>(raw->data(), raw->size()), /*align=*/1,
                          [raw](void *, size_t, size_t) { delete raw; }, /*dataIsMutable=*/false));
    }
    return graph::insertOwnedWeight(context, tensor.name(), std::move(bytes.owned), bytes.size);
  };
  graph::WeightHandle handle = insertWeight();
  auto attr = graph::WeightAttr::get(context, type, handle);
  return graph::WeightOp::create(builder, loc, attr).getResult();
}
