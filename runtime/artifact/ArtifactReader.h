//===- ArtifactReader.h - opens and verifies model.infer --------*- C++ -*-===//
//
// Opens an artifact, verifies it (magic, version, sizes, checksums, every
// manifest field: ManifestChecks.h) and reads weights on request. The file is
// read with pread, never mapped: a file truncated while in use is a read
// error, not SIGBUS, and nothing reads it after the backends have loaded
// their copies of the weights. The descriptor stays open, so a file renamed
// over the path does not change what this reader reads; a file written in
// place is detected (checkUnchanged, which the backends call after loading).
// docs/trust-model.md, "Runtime".
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_ARTIFACT_ARTIFACTREADER_H
#define INFER_RUNTIME_ARTIFACT_ARTIFACTREADER_H

#include "runtime/artifact/ArtifactFormat.h"
#include "runtime/artifact/artifact.pb.h"
#include "runtime/base/FileReader.h"
#include "runtime/base/Status.h"

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace infer::artifact {

/// A copy of one weight's bytes (kWeightAlignment-aligned), for inspection
/// and tests; backends read straight into their own memory (readWeight).
struct WeightView {
  const Weight *entry = nullptr; ///< its manifest entry
  const void *data = nullptr;    ///< kWeightAlignment-aligned, owned by `storage`
  size_t size = 0;
  std::shared_ptr<void> storage;
};

class ArtifactReader {
public:
  struct Options {
    /// Hash the whole payload at open. Costs ~0.1 s per GB; switch off only
    /// where the file was verified already.
    bool verifyChecksum = true;
  };

  /// Opens and verifies `path`. Errors name the file and what is wrong.
  static StatusOr<std::unique_ptr<ArtifactReader>> open(const std::string &path,
                                                       Options options);
  static StatusOr<std::unique_ptr<ArtifactReader>> open(const std::string &path) {
    return open(path, Options());
  }
  ~ArtifactReader();
  ArtifactReader(const ArtifactReader &) = delete;
  ArtifactReader &operator=(const ArtifactReader &) = delete;

  const std::string &path() const { return path_; }
  const Header &header() const { return header_; }
  const Manifest &manifest() const { return manifest_; }
  uint64_t fileSize() const { return size_; }

  size_t numWeights() const { return static_cast<size_t>(manifest_.weights_size()); }
  /// Reads the `index`th weight (index < numWeights()) into `out`, which
  /// holds its manifest size. DataLoss when the file has become shorter.
  Status readWeight(size_t index, void *out) const;
  /// Reads `size` bytes at `offset` of the weight section into `out`.
  Status readWeightSection(uint64_t offset, uint64_t size, void *out) const;
  /// A copy of the `index`th weight (index < numWeights()).
  StatusOr<WeightView> weight(size_t index) const;
  /// A copy of the weight called `name`, or NotFound.
  StatusOr<WeightView> weight(std::string_view name) const;

  /// OK when the file is still what open() verified (same size and
  /// modification times); DataLoss, naming the file, when it was written or
  /// truncated since. Backends call it after loading the weights, so a
  /// weight read after an in-place rewrite is never used.
  Status checkUnchanged() const;

private:
  ArtifactReader() = default;
  Status verify(Options options);

  std::string path_;
  std::optional<RegularFile> file_;
  uint64_t size_ = 0;
  Header header_;
  Manifest manifest_;
  std::unordered_map<std::string, size_t> byName_;
};

} // namespace infer::artifact

#endif // INFER_RUNTIME_ARTIFACT_ARTIFACTREADER_H
