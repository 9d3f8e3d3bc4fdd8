//===- ArtifactReader.h - opens and verifies model.infer --------*- C++ -*-===//
//
// Maps an artifact read-only, verifies it (magic, version, sizes, checksums,
// every weight inside the weight section) and hands out views of the weights
// that point into the mapping: nothing is copied.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_ARTIFACT_ARTIFACTREADER_H
#define INFER_RUNTIME_ARTIFACT_ARTIFACTREADER_H

#include "runtime/artifact/ArtifactFormat.h"
#include "runtime/artifact/artifact.pb.h"
#include "runtime/base/Status.h"

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

namespace infer::artifact {

/// A weight's bytes inside the mapping (valid while the reader lives).
struct WeightView {
  const Weight *entry = nullptr; ///< its manifest entry
  const void *data = nullptr;    ///< kWeightAlignment-aligned
  size_t size = 0;
};

class ArtifactReader {
public:
  struct Options {
    /// Hash the whole payload at open. Costs ~0.1 s per GB; switch off only
    /// where the file was verified already.
    bool verifyChecksum = true;
  };

  /// Maps and verifies `path`. Errors name the file and what is wrong.
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
  /// The `index`th weight of the manifest (index < numWeights()).
  WeightView weight(size_t index) const;
  /// The weight called `name`, or NotFound.
  StatusOr<WeightView> weight(std::string_view name) const;

private:
  ArtifactReader() = default;
  Status verify(Options options);

  std::string path_;
  const unsigned char *base_ = nullptr;
  uint64_t size_ = 0;
  Header header_;
  Manifest manifest_;
  std::unordered_map<std::string, size_t> byName_;
};

} // namespace infer::artifact

#endif // INFER_RUNTIME_ARTIFACT_ARTIFACTREADER_H
