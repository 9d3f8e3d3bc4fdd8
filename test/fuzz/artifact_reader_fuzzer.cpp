//===- artifact_reader_fuzzer.cpp - libFuzzer target for model.infer ------===//
//
// Opens each input as an artifact (ArtifactReader: header, checksums, every
// manifest field) and, when it opens, loads it into the cpu backend (weights
// copied out, exec and step programs checked against the kernels' needs).
//
// Built twice: artifact-reader-fuzzer mutates raw bytes, which the checksums
// stop almost at once; artifact-manifest-fuzzer (INFER_FUZZ_MANIFEST_MUTATOR)
// parses the header and manifest, mutates the manifest's fields
// (ProtoMutator.h), the weight bytes or a header field, lays the file out
// again and recomputes both checksums, so every input reaches the manifest
// checks and the backend.
//
//===----------------------------------------------------------------------===//

#include "runtime/artifact/ArtifactFormat.h"
#include "runtime/artifact/ArtifactReader.h"
#include "runtime/cpu/CpuBackend.h"
#include "test/fuzz/ProtoMutator.h"
#include "test/fuzz/TempFile.h"

#include <cstddef>
#include <cstdint>

namespace art = infer::artifact;

#ifdef INFER_FUZZ_MANIFEST_MUTATOR

#include <cstring>
#include <vector>

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);

namespace {

uint64_t loadU64(const uint8_t *p) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i)
    value = (value << 8) | p[i];
  return value;
}

/// The header's offsets and sizes, read without the reader's checks.
bool parseLayout(const uint8_t *data, size_t size, art::Header &header) {
  if (size < art::kHeaderSize || std::memcmp(data, art::kMagic, sizeof(art::kMagic)) != 0)
    return false;
  header.manifestOffset = loadU64(data + 32);
  header.manifestSize = loadU64(data + 40);
  header.weightsOffset = loadU64(data + 48);
  header.weightsSize = loadU64(data + 56);
  return header.manifestOffset <= size && header.manifestSize <= size - header.manifestOffset &&
         header.weightsOffset <= size && header.weightsSize <= size - header.weightsOffset;
}

} // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t maxSize,
                                          unsigned int seed) {
  art::Header header;
  art::Manifest manifest;
  if (!parseLayout(data, size, header) ||
      !manifest.ParseFromArray(data + header.manifestOffset, int(header.manifestSize)))
    return LLVMFuzzerMutate(data, size, maxSize);
  std::vector<uint8_t> weights(data + header.weightsOffset,
                               data + header.weightsOffset + header.weightsSize);
  std::mt19937_64 random(seed);
  unsigned kind = seed % 20;
  if (kind < 15) {
    infer::fuzz::mutateMessage(manifest, random, 64, 1 + int(seed % 3));
  } else if (kind < 18 && !weights.empty()) { // a few weight bytes, same size
    size_t at = random() % weights.size();
    size_t span = std::min<size_t>(64, weights.size() - at);
    LLVMFuzzerMutate(weights.data() + at, span, span);
  }
  std::string manifestBytes;
  if (!manifest.SerializeToString(&manifestBytes))
    return LLVMFuzzerMutate(data, size, maxSize);
  // The writer's layout: header, manifest, weights at the next aligned offset.
  art::Header out;
  out.manifestOffset = art::kHeaderSize;
  out.manifestSize = manifestBytes.size();
  out.weightsOffset = art::alignUp(out.manifestOffset + out.manifestSize, art::kWeightAlignment);
  out.weightsSize = weights.size();
  out.fileSize = out.weightsOffset + out.weightsSize;
  if (out.fileSize > maxSize)
    return LLVMFuzzerMutate(data, size, maxSize);
  std::memset(data, 0, out.weightsOffset);
  std::memcpy(data + out.manifestOffset, manifestBytes.data(), manifestBytes.size());
  if (!weights.empty())
    std::memcpy(data + out.weightsOffset, weights.data(), weights.size());
  size_t end = out.fileSize;
  if (kind >= 18) { // one header field at an edge (the reader must refuse it cleanly)
    uint64_t *fields[] = {&out.headerSize,   &out.fileSize,      &out.manifestOffset,
                          &out.manifestSize, &out.weightsOffset, &out.weightsSize};
    uint64_t edges[] = {0, 1, art::kHeaderSize - 1, art::kWeightAlignment, ~0ull, ~0ull >> 1};
    *fields[random() % 6] = edges[random() % 6];
  }
  out.payloadHash = art::payloadHash(data + art::kHeaderSize, end - art::kHeaderSize, out.flags);
  art::encodeHeader(out, data);
  return end;
}
#endif

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  infer::fuzz::silenceProtobufLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = infer::fuzz::writeTempFile(data, size, ".infer");
  auto reader = art::ArtifactReader::open(path);
  if (!reader.ok())
    return 0;
  auto backend = infer::cpu::CpuBackend::create(**reader);
  (void)backend;
  return 0;
}
