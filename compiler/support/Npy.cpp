//===- Npy.cpp - NumPy .npy files to and from interpreter tensors ---------===//
//
// The file format is runtime/npy's (one reader and writer for the compiler and
// the runtime); this file only converts between its HostArray and the
// interpreter's Tensor and between Status and llvm::Error.
//
//===----------------------------------------------------------------------===//

#include "compiler/support/Npy.h"

#include "runtime/npy/Npy.h"

#include <cstring>

using namespace infer;
using interp::DType;
using interp::Tensor;
namespace art = infer::artifact;

llvm::Expected<Tensor> support::readNpy(llvm::StringRef path) {
  StatusOr<HostArray> read = infer::readNpy(path.str());
  if (!read.ok())
    return llvm::createStringError(llvm::inconvertibleErrorCode(), read.status().message());
  const HostArray &array = read.value();
  int64_t count = array.numElements();
  const unsigned char *src = array.bytes.data();
  switch (array.type) {
  case art::ELEMENT_TYPE_F32:
  case art::ELEMENT_TYPE_F64: {
    Tensor tensor(DType::F32, array.shape);
    for (int64_t i = 0; i < count; ++i) {
      if (array.type == art::ELEMENT_TYPE_F32) {
        std::memcpy(&tensor.f32()[i], src + 4 * i, 4);
      } else {
        double value;
        std::memcpy(&value, src + 8 * i, 8);
        tensor.f32()[i] = static_cast<float>(value);
      }
    }
    return tensor;
  }
  case art::ELEMENT_TYPE_I64:
  case art::ELEMENT_TYPE_I32: {
    Tensor tensor(DType::I64, array.shape);
    for (int64_t i = 0; i < count; ++i) {
      if (array.type == art::ELEMENT_TYPE_I64) {
        std::memcpy(&tensor.i64()[i], src + 8 * i, 8);
      } else {
        int32_t value;
        std::memcpy(&value, src + 4 * i, 4);
        tensor.i64()[i] = value;
      }
    }
    return tensor;
  }
  case art::ELEMENT_TYPE_BOOL: {
    Tensor tensor(DType::Bool, array.shape);
    for (int64_t i = 0; i < count; ++i)
      tensor.boolData()[i] = src[i] != 0;
    return tensor;
  }
  default:
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "'" + path + "': unsupported element type");
  }
}

llvm::Error support::writeNpy(llvm::StringRef path, const Tensor &tensor) {
  HostArray array;
  switch (tensor.dtype()) {
  case DType::F32:
    array.type = art::ELEMENT_TYPE_F32;
    break;
  case DType::I64:
    array.type = art::ELEMENT_TYPE_I64;
    break;
  case DType::Bool:
    array.type = art::ELEMENT_TYPE_BOOL;
    break;
  }
  array.shape.assign(tensor.shape().begin(), tensor.shape().end());
  const auto *bytes = static_cast<const unsigned char *>(tensor.rawData());
  array.bytes.assign(bytes, bytes + tensor.byteSize());
  Status written = infer::writeNpy(path.str(), array);
  if (!written.ok())
    return llvm::createStringError(llvm::inconvertibleErrorCode(), written.message());
  return llvm::Error::success();
}
