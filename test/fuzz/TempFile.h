//===- TempFile.h - fuzz inputs for readers that take a path ----*- C++ -*-===//
//
// The artifact and .npy readers open a path (they insist on a regular file),
// so their fuzz targets write each input to one file per process under
// $TMPDIR, rewritten in place for every input.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_TEST_FUZZ_TEMPFILE_H
#define INFER_TEST_FUZZ_TEMPFILE_H

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace infer::fuzz {

/// Writes `size` bytes to this process's temporary file named with `suffix`
/// and returns its path; aborts if the file cannot be written (the fuzzer
/// would otherwise test nothing).
inline std::string writeTempFile(const uint8_t *data, size_t size, const char *suffix) {
  const char *dir = std::getenv("TMPDIR");
  std::string path = std::string(dir && *dir ? dir : "/tmp") + "/infer-fuzz-" +
                     std::to_string(::getpid()) + suffix;
  std::FILE *file = std::fopen(path.c_str(), "wb");
  if (!file || (size && std::fwrite(data, 1, size, file) != size) || std::fclose(file) != 0) {
    std::perror(path.c_str());
    std::abort();
  }
  return path;
}

} // namespace infer::fuzz

#endif // INFER_TEST_FUZZ_TEMPFILE_H
