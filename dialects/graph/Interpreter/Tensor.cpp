//===- Tensor.cpp - dense host tensors for the reference interpreter ------===//

#include "dialects/graph/Interpreter/Tensor.h"

#include "llvm/Support/raw_ostream.h"

#include <cassert>
#include <cstring>

using namespace infer::interp;

llvm::StringRef infer::interp::dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "f32";
  case DType::I64:
    return "i64";
  case DType::Bool:
    return "i1";
  }
  return "?";
}

int64_t infer::interp::elementSize(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return 4;
  case DType::I64:
    return 8;
  case DType::Bool:
    return 1;
  }
  return 1;
}

std::string infer::interp::formatShape(llvm::ArrayRef<int64_t> shape) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << '[';
  llvm::interleaveComma(shape, os);
  os << ']';
  return text;
}

Tensor::Tensor() : bytes(sizeof(float), 0) {}

Tensor::Tensor(DType dtype, std::vector<int64_t> shape) : type(dtype), dims(std::move(shape)) {
  for (int64_t dim : dims) {
    assert(dim >= 0 && "tensor dims must be non-negative");
    count *= dim;
  }
  bytes.assign(static_cast<size_t>(count * elementSize(type)), 0);
}

Tensor Tensor::fromF32(std::vector<int64_t> shape, std::vector<float> values) {
  Tensor tensor(DType::F32, std::move(shape));
  assert(static_cast<int64_t>(values.size()) == tensor.numElements() &&
         "value count must match the shape");
  if (!values.empty())
    std::memcpy(tensor.rawData(), values.data(), values.size() * sizeof(float));
  return tensor;
}

Tensor Tensor::fromI64(std::vector<int64_t> shape, std::vector<int64_t> values) {
  Tensor tensor(DType::I64, std::move(shape));
  assert(static_cast<int64_t>(values.size()) == tensor.numElements() &&
         "value count must match the shape");
  if (!values.empty())
    std::memcpy(tensor.rawData(), values.data(), values.size() * sizeof(int64_t));
  return tensor;
}

Tensor Tensor::fromBool(std::vector<int64_t> shape, std::vector<uint8_t> values) {
  Tensor tensor(DType::Bool, std::move(shape));
  assert(static_cast<int64_t>(values.size()) == tensor.numElements() &&
         "value count must match the shape");
  uint8_t *out = tensor.boolData();
  for (size_t i = 0; i < values.size(); ++i)
    out[i] = values[i] != 0;
  return tensor;
}

template <typename T> T *Tensor::data() {
  assert(type == dtypeOf<T>() && "tensor accessed with the wrong element type");
  return reinterpret_cast<T *>(bytes.data());
}

template <typename T> const T *Tensor::data() const {
  assert(type == dtypeOf<T>() && "tensor accessed with the wrong element type");
  return reinterpret_cast<const T *>(bytes.data());
}

template float *Tensor::data<float>();
template int64_t *Tensor::data<int64_t>();
template uint8_t *Tensor::data<uint8_t>();
template const float *Tensor::data<float>() const;
template const int64_t *Tensor::data<int64_t>() const;
template const uint8_t *Tensor::data<uint8_t>() const;

float *Tensor::f32() { return data<float>(); }
const float *Tensor::f32() const { return data<float>(); }
int64_t *Tensor::i64() { return data<int64_t>(); }
const int64_t *Tensor::i64() const { return data<int64_t>(); }
uint8_t *Tensor::boolData() { return data<uint8_t>(); }
const uint8_t *Tensor::boolData() const { return data<uint8_t>(); }
