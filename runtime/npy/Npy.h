//===- Npy.h - NumPy .npy arrays for the runtime ----------------*- C++ -*-===//
//
// Reads and writes little-endian C-order .npy files (f32, i64, i32) into a
// HostArray. Reading takes only regular files and reads no more than the
// header declares; the header dictionary is parsed strictly (Npy.cpp).
// Writing uses xtensor's npy header writer (header only; no LLVM). Errors
// are Statuses naming the file.
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

/// Reads a C-order .npy file (format 1.0, 2.0 or 3.0) as stored: '<f4' F32,
/// '<f8' F64, '<i8' I64, '<i4' I32, '|b1' BOOL. Other dtypes, big-endian and
/// Fortran order are errors, as are truncated or malformed files, a header
/// dictionary that is not exactly numpy's (a shape dim that is not a
/// non-negative integer such as (2.5, 7), a repeated or unknown key), a file
/// that is not regular (a directory, FIFO or device) and data larger than
/// the host memory available; the message names the file.
StatusOr<HostArray> readNpy(const std::string &path);
/// Writes `array` (F32, F64, I64, I32 or BOOL) to `path`.
Status writeNpy(const std::string &path, const HostArray &array);

} // namespace infer

#endif // INFER_RUNTIME_NPY_NPY_H
