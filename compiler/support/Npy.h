//===- Npy.h - NumPy .npy files to and from interpreter tensors -*- C++ -*-===//
//
// The exchange format for golden inputs and outputs: what numpy.save writes
// and numpy.load reads.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_COMPILER_SUPPORT_NPY_H
#define INFER_COMPILER_SUPPORT_NPY_H

#include "dialects/graph/Interpreter/Tensor.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace infer::support {

/// Reads a C-order .npy file (format 1.0, 2.0 or 3.0). float32 ('<f4'),
/// int64 ('<i8') and bool ('|b1') load as is; int32 ('<i4') is widened to I64
/// and float64 ('<f8') rounded to F32. Other dtypes, big-endian and Fortran
/// order are errors, as are truncated or malformed files; the message names
/// the file.
llvm::Expected<interp::Tensor> readNpy(llvm::StringRef path);

/// Writes `tensor` as a format 1.0 .npy file ('<f4', '<i8' or '|b1').
llvm::Error writeNpy(llvm::StringRef path, const interp::Tensor &tensor);

} // namespace infer::support

#endif // INFER_COMPILER_SUPPORT_NPY_H
