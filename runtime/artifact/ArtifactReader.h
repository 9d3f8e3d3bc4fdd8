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
#include <functional>
#include <memory>
#include <mutex>
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
    /// With verifyChecksum and a chunked payload hash: hash at open only the
    /// chunks that are not all weights; the others are hashed as
    /// streamWeightSection reads them (one pass over the file instead of
    /// two: its caller uses nothing it got until it returns OK), or all at
    /// once before any other weight read returns. The checksum (which also
    /// covers the manifest) is compared then, not at open; the manifest is
    /// still checked field by field at open. For the backends, which read
    /// every weight before they run anything.
    bool deferWeightChecksum = false;
  };
  /// streamWeightSection's consumer: the part [offset, offset + bytes) of the
  /// weight section in `data` (buffer number `buffer`).
  using WeightPartConsumer =
      std::function<Status(uint64_t offset, uint64_t bytes, const void *data, int buffer)>;

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
  /// Reads the whole weight section in parts of at most `bufferBytes` into
  /// buffers[0], buffers[1], buffers[0], ... and hands each to `consume`
  /// after its deferred chunks (Options::deferWeightChecksum) were hashed;
  /// a part's buffer is read into again two parts later. Parts end on the
  /// payload's hash chunks where chunks are deferred. After the last part
  /// the deferred checksum is compared (DataLoss on a mismatch: the
  /// consumer must not use what it got).
  Status streamWeightSection(void *const buffers[2], uint64_t bufferBytes,
                             const WeightPartConsumer &consume) const;
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
  /// Hashes the deferred chunks not hashed yet and compares the payload
  /// checksum; OK at once when nothing is deferred.
  Status verifyDeferredChunks() const;
  Status compareChecksum(uint64_t actual) const;

  std::string path_;
  std::optional<RegularFile> file_;
  uint64_t size_ = 0;
  Header header_;
  Manifest manifest_;
  std::unordered_map<std::string, size_t> byName_;
  // Deferred weight chunks: digests_[c] for the payload's chunks, those from
  // firstDeferred_ on filled as they are hashed (hashed_[c]).
  mutable std::mutex deferredMutex_;
  mutable std::vector<uint64_t> digests_;
  mutable std::vector<bool> hashed_;
  mutable bool deferred_ = false;
  uint64_t firstDeferred_ = 0;
};

} // namespace infer::artifact

#endif // INFER_RUNTIME_ARTIFACT_ARTIFACTREADER_H
