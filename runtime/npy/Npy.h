//===- Npy.h - NumPy .npy arrays for the runtime ----------------*- C++ -*-===//
//
// Reads and writes little-endian C-order .npy files (f32, i64, i32) into a
// HostArray. The header dictionary is parsed by xtensor's npy helpers (header
// only; no LLVM). Errors are Statuses naming the file.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_NPY_NPY_H
#define INFER_RUNTIME_NPY_NPY_H

#include "runtime/artifact/artifact.pb.h"
#include "runtime/base/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace infer {

/// A host tensor: element type, row-major shape and its bytes.
struct HostArray {
  artifact::ElementType type = artifact::ELEMENT_TYPE_UNSPECIFIED;
  std::vector<int64_t> shape;
  std::vector<unsigned char> bytes;

  int64_t numElements() const;
};

/// Reads `path` (dtypes <f4, <i8, <i4).
StatusOr<HostArray> readNpy(const std::string &path);
/// Writes `array` (F32, I64 or I32) to `path`.
Status writeNpy(const std::string &path, const HostArray &array);

} // namespace infer

#endif // INFER_RUNTIME_NPY_NPY_H
