//===- ArtifactReader.cpp - opens and verifies model.infer ----------------===//

#include "runtime/artifact/ArtifactReader.h"

#include "runtime/artifact/ManifestChecks.h"

#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <thread>
#include <vector>

namespace infer::artifact {
namespace {

std::string num(uint64_t value) { return std::to_string(value); }

std::string hex(uint64_t value) {
  char text[19];
  std::snprintf(text, sizeof(text), "0x%016llx", static_cast<unsigned long long>(value));
  return text;
}

/// Bytes read per pread when hashing or checking padding.
constexpr uint64_t kChunk = uint64_t(8) << 20;

struct FreeDeleter {
  void operator()(void *pointer) const { std::free(pointer); }
};

/// The most threads that verify a chunked payload checksum: page-cache reads
/// stop scaling around memory bandwidth.
constexpr unsigned kMaxHashThreads = 16;

/// XXH64 (seed 0) of `file`'s bytes [begin, end), read kChunk at a time.
StatusOr<uint64_t> hashRange(const RegularFile &file, uint64_t begin, uint64_t end,
                             std::vector<unsigned char> &buffer) {
  std::unique_ptr<XXH64_state_t, XXH_errorcode (*)(XXH64_state_t *)> state(XXH64_createState(),
                                                                           XXH64_freeState);
  if (!state)
    return resourceExhaustedError("cannot allocate a hash state");
  XXH64_reset(state.get(), 0);
  buffer.resize(static_cast<size_t>(std::min(kChunk, std::max<uint64_t>(end - begin, 1))));
  for (uint64_t offset = begin; offset < end;) {
    uint64_t bytes = std::min<uint64_t>(buffer.size(), end - offset);
    RETURN_IF_ERROR(file.readAt(offset, bytes, buffer.data()));
    XXH64_update(state.get(), buffer.data(), static_cast<size_t>(bytes));
    offset += bytes;
  }
  return uint64_t(XXH64_digest(state.get()));
}

/// Runs work(t) for t in [0, threads): 0 on this thread, the others on
/// threads of their own; the first error in t order wins.
template <typename Work> Status onThreads(unsigned threads, Work work) {
  std::vector<Status> errors(std::max(threads, 1u), okStatus());
  std::vector<std::thread> helpers;
  for (unsigned t = 1; t < threads; ++t)
    helpers.emplace_back([&errors, &work, t] { errors[t] = work(t); });
  errors[0] = work(0);
  for (std::thread &helper : helpers)
    helper.join();
  for (const Status &error : errors)
    RETURN_IF_ERROR(error);
  return okStatus();
}

/// Threads for `items` pieces of hashing or reading.
unsigned hashThreads(uint64_t items) {
  return static_cast<unsigned>(std::max<uint64_t>(
      1, std::min<uint64_t>(items,
                            std::clamp(std::thread::hardware_concurrency(), 1u, kMaxHashThreads))));
}

/// digests[c] for the chunks c in `chunks` of the payload [begin, end)
/// (kPayloadHashChunk bytes each, the last shorter), read from `file` on
/// several threads.
Status hashChunks(const RegularFile &file, uint64_t begin, uint64_t end,
                  const std::vector<uint64_t> &chunks, std::vector<uint64_t> &digests) {
  const unsigned threads = hashThreads(chunks.size());
  return onThreads(threads, [&](unsigned t) -> Status {
    std::vector<unsigned char> own;
    for (size_t i = t; i < chunks.size(); i += threads) {
      uint64_t from = begin + chunks[i] * kPayloadHashChunk;
      ASSIGN_OR_RETURN(digests[size_t(chunks[i])],
                       hashRange(file, from, std::min(end, from + kPayloadHashChunk), own));
    }
    return okStatus();
  });
}

/// Reads of at least this many bytes are split across threads: one pread
/// from the page cache copies ~6.5 GB/s (a 16 GB weight section's upload
/// took 2.45 s of a cold start), several scale toward memory bandwidth.
constexpr uint64_t kParallelReadBytes = uint64_t(64) << 20;
constexpr unsigned kMaxReadThreads = 8;

/// `file`'s bytes [offset, offset + size) into `out`, in equal parts on up
/// to kMaxReadThreads threads when the read is large; the first error wins.
Status readParallel(const RegularFile &file, uint64_t offset, uint64_t size, void *out) {
  const unsigned threads =
      size < kParallelReadBytes
          ? 1u
          : std::clamp(std::thread::hardware_concurrency(), 1u, kMaxReadThreads);
  const uint64_t part = (size + threads - 1) / threads;
  return onThreads(threads, [&](unsigned t) {
    const uint64_t begin = std::min(size, uint64_t(t) * part);
    const uint64_t bytes = std::min(size, begin + part) - begin;
    return file.readAt(offset + begin, bytes, static_cast<char *>(out) + begin);
  });
}

} // namespace

StatusOr<std::unique_ptr<ArtifactReader>> ArtifactReader::open(const std::string &path,
                                                               Options options) {
  std::unique_ptr<ArtifactReader> reader(new ArtifactReader());
  reader->path_ = path;
  ASSIGN_OR_RETURN(RegularFile file, RegularFile::open(path));
  reader->size_ = file.size();
  reader->file_.emplace(std::move(file));
  if (Status status = reader->verify(options); !status.ok())
    return status.withPrefix(path);
  return reader;
}

ArtifactReader::~ArtifactReader() = default;

Status ArtifactReader::verify(Options options) {
  unsigned char head[kHeaderSize] = {};
  uint64_t headBytes = std::min<uint64_t>(size_, kHeaderSize);
  RETURN_IF_ERROR(file_->readAt(0, headBytes, head));
  ASSIGN_OR_RETURN(header_, decodeHeader(head, size_));
  if (options.verifyChecksum && !(header_.flags & kFlagChunkedPayloadHash)) {
    std::vector<unsigned char> buffer;
    ASSIGN_OR_RETURN(uint64_t actual, hashRange(*file_, header_.headerSize, size_, buffer));
    RETURN_IF_ERROR(compareChecksum(actual));
  } else if (options.verifyChecksum) {
    // Chunks from firstDeferred_ on hold weights only; with deferral they
    // are hashed later (streamWeightSection, verifyDeferredChunks).
    const uint64_t payload = size_ - header_.headerSize;
    const uint64_t chunks = (payload + kPayloadHashChunk - 1) / kPayloadHashChunk;
    const uint64_t weightsStart = header_.weightsOffset - header_.headerSize;
    firstDeferred_ =
        options.deferWeightChecksum
            ? std::min(chunks, (weightsStart + kPayloadHashChunk - 1) / kPayloadHashChunk)
            : chunks;
    digests_.assign(size_t(chunks), 0);
    hashed_.assign(size_t(chunks), false);
    std::vector<uint64_t> now;
    for (uint64_t c = 0; c < firstDeferred_; ++c)
      now.push_back(c);
    RETURN_IF_ERROR(hashChunks(*file_, header_.headerSize, size_, now, digests_));
    for (uint64_t c = 0; c < firstDeferred_; ++c)
      hashed_[size_t(c)] = true;
    deferred_ = firstDeferred_ < chunks;
    if (!deferred_)
      RETURN_IF_ERROR(compareChecksum(combineChunkDigests(digests_)));
  }
  if (header_.manifestSize > static_cast<uint64_t>(std::numeric_limits<int>::max()))
    return dataLossError("the manifest (" + num(header_.manifestSize) +
                         " bytes) is not a valid protobuf Manifest");
  std::string manifestBytes(static_cast<size_t>(header_.manifestSize), '\0');
  RETURN_IF_ERROR(
      file_->readAt(header_.manifestOffset, header_.manifestSize, manifestBytes.data()));
  if (!manifest_.ParseFromString(manifestBytes))
    return dataLossError("the manifest (" + num(header_.manifestSize) +
                         " bytes) is not a valid protobuf Manifest");
  // The padding between the manifest and the weights is zeros (the writer's
  // rule; it keeps the format canonical).
  uint64_t paddingStart = header_.manifestOffset + header_.manifestSize;
  std::vector<unsigned char> padding(
      static_cast<size_t>(std::min(kChunk, header_.weightsOffset - paddingStart)));
  for (uint64_t offset = paddingStart; offset < header_.weightsOffset;) {
    uint64_t bytes = std::min<uint64_t>(padding.size(), header_.weightsOffset - offset);
    RETURN_IF_ERROR(file_->readAt(offset, bytes, padding.data()));
    auto nonzero = std::find_if(padding.begin(), padding.begin() + static_cast<ptrdiff_t>(bytes),
                                [](unsigned char c) { return c != 0; });
    if (nonzero != padding.begin() + static_cast<ptrdiff_t>(bytes))
      return dataLossError("the padding before the weight section is not zero (byte " +
                           num(offset + static_cast<uint64_t>(nonzero - padding.begin())) + ")");
    offset += bytes;
  }
  RETURN_IF_ERROR(checkManifest(manifest_, header_.weightsSize));
  // Written while it was verified: what was hashed may not be what was read.
  RETURN_IF_ERROR(file_->checkUnchanged());
  for (int i = 0; i < manifest_.weights_size(); ++i)
    byName_.emplace(manifest_.weights(i).name(), static_cast<size_t>(i));
  return okStatus();
}

Status ArtifactReader::compareChecksum(uint64_t actual) const {
  if (actual != header_.payloadHash)
    return dataLossError("checksum mismatch: the file is corrupted (xxh64 of the payload is " +
                         hex(actual) + ", the header says " + hex(header_.payloadHash) + ")");
  return okStatus();
}

Status ArtifactReader::verifyDeferredChunks() const {
  std::lock_guard<std::mutex> lock(deferredMutex_);
  if (!deferred_)
    return okStatus();
  std::vector<uint64_t> missing;
  for (uint64_t c = firstDeferred_; c < digests_.size(); ++c)
    if (!hashed_[size_t(c)])
      missing.push_back(c);
  Status status = hashChunks(*file_, header_.headerSize, size_, missing, digests_);
  if (status.ok())
    status = compareChecksum(combineChunkDigests(digests_));
  if (!status.ok())
    return status.withPrefix(path_);
  deferred_ = false;
  return okStatus();
}

Status ArtifactReader::streamWeightSection(void *const buffers[2], uint64_t bufferBytes,
                                           const WeightPartConsumer &consume) const {
  if (bufferBytes == 0)
    return invalidArgumentError("streamWeightSection: empty buffers");
  bool deferred;
  {
    std::lock_guard<std::mutex> lock(deferredMutex_);
    deferred = deferred_;
  }
  const uint64_t base = header_.weightsOffset - header_.headerSize; // the section in the payload
  int part = 0;
  for (uint64_t offset = 0; offset < header_.weightsSize; ++part) {
    uint64_t end = std::min(header_.weightsSize, offset + bufferBytes);
    // Where chunks are deferred a part ends on a chunk's end, so each one
    // lies whole in one part (bufferBytes of at least a chunk).
    const uint64_t aligned = (base + end) / kPayloadHashChunk * kPayloadHashChunk;
    if (deferred && end < header_.weightsSize && aligned > base + offset)
      end = aligned - base;
    void *buffer = buffers[part % 2];
    RETURN_IF_ERROR(readParallel(*file_, header_.weightsOffset + offset, end - offset, buffer));
    if (deferred) {
      std::vector<uint64_t> whole; // deferred chunks inside this part
      for (uint64_t c = std::max(firstDeferred_,
                                 (base + offset + kPayloadHashChunk - 1) / kPayloadHashChunk);
           c < digests_.size() &&
           std::min((c + 1) * kPayloadHashChunk, size_ - header_.headerSize) <= base + end;
           ++c)
        whole.push_back(c);
      const unsigned threads = hashThreads(whole.size());
      std::lock_guard<std::mutex> lock(deferredMutex_);
      RETURN_IF_ERROR(onThreads(threads, [&](unsigned t) {
        for (size_t i = t; i < whole.size(); i += threads) {
          const uint64_t from = whole[i] * kPayloadHashChunk;
          const uint64_t to = std::min(from + kPayloadHashChunk, size_ - header_.headerSize);
          digests_[size_t(whole[i])] =
              hash64(static_cast<const unsigned char *>(buffer) + (from - base - offset),
                     size_t(to - from));
        }
        return okStatus();
      }));
      for (uint64_t c : whole)
        hashed_[size_t(c)] = true;
    }
    RETURN_IF_ERROR(consume(offset, end - offset, buffer, part % 2));
    offset = end;
  }
  return verifyDeferredChunks();
}

Status ArtifactReader::readWeightSection(uint64_t offset, uint64_t size, void *out) const {
  if (offset > header_.weightsSize || size > header_.weightsSize - offset)
    return invalidArgumentError(path_ + ": [" + num(offset) + ", +" + num(size) +
                                ") is outside the weight section");
  RETURN_IF_ERROR(verifyDeferredChunks());
  return readParallel(*file_, header_.weightsOffset + offset, size, out);
}

Status ArtifactReader::readWeight(size_t index, void *out) const {
  const Weight &entry = manifest_.weights(static_cast<int>(index));
  return readWeightSection(entry.offset(), entry.size(), out);
}

StatusOr<WeightView> ArtifactReader::weight(size_t index) const {
  const Weight &entry = manifest_.weights(static_cast<int>(index));
  size_t allocation =
      static_cast<size_t>(alignUp(std::max<uint64_t>(entry.size(), 1), kWeightAlignment));
  std::shared_ptr<void> storage(std::aligned_alloc(kWeightAlignment, allocation), FreeDeleter());
  if (!storage)
    return resourceExhaustedError("cannot allocate " + num(entry.size()) + " bytes for weight '" +
                                  entry.name() + "'");
  RETURN_IF_ERROR(readWeight(index, storage.get()));
  WeightView view;
  view.entry = &entry;
  view.data = storage.get();
  view.size = static_cast<size_t>(entry.size());
  view.storage = std::move(storage);
  return view;
}

StatusOr<WeightView> ArtifactReader::weight(std::string_view name) const {
  auto found = byName_.find(std::string(name));
  if (found == byName_.end())
    return notFoundError("no weight named '" + std::string(name) + "' in " + path_);
  return weight(found->second);
}

Status ArtifactReader::checkUnchanged() const { return file_->checkUnchanged(); }

} // namespace infer::artifact
