//===- ArtifactFormat.h - the fixed header of model.infer -------*- C++ -*-===//
//
// The byte layout shared by the compiler's writer and the runtime's reader
// (docs/artifact-format.md):
//
//   0      ┌──────────────────────────────┐
//          │ header (128 bytes)           │ magic, version, offsets, checksums
//   128    ├──────────────────────────────┤
//          │ manifest (protobuf)          │ artifact.proto's Manifest
//          ├─ zero padding to 4 KiB ──────┤
//   W      │ weight section               │ each weight 4 KiB aligned,
//          │  weight 0 │pad│ weight 1 │pad│ zero padded to the next 4 KiB
//   EOF    └──────────────────────────────┘
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_ARTIFACT_ARTIFACTFORMAT_H
#define INFER_RUNTIME_ARTIFACT_ARTIFACTFORMAT_H

#include "runtime/artifact/artifact.pb.h"
#include "runtime/base/Status.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace infer::artifact {

inline constexpr char kMagic[8] = {'I', 'N', 'F', 'E', 'R', 'A', 'R', 'T'};
/// Bumped on any change a reader of the previous version cannot read
/// (2: operand roles as `OperandRole` numbers instead of names).
inline constexpr uint32_t kFormatVersion = 2;
inline constexpr uint64_t kHeaderSize = 128;
/// Alignment of the weight section and of every weight in it: a page, so the
/// section can be mmap'd and handed to large device copies as is.
inline constexpr uint64_t kWeightAlignment = 4096;

/// Header flag: payload_xxh64 is XXH64 (seed 0) of the little-endian XXH64
/// digests (seed 0) of the payload's kPayloadHashChunk-byte chunks in order,
/// the last one shorter, so that a reader verifies the chunks in parallel (a
/// 16 GB artifact took ~3 s to hash as one stream). Without it (artifacts
/// written before session 63) payload_xxh64 is XXH64 of the payload whole.
inline constexpr uint32_t kFlagChunkedPayloadHash = 1;
inline constexpr uint64_t kPayloadHashChunk = uint64_t(64) << 20;

/// The decoded header. On disk every field is little-endian at a fixed
/// offset:
///
///   0 magic[8] │ 8 version u32 │ 12 flags u32 │ 16 header_size │ 24 file_size
///   32 manifest_offset │ 40 manifest_size │ 48 weights_offset │ 56 weights_size
///   64 payload_xxh64 │ 72..119 reserved (zero) │ 120 header_xxh64
///
/// payload_xxh64 covers bytes [header_size, file_size) (payloadHash);
/// header_xxh64 is XXH64 (seed 0) of bytes [0, 120).
struct Header {
  uint32_t version = kFormatVersion;
  uint32_t flags = kFlagChunkedPayloadHash; ///< a reader refuses flags it does not know
  uint64_t headerSize = kHeaderSize;
  uint64_t fileSize = 0;
  uint64_t manifestOffset = 0;
  uint64_t manifestSize = 0;
  uint64_t weightsOffset = 0;
  uint64_t weightsSize = 0;
  uint64_t payloadHash = 0;
};

/// Writes `header` into `out` (kHeaderSize bytes), header checksum included.
void encodeHeader(const Header &header, unsigned char out[kHeaderSize]);

/// Decodes and checks the header of a file of `fileSize` bytes whose first
/// min(fileSize, kHeaderSize) bytes are `bytes`: magic, version, header
/// checksum, flags, and that every section lies inside the file. Does not
/// check the payload checksum.
StatusOr<Header> decodeHeader(const unsigned char *bytes, uint64_t fileSize);

/// XXH64 (seed 0) of `size` bytes.
uint64_t hash64(const void *data, size_t size);

/// payload_xxh64 of a payload of `size` bytes under the header's `flags`.
uint64_t payloadHash(const unsigned char *payload, uint64_t size, uint32_t flags);

/// payload_xxh64 from the digests of the payload's chunks, in order
/// (kFlagChunkedPayloadHash).
uint64_t combineChunkDigests(const std::vector<uint64_t> &digests);

/// `value` rounded up to a multiple of `alignment` (a power of two).
constexpr uint64_t alignUp(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) & ~(alignment - 1);
}

/// Bytes per element, 0 for ELEMENT_TYPE_UNSPECIFIED or unknown values.
uint64_t elementSize(ElementType type);
/// "f32", "bf16", "i64", ...; "?" for unknown values.
const char *elementTypeName(ElementType type);

/// The launch's attribute `name`, or nullptr.
const Attribute *findAttribute(const Launch &launch, const std::string &name);
/// The launch's integer attribute `name`, or `fallback` when it has none.
int64_t intAttribute(const Launch &launch, const std::string &name, int64_t fallback);
/// The buffer of the launch's first operand with `role` that names a
/// buffer, or none.
std::optional<uint32_t> operandBuffer(const Launch &launch, OperandRole role);
/// The exec op a launch kind stands for, by mnemonic ("kv_attention" for
/// KV_ATTENTION), "?" for values this build does not know.
std::string launchKindName(Launch::Kind kind);
/// The kind of a launch of the exec op with `mnemonic`, or none.
std::optional<Launch::Kind> launchKindNamed(const std::string &mnemonic);
/// The exec op's operand name a role stands for ("weight" for ROLE_WEIGHT),
/// "?" for values this build does not know.
std::string operandRoleName(OperandRole role);
/// The role of the exec op's operand `name`, or none.
std::optional<OperandRole> operandRoleNamed(const std::string &name);
/// Whether the launch has boolean attribute `name` set to true.
bool boolAttribute(const Launch &launch, const std::string &name);
/// The element type of what `ref` names (a buffer, weight or constant), or
/// ELEMENT_TYPE_UNSPECIFIED when the index is out of range.
ElementType refElementType(const Manifest &manifest, const Ref &ref);
/// The same for a ref of `program` (Manifest.exec or Manifest.step).
ElementType refElementType(const Manifest &manifest, const ExecProgram &program, const Ref &ref);

/// The cuda backend's quantization scratch for a QUANTIZED_GEMM with a
/// CudaLaunch.dequantize (docs/quantization.md): the [n, k] weight in the
/// output's type first, padded to 256 bytes, then (fp8) the rounded inputs.
/// CudaLaunch.fp8_gemm: the E4M3 inputs and their scales (QuantizedFp8Gemm.h).
int64_t quantizationScratchInputsOffset(int64_t n, int64_t k, int64_t elementBytes);
/// The scratch's bytes for `program` (its `launches`, parallel to the
/// program's) at `boundTokens`: the largest any of its launches needs, 0
/// without one.
int64_t quantizationScratchBytes(const ExecProgram &program,
                                 const google::protobuf::RepeatedPtrField<CudaLaunch> &launches,
                                 int64_t boundTokens);

} // namespace infer::artifact

#endif // INFER_RUNTIME_ARTIFACT_ARTIFACTFORMAT_H
