//===- FileReader.h - files read safely: regular, bounded, pread -*- C++ -*-===//
//
// For every file a user hands the runtime (artifacts, .npy inputs, the files a
// model brings): only regular files (a FIFO would block, a device such as
// /dev/zero never end, a directory fails only when read), reads bounded by
// the size the caller expects, and positioned reads (pread) that report a
// file shorter than expected as an error instead of faulting as a mapping
// would (SIGBUS).
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_BASE_FILEREADER_H
#define INFER_RUNTIME_BASE_FILEREADER_H

#include "runtime/base/Status.h"

#include <cstdint>
#include <string>

namespace infer {

/// An open regular file read with pread. Move-only; closes on destruction.
class RegularFile {
public:
  /// Opens `path` without blocking (O_NONBLOCK: a FIFO must not wait for a
  /// writer) and checks with fstat that it is a regular file. NotFound /
  /// PermissionDenied from open, InvalidArgument "'X' is not a regular file
  /// (a directory)" otherwise.
  static StatusOr<RegularFile> open(const std::string &path);

  RegularFile(RegularFile &&other) noexcept;
  RegularFile &operator=(RegularFile &&other) noexcept;
  RegularFile(const RegularFile &) = delete;
  RegularFile &operator=(const RegularFile &) = delete;
  ~RegularFile();

  const std::string &path() const { return path_; }
  /// The size fstat gave at open.
  uint64_t size() const { return size_; }

  /// Reads exactly `size` bytes at `offset` into `out`. DataLoss when the
  /// file ends first ("'X' ended at byte N, M bytes short: it was truncated
  /// while in use?"), the errno's error when the read fails.
  Status readAt(uint64_t offset, uint64_t size, void *out) const;

  /// Whether the file is still what open() saw: the same size and
  /// modification time (to the file system's timestamp granularity).
  /// DataLoss naming what changed otherwise (the file was written or
  /// truncated in place). A file renamed over the path is not a change: the
  /// descriptor still reads the file it opened.
  Status checkUnchanged() const;

private:
  RegularFile() = default;
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
  int64_t mtimeNs_ = 0;
};

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
