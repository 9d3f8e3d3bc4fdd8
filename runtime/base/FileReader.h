//===- FileReader.h - whole small files, read safely ------------*- C++ -*-===//
//
// For the files a model brings (tokenizer.json, its configs): only regular
// files (a FIFO or a device would block or never end), at most a stated size.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_BASE_FILEREADER_H
#define INFER_RUNTIME_BASE_FILEREADER_H

#include "runtime/base/Status.h"

#include <cstdint>
#include <string>

namespace infer {

/// The bytes of the regular file at `path`. NotFound when it does not
/// exist, InvalidArgument when it is not a regular file or is larger than
/// `maxBytes`.
StatusOr<std::string> readRegularFile(const std::string &path, uint64_t maxBytes);

/// Whether `path` exists (as anything).
bool pathExists(const std::string &path);

/// `dir`/`name` when that file exists and, links resolved, lies inside `dir`
/// (resolved too); "" when there is no such file. InvalidArgument when it
/// leads outside `dir`.
StatusOr<std::string> fileInsideDirectory(const std::string &dir, const std::string &name);

} // namespace infer

#endif // INFER_RUNTIME_BASE_FILEREADER_H
