//===- PayloadChecksumTest.cpp - the chunked payload checksum -------------===//
//
// An artifact's payload checksum under kFlagChunkedPayloadHash is XXH64 of
// the chunks' XXH64 digests (ArtifactFormat.h). The reader verifies the
// chunks on several threads; here a file of two and a half chunks whose
// checksum is composed by the test from xxhash's own calls passes the
// checksum (and fails later, on its manifest, which is not one), a byte
// flipped in the last chunk fails it, and the same file under the flagless
// whole-stream checksum (artifacts from before the flag) passes too.
//
//===----------------------------------------------------------------------===//

#include "runtime/artifact/ArtifactFormat.h"
#include "runtime/artifact/ArtifactReader.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

namespace art = infer::artifact;

namespace {

/// A header for `payload` (manifest at 128, weights from 4096) with `flags`
/// and `hash`, then the payload, written to `path`.
void writeFile(const std::string &path, const std::vector<unsigned char> &payload, uint32_t flags,
               uint64_t hash) {
  art::Header header;
  header.flags = flags;
  header.fileSize = art::kHeaderSize + payload.size();
  header.manifestOffset = art::kHeaderSize;
  header.manifestSize = 16;
  header.weightsOffset = 4096;
  header.weightsSize = header.fileSize - 4096;
  header.payloadHash = hash;
  unsigned char bytes[art::kHeaderSize];
  art::encodeHeader(header, bytes);
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char *>(bytes), sizeof(bytes));
  out.write(reinterpret_cast<const char *>(payload.data()), std::streamsize(payload.size()));
}

/// XXH64 over the little-endian XXH64 of each kPayloadHashChunk bytes.
uint64_t chunkedByHand(const std::vector<unsigned char> &payload) {
  std::vector<unsigned char> digests;
  for (size_t offset = 0; offset < payload.size(); offset += art::kPayloadHashChunk) {
    size_t size = std::min<size_t>(art::kPayloadHashChunk, payload.size() - offset);
    uint64_t digest = XXH64(payload.data() + offset, size, 0);
    for (int i = 0; i < 8; ++i)
      digests.push_back(static_cast<unsigned char>(digest >> (8 * i)));
  }
  return XXH64(digests.data(), digests.size(), 0);
}

std::string openError(const std::string &path) {
  auto reader = art::ArtifactReader::open(path);
  return reader.ok() ? "" : std::string(reader.status().message());
}

TEST(PayloadChecksum, ChunksVerifiedInParallelMatchTheDigestOfTheirDigests) {
  std::vector<unsigned char> payload(size_t(art::kPayloadHashChunk) * 5 / 2 + 7);
  std::mt19937_64 random(7);
  for (size_t i = 0; i < payload.size(); i += 8) {
    uint64_t value = random();
    std::memcpy(payload.data() + i, &value, std::min<size_t>(8, payload.size() - i));
  }
  const std::string path =
      ::testing::TempDir() + "/infer-payload-" + std::to_string(::getpid()) + ".infer";
  const uint64_t chunked = chunkedByHand(payload);
  EXPECT_EQ(art::payloadHash(payload.data(), payload.size(), art::kFlagChunkedPayloadHash),
            chunked);

  writeFile(path, payload, art::kFlagChunkedPayloadHash, chunked);
  std::string error = openError(path);
  EXPECT_EQ(error.find("checksum mismatch"), std::string::npos) << error;
  EXPECT_NE(error.find("is not a valid protobuf Manifest"), std::string::npos) << error;

  payload[payload.size() - 3] ^= 0x40; // in the third chunk
  writeFile(path, payload, art::kFlagChunkedPayloadHash, chunked);
  EXPECT_NE(openError(path).find("checksum mismatch"), std::string::npos);

  payload[payload.size() - 3] ^= 0x40;
  writeFile(path, payload, 0, XXH64(payload.data(), payload.size(), 0));
  error = openError(path);
  EXPECT_EQ(error.find("checksum mismatch"), std::string::npos) << error;
  writeFile(path, payload, 0, chunked); // the chunked digest is not the whole stream's
  EXPECT_NE(openError(path).find("checksum mismatch"), std::string::npos);
  std::remove(path.c_str());
}

} // namespace
