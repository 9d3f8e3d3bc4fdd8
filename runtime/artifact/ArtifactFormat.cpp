//===- ArtifactFormat.cpp - the fixed header of model.infer ---------------===//

#include "runtime/artifact/ArtifactFormat.h"
#include "runtime/cuda/abi/QuantizedFp8Gemm.h"

#include <algorithm>
#include <cctype>

#include <xxhash.h>

#include <cstring>
#include <string>
#include <string_view>

namespace infer::artifact {
namespace {

constexpr size_t kReservedOffset = 72;
constexpr size_t kHeaderHashOffset = 120;

void put32(unsigned char *out, uint32_t value) {
  for (int i = 0; i < 4; ++i)
    out[i] = static_cast<unsigned char>(value >> (8 * i));
}
void put64(unsigned char *out, uint64_t value) {
  for (int i = 0; i < 8; ++i)
    out[i] = static_cast<unsigned char>(value >> (8 * i));
}
uint32_t get32(const unsigned char *in) {
  uint32_t value = 0;
  for (int i = 3; i >= 0; --i)
    value = (value << 8) | in[i];
  return value;
}
uint64_t get64(const unsigned char *in) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i)
    value = (value << 8) | in[i];
  return value;
}

std::string num(uint64_t value) { return std::to_string(value); }

/// Checks that [offset, offset + size) lies inside a file of `fileSize` bytes
/// without overflowing.
Status checkRange(const char *what, uint64_t offset, uint64_t size, uint64_t fileSize) {
  if (offset > fileSize || size > fileSize - offset)
    return dataLossError(std::string(what) + " [" + num(offset) + ", +" + num(size) +
                         ") lies outside the file (" + num(fileSize) + " bytes)");
  return okStatus();
}

} // namespace

void encodeHeader(const Header &header, unsigned char out[kHeaderSize]) {
  std::memset(out, 0, kHeaderSize);
  std::memcpy(out, kMagic, sizeof(kMagic));
  put32(out + 8, header.version);
  put32(out + 12, header.flags);
  put64(out + 16, header.headerSize);
  put64(out + 24, header.fileSize);
  put64(out + 32, header.manifestOffset);
  put64(out + 40, header.manifestSize);
  put64(out + 48, header.weightsOffset);
  put64(out + 56, header.weightsSize);
  put64(out + 64, header.payloadHash);
  put64(out + kHeaderHashOffset, hash64(out, kHeaderHashOffset));
}

StatusOr<Header> decodeHeader(const unsigned char *bytes, uint64_t fileSize) {
  if (fileSize == 0)
    return dataLossError("truncated: the file is empty");
  size_t magicBytes = fileSize < sizeof(kMagic) ? static_cast<size_t>(fileSize) : sizeof(kMagic);
  if (std::memcmp(bytes, kMagic, magicBytes) != 0)
    return dataLossError("wrong magic: not an infer artifact (it does not start with \"INFERART\")");
  if (fileSize < 12)
    return dataLossError("truncated: " + num(fileSize) + " bytes, the header needs " +
                         num(kHeaderSize));
  Header header;
  header.version = get32(bytes + 8);
  // The version comes before everything else: another version may lay out
  // the rest of the header differently.
  if (header.version != kFormatVersion)
    return failedPreconditionError("artifact format version " + num(header.version) +
                                   " is not supported (this build reads version " +
                                   num(kFormatVersion) + "); recompile the model");
  if (fileSize < kHeaderSize)
    return dataLossError("truncated: " + num(fileSize) + " bytes, the header needs " +
                         num(kHeaderSize));
  if (get64(bytes + kHeaderHashOffset) != hash64(bytes, kHeaderHashOffset))
    return dataLossError("header checksum mismatch: the header is corrupted");
  header.flags = get32(bytes + 12);
  header.headerSize = get64(bytes + 16);
  header.fileSize = get64(bytes + 24);
  header.manifestOffset = get64(bytes + 32);
  header.manifestSize = get64(bytes + 40);
  header.weightsOffset = get64(bytes + 48);
  header.weightsSize = get64(bytes + 56);
  header.payloadHash = get64(bytes + 64);
  // Reserved for later format fields: a reader that finds them set cannot
  // know what they mean.
  for (size_t i = kReservedOffset; i < kHeaderHashOffset; ++i)
    if (bytes[i] != 0)
      return failedPreconditionError("the header's reserved bytes [" + num(kReservedOffset) + ", " +
                                     num(kHeaderHashOffset) + ") are not zero (byte " + num(i) +
                                     " is " + num(bytes[i]) + "): written by a newer format?");
  if ((header.flags & ~kFlagChunkedPayloadHash) != 0)
    return failedPreconditionError("unknown header flags " + num(header.flags) +
                                   " (this build defines flag " + num(kFlagChunkedPayloadHash) +
                                   ", a chunked payload checksum)");
  if (header.headerSize != kHeaderSize)
    return dataLossError("header size " + num(header.headerSize) + ", expected " +
                         num(kHeaderSize));
  if (header.fileSize != fileSize) {
    if (fileSize < header.fileSize)
      return dataLossError("truncated: the file has " + num(fileSize) +
                           " bytes, its header says " + num(header.fileSize));
    return dataLossError("the file has " + num(fileSize) + " bytes, its header says " +
                         num(header.fileSize) + " (trailing bytes)");
  }
  RETURN_IF_ERROR(checkRange("the manifest", header.manifestOffset, header.manifestSize, fileSize));
  RETURN_IF_ERROR(checkRange("the weight section", header.weightsOffset, header.weightsSize, fileSize));
  if (header.manifestOffset < kHeaderSize)
    return dataLossError("the manifest overlaps the header (offset " +
                         num(header.manifestOffset) + ")");
  if (header.weightsOffset % kWeightAlignment != 0)
    return dataLossError("the weight section's offset " + num(header.weightsOffset) +
                         " is not a multiple of " + num(kWeightAlignment));
  if (header.weightsOffset < header.manifestOffset + header.manifestSize)
    return dataLossError("the weight section at " + num(header.weightsOffset) +
                         " overlaps the manifest [" + num(header.manifestOffset) + ", +" +
                         num(header.manifestSize) + ")");
  if (header.weightsOffset + header.weightsSize != fileSize)
    return dataLossError("the weight section [" + num(header.weightsOffset) + ", +" +
                         num(header.weightsSize) + ") does not end where the file does (" +
                         num(fileSize) + " bytes)");
  return header;
}

