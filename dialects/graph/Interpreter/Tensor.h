//===- Tensor.h - dense host tensors for the reference interpreter -*- C++ -*-===//
//
// The values the reference interpreter computes with: owning, dense,
// row-major tensors of one of three element types.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_DIALECTS_GRAPH_INTERPRETER_TENSOR_H
#define INFER_DIALECTS_GRAPH_INTERPRETER_TENSOR_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace infer::interp {

/// The interpreter's element types. IR values of type i32 are held as I64 and
/// f64, bf16 and f16 as F32 (the 16-bit ones rounded to their type); booleans
/// take one byte each, 0 or 1.
enum class DType { F32, I64, Bool };

/// "f32", "i64" or "i1", as MLIR spells the element type.
llvm::StringRef dtypeName(DType dtype);

/// Bytes per element: 4, 8 or 1.
int64_t elementSize(DType dtype);

/// Renders a shape as "[2, 7, 512]" ("[]" for a scalar).
std::string formatShape(llvm::ArrayRef<int64_t> shape);

/// An owning, dense, row-major tensor. Rank 0 is a scalar with one element;
/// dims may be zero.
class Tensor {
public:
  /// A zero f32 scalar.
  Tensor();
  /// A zero-filled tensor. Every dim must be non-negative.
  Tensor(DType dtype, std::vector<int64_t> shape);

  /// Tensors holding `values`, whose count must be the product of `shape`.
  static Tensor fromF32(std::vector<int64_t> shape, std::vector<float> values);
  static Tensor fromI64(std::vector<int64_t> shape, std::vector<int64_t> values);
  /// Any nonzero byte is stored as 1.
  static Tensor fromBool(std::vector<int64_t> shape, std::vector<uint8_t> values);

  DType dtype() const { return type; }
  const std::vector<int64_t> &shape() const { return dims; }
  int64_t rank() const { return static_cast<int64_t>(dims.size()); }
  int64_t numElements() const { return count; }
  int64_t byteSize() const { return count * elementSize(type); }
  /// "[2, 7, 512]".
  std::string shapeString() const { return formatShape(dims); }

  /// Typed access; the dtype must match (checked by assertion).
  float *f32();
  const float *f32() const;
  int64_t *i64();
  const int64_t *i64() const;
  uint8_t *boolData();
  const uint8_t *boolData() const;

  /// Typed access for T in {float, int64_t, uint8_t}, for templated kernels.
  template <typename T> T *data();
  template <typename T> const T *data() const;
  template <typename T> llvm::ArrayRef<T> values() const {
    return llvm::ArrayRef<T>(data<T>(), static_cast<size_t>(count));
  }

  /// The bytes, for element-type-agnostic copies.
  void *rawData() { return bytes.data(); }
  const void *rawData() const { return bytes.data(); }

private:
  DType type = DType::F32;
  std::vector<int64_t> dims;
  int64_t count = 1;
  // Raw storage; std::allocator returns memory aligned for any scalar type.
  std::vector<unsigned char> bytes;
};

/// The DType that holds C++ type T.
template <typename T> constexpr DType dtypeOf();
template <> constexpr DType dtypeOf<float>() { return DType::F32; }
template <> constexpr DType dtypeOf<int64_t>() { return DType::I64; }
template <> constexpr DType dtypeOf<uint8_t>() { return DType::Bool; }

} // namespace infer::interp

#endif // INFER_DIALECTS_GRAPH_INTERPRETER_TENSOR_H