uint64_t hash64(const void *data, size_t size) { return XXH64(data, size, 0); }

uint64_t combineChunkDigests(const std::vector<uint64_t> &digests) {
  std::vector<unsigned char> bytes(digests.size() * 8);
  for (size_t i = 0; i < digests.size(); ++i)
    put64(bytes.data() + 8 * i, digests[i]);
  return hash64(bytes.data(), bytes.size());
}

uint64_t payloadHash(const unsigned char *payload, uint64_t size, uint32_t flags) {
  if (!(flags & kFlagChunkedPayloadHash))
    return hash64(payload, static_cast<size_t>(size));
  std::vector<uint64_t> digests;
  for (uint64_t offset = 0; offset < size; offset += kPayloadHashChunk)
    digests.push_back(
        hash64(payload + offset, static_cast<size_t>(std::min(kPayloadHashChunk, size - offset))));
  return combineChunkDigests(digests);
}

uint64_t elementSize(ElementType type) {
  switch (type) {
  case ELEMENT_TYPE_F64:
  case ELEMENT_TYPE_I64:
    return 8;
  case ELEMENT_TYPE_F32:
  case ELEMENT_TYPE_I32:
    return 4;
  case ELEMENT_TYPE_F16:
  case ELEMENT_TYPE_BF16:
  case ELEMENT_TYPE_I16:
    return 2;
  case ELEMENT_TYPE_I8:
  case ELEMENT_TYPE_U8:
  case ELEMENT_TYPE_BOOL:
  case ELEMENT_TYPE_F8E4M3:
    return 1;
  default:
    return 0;
  }
}

const char *elementTypeName(ElementType type) {
  switch (type) {
  case ELEMENT_TYPE_F32:
    return "f32";
  case ELEMENT_TYPE_F16:
    return "f16";
  case ELEMENT_TYPE_BF16:
    return "bf16";
  case ELEMENT_TYPE_F64:
    return "f64";
  case ELEMENT_TYPE_I64:
    return "i64";
  case ELEMENT_TYPE_I32:
    return "i32";
  case ELEMENT_TYPE_I16:
    return "i16";
  case ELEMENT_TYPE_I8:
    return "i8";
  case ELEMENT_TYPE_U8:
    return "u8";
  case ELEMENT_TYPE_BOOL:
    return "bool";
  case ELEMENT_TYPE_F8E4M3:
    return "f8e4m3";
  default:
    return "?";
  }
}

const Attribute *findAttribute(const Launch &launch, const std::string &name) {
  for (const Attribute &attribute : launch.attributes())
    if (attribute.name() == name)
      return &attribute;
  return nullptr;
}

int64_t intAttribute(const Launch &launch, const std::string &name, int64_t fallback) {
  const Attribute *attribute = findAttribute(launch, name);
  return attribute && attribute->value_case() == Attribute::kIntValue ? attribute->int_value()
                                                                      : fallback;
}

std::optional<uint32_t> operandBuffer(const Launch &launch, OperandRole role) {
  for (const Operand &operand : launch.operands())
    if (operand.role() == role && operand.ref().target_case() == Ref::kBuffer)
      return operand.ref().buffer();
  return std::nullopt;
}

// Enum value names are the exec names upper-cased (roles behind "ROLE_"):
// the exec dialect's ODS names are the one list, the proto numbers them.
namespace {
constexpr std::string_view kRolePrefix = "ROLE_";

std::string lowered(std::string_view name) {
  std::string out(name);
  for (char &c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

/// "ROLE_" + NAME for a lower-case `name`; empty if it has upper-case letters.
std::string raised(std::string_view prefix, const std::string &name) {
  std::string out(prefix);
  for (char c : name) {
    if (std::isupper(static_cast<unsigned char>(c)))
      return {};
    out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return out;
}
} // namespace

std::string launchKindName(Launch::Kind kind) {
  if (kind == Launch::KIND_UNSPECIFIED || !Launch::Kind_IsValid(kind))
    return "?";
  return lowered(Launch::Kind_Name(kind));
}

std::optional<Launch::Kind> launchKindNamed(const std::string &mnemonic) {
  Launch::Kind kind = Launch::KIND_UNSPECIFIED;
  std::string name = raised("", mnemonic);
  if (name.empty() || !Launch::Kind_Parse(name, &kind) || kind == Launch::KIND_UNSPECIFIED)
    return std::nullopt;
  return kind;
}

std::string operandRoleName(OperandRole role) {
  if (role == ROLE_UNSPECIFIED || !OperandRole_IsValid(role))
    return "?";
  return lowered(std::string_view(OperandRole_Name(role)).substr(kRolePrefix.size()));
}

std::optional<OperandRole> operandRoleNamed(const std::string &name) {
  OperandRole role = ROLE_UNSPECIFIED;
  std::string upper = raised(kRolePrefix, name);
  if (upper.size() <= kRolePrefix.size() || !OperandRole_Parse(upper, &role) ||
      role == ROLE_UNSPECIFIED)
    return std::nullopt;
  return role;
}

bool boolAttribute(const Launch &launch, const std::string &name) {
  const Attribute *attribute = findAttribute(launch, name);
  return attribute && attribute->value_case() == Attribute::kBoolValue && attribute->bool_value();
}

int64_t quantizationScratchInputsOffset(int64_t n, int64_t k, int64_t elementBytes) {
  return (n * k * elementBytes + 255) / 256 * 256;
}

int64_t quantizationScratchBytes(const ExecProgram &program,
                                 const google::protobuf::RepeatedPtrField<CudaLaunch> &launches,
                                 int64_t boundTokens) {
  int64_t bytes = 0;
  for (int i = 0; i < program.launches_size() && i < launches.size(); ++i) {
    const Launch &launch = program.launches(i);
    const int64_t n = intAttribute(launch, "n", 0), k = intAttribute(launch, "k", 0);
    if (launches.Get(i).has_fp8_gemm())
      bytes = std::max(bytes, int64_t(kernels::quantizedFp8ScratchBytes(boundTokens, k)));
    if (!launches.Get(i).has_dequantize() || launch.outputs_size() != 1 ||
        launch.outputs(0) >= uint32_t(program.buffers_size()))
      continue;
    const int64_t element =
        int64_t(elementSize(program.buffers(int(launch.outputs(0))).element_type()));
    const int64_t inputs = launches.Get(i).dequantize().has_prologue() ? boundTokens * k : 0;
    bytes = std::max(bytes, quantizationScratchInputsOffset(n, k, element) + inputs * element);
  }
  return bytes;
}

ElementType refElementType(const Manifest &manifest, const Ref &ref) {
  return refElementType(manifest, manifest.exec(), ref);
}

ElementType refElementType(const Manifest &manifest, const ExecProgram &program, const Ref &ref) {
  switch (ref.target_case()) {
  case Ref::kBuffer:
    return ref.buffer() < uint32_t(program.buffers_size())
               ? program.buffers(int(ref.buffer())).element_type()
               : ELEMENT_TYPE_UNSPECIFIED;
  case Ref::kWeight:
    return ref.weight() < uint32_t(manifest.weights_size())
               ? manifest.weights(int(ref.weight())).element_type()
               : ELEMENT_TYPE_UNSPECIFIED;
  case Ref::kConstant:
    return ref.constant() < uint32_t(program.constants_size())
               ? program.constants(int(ref.constant())).element_type()
               : ELEMENT_TYPE_UNSPECIFIED;
  default:
    return ELEMENT_TYPE_UNSPECIFIED;
  }
}

} // namespace infer::artifact
