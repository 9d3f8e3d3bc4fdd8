//===- ArtifactWriter.cpp - writes model.infer from the optimized graph ---===//

#include "compiler/artifact/ArtifactWriter.h"

#include "compiler/interpreter/LowPrecision.h"
#include "dialects/graph/IR/GraphOps.h"
#include "runtime/artifact/ArtifactFormat.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Path.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/stubs/common.h>
#include <xxhash.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace mlir;
namespace art = infer::artifact;

namespace infer::compiler {
namespace {

std::optional<art::ElementType> elementTypeOf(Type type) {
  if (type.isF32())
    return art::ELEMENT_TYPE_F32;
  if (type.isF16())
    return art::ELEMENT_TYPE_F16;
  if (type.isBF16())
    return art::ELEMENT_TYPE_BF16;
  if (type.isF64())
    return art::ELEMENT_TYPE_F64;
  if (auto integer = dyn_cast<IntegerType>(type)) {
    switch (integer.getWidth()) {
    case 1:
      return art::ELEMENT_TYPE_BOOL;
    case 8:
      return integer.isUnsigned() ? art::ELEMENT_TYPE_U8 : art::ELEMENT_TYPE_I8;
    case 16:
      return art::ELEMENT_TYPE_I16;
    case 32:
      return art::ELEMENT_TYPE_I32;
    case 64:
      return art::ELEMENT_TYPE_I64;
    default:
      break;
    }
  }
  return std::nullopt;
}

bool isConvertibleFloat(art::ElementType type) {
  return type == art::ELEMENT_TYPE_F32 || type == art::ELEMENT_TYPE_F16 ||
         type == art::ELEMENT_TYPE_BF16;
}

std::optional<art::ElementType> dtypeElementType(llvm::StringRef dtype) {
  if (dtype == "fp32")
    return art::ELEMENT_TYPE_F32;
  if (dtype == "bf16")
    return art::ELEMENT_TYPE_BF16;
  if (dtype == "fp16")
    return art::ELEMENT_TYPE_F16;
  return std::nullopt;
}

std::string weightKey(graph::WeightOp op) { return op.getValue().getHandle().getKey().str(); }

/// Fills `spec` from a function argument or result's type and graph.* attrs.
LogicalResult fillTensorSpec(Location loc, Type type, DictionaryAttr attrs, llvm::StringRef fallback,
                             art::TensorSpec &spec) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked)
    return emitError(loc) << "entry '" << fallback << "' must be a ranked tensor, got " << type;
  auto name = attrs ? attrs.getAs<StringAttr>("graph.name") : StringAttr();
  spec.set_name(name ? name.str() : fallback.str());
  std::optional<art::ElementType> elementType = elementTypeOf(ranked.getElementType());
  spec.set_element_type(elementType.value_or(art::ELEMENT_TYPE_UNSPECIFIED));
  auto dims = attrs ? attrs.getAs<ArrayAttr>("graph.dims") : ArrayAttr();
  for (int64_t d = 0; d < ranked.getRank(); ++d) {
    art::Dim *dim = spec.add_dims();
    StringAttr symbol;
    if (dims && d < static_cast<int64_t>(dims.size()))
      symbol = dyn_cast<StringAttr>(dims[d]);
    if (!ranked.isDynamicDim(d))
      dim->set_size(ranked.getDimSize(d));
    else
      dim->set_symbol(symbol && !symbol.getValue().empty() ? symbol.str() : "?");
  }
  return success();
}

/// Buffers writes to a file descriptor and hashes everything it writes.
class HashingWriter {
public:
  explicit HashingWriter(int fd) : fd(fd), state(XXH64_createState()) {
    XXH64_reset(state, 0);
    buffer.reserve(kBufferSize);
  }
  ~HashingWriter() { XXH64_freeState(state); }

  bool write(const void *data, size_t size) {
    XXH64_update(state, data, size);
    written += size;
    const char *bytes = static_cast<const char *>(data);
    while (size > 0) {
      size_t room = kBufferSize - buffer.size();
      size_t chunk = std::min(room, size);
      buffer.insert(buffer.end(), bytes, bytes + chunk);
      bytes += chunk;
      size -= chunk;
      if (buffer.size() == kBufferSize && !flush())
        return false;
    }
    return true;
  }
  bool padTo(uint64_t offset) {
    static const char zeros[4096] = {};
    while (position() < offset)
      if (!write(zeros, std::min<uint64_t>(sizeof(zeros), offset - position())))
        return false;
    return true;
  }
  bool flush() {
    const char *bytes = buffer.data();
    size_t left = buffer.size();
    while (left > 0) {
      ssize_t n = ::write(fd, bytes, left);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return false;
      bytes += n;
      left -= static_cast<size_t>(n);
    }
    buffer.clear();
    return true;
  }
  /// The file offset of the next byte (the header precedes the hashed bytes).
  uint64_t position() const { return art::kHeaderSize + written; }
  uint64_t digest() const { return XXH64_digest(state); }

private:
  static constexpr size_t kBufferSize = 1 << 20;
  int fd;
  XXH64_state_t *state;
  std::vector<char> buffer;
  uint64_t written = 0;
};

/// Writes `count` elements of `from` at `src` as `to`, converting floats
/// through f32 with round-to-nearest-even in bounded chunks.
bool writeConverted(HashingWriter &out, const char *src, uint64_t count, art::ElementType from,
                    art::ElementType to) {
  if (from == to)
    return out.write(src, count * art::elementSize(from));
  constexpr uint64_t kChunk = 1 << 16;
  std::vector<char> converted(kChunk * art::elementSize(to));
  for (uint64_t start = 0; start < count; start += kChunk) {
    uint64_t n = std::min(kChunk, count - start);
    for (uint64_t i = 0; i < n; ++i) {
      float value = 0;
      const char *in = src + (start + i) * art::elementSize(from);
      if (from == art::ELEMENT_TYPE_F32) {
        std::memcpy(&value, in, 4);
      } else {
        uint16_t bits;
        std::memcpy(&bits, in, 2);
        value = from == art::ELEMENT_TYPE_BF16 ? interp::floatFromBF16(bits)
                                               : interp::floatFromF16(bits);
      }
      char *outBytes = converted.data() + i * art::elementSize(to);
      if (to == art::ELEMENT_TYPE_F32) {
        std::memcpy(outBytes, &value, 4);
      } else {
        uint16_t bits = to == art::ELEMENT_TYPE_BF16 ? interp::bf16FromFloat(value)
                                                     : interp::f16FromFloat(value);
        std::memcpy(outBytes, &bits, 2);
      }
    }
    if (!out.write(converted.data(), n * art::elementSize(to)))
      return false;
  }
  return true;
}

/// Streams one planned weight: a copy of its source, or the concatenation of
/// its sources along the pack axis, row block by row block:
///
///   result[o, :, i] = concat_s source_s[o, :, i]   (o: dims before the axis,
///                                                   i: dims after it)
bool writeWeight(HashingWriter &out, const PlannedWeight &weight) {
  art::ElementType to = weight.entry.element_type();
  art::ElementType from =
      weight.entry.source_element_type() != art::ELEMENT_TYPE_UNSPECIFIED
          ? weight.entry.source_element_type()
          : to;
  uint64_t elementBytes = art::elementSize(from);
  if (weight.sources.size() == 1) {
    ArrayRef<char> data = cast<graph::WeightOp>(weight.sources[0]).getValue().getData();
    return writeConverted(out, data.data(), data.size() / elementBytes, from, to);
  }
  auto shape = weight.entry.shape();
  uint64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < weight.packAxis; ++d)
    outer *= static_cast<uint64_t>(shape[d]);
  for (int64_t d = weight.packAxis + 1; d < static_cast<int64_t>(shape.size()); ++d)
    inner *= static_cast<uint64_t>(shape[d]);
  for (uint64_t o = 0; o < outer; ++o) {
    for (Operation *source : weight.sources) {
      auto op = cast<graph::WeightOp>(source);
      uint64_t rows =
          static_cast<uint64_t>(cast<RankedTensorType>(op.getType()).getDimSize(weight.packAxis));
      uint64_t count = rows * inner;
      const char *data = op.getValue().getData().data() + o * count * elementBytes;
      if (!writeConverted(out, data, count, from, to))
        return false;
    }
  }
  return true;
}

/// Fills a manifest weight entry's type, shape and size from `type`.
LogicalResult describe(Operation *op, RankedTensorType type, const ArtifactOptions &options,
                       art::Weight &entry) {
  std::optional<art::ElementType> elementType = elementTypeOf(type.getElementType());
  if (!elementType)
    return op->emitError() << "the artifact cannot store weights of element type "
                           << type.getElementType();
  art::ElementType stored = *elementType;
  if (std::optional<art::ElementType> target = dtypeElementType(options.dtype);
      target && isConvertibleFloat(stored) && *target != stored) {
    entry.set_source_element_type(stored);
    stored = *target;
  }
  entry.set_element_type(stored);
  uint64_t elements = 1;
  for (int64_t dim : type.getShape()) {
    if (dim < 0)
      return op->emitError() << "weight of dynamic shape " << type;
    entry.add_shape(dim);
    elements *= static_cast<uint64_t>(dim);
  }
  entry.set_size(elements * art::elementSize(stored));
  return success();
}

/// Checks that a graph.weight's data matches its type.
LogicalResult checkData(graph::WeightOp op) {
  auto type = cast<RankedTensorType>(op.getType());
  std::optional<art::ElementType> elementType = elementTypeOf(type.getElementType());
  if (!elementType)
    return op->emitError() << "the artifact cannot store weights of element type "
                           << type.getElementType();
  uint64_t expected = static_cast<uint64_t>(type.getNumElements()) * art::elementSize(*elementType);
  uint64_t actual = op.getValue().getData().size();
  if (actual != expected)
    return op->emitError() << "weight '" << weightKey(op) << "' has " << actual
                           << " bytes of data, its type " << type << " needs " << expected;
  return success();
}

/// Removes a temporary file unless released (no partial artifact on error).
struct TempFile {
  std::string path;
  int fd = -1;
  bool keep = false;
  ~TempFile() {
    if (fd >= 0)
      ::close(fd);
    if (!keep && !path.empty())
      ::unlink(path.c_str());
  }
};

} // namespace

FailureOr<func::FuncOp> findEntryFunction(ModuleOp module) {
  func::FuncOp entry;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isPrivate() || func.isExternal())
      continue;
    if (entry) {
      emitError(func.getLoc()) << "the artifact holds one entry function; found '"
                               << entry.getSymName() << "' and '" << func.getSymName() << "'";
      return failure();
    }
    entry = func;
  }
  if (!entry) {
    emitError(module.getLoc()) << "the module has no public function to compile";
    return failure();
  }
  return entry;
}

FailureOr<WeightPlan> planWeights(func::FuncOp entry, const ArtifactOptions &options) {
  if (!options.dtype.empty() && !dtypeElementType(options.dtype)) {
    emitError(entry.getLoc()) << "unknown dtype '" << options.dtype << "' (expected fp32|bf16|fp16)";
    return failure();
  }
  WeightPlan plan;
  llvm::StringMap<size_t> byName;
  auto add = [&](PlannedWeight weight, Value result) -> LogicalResult {
    auto [it, inserted] = byName.try_emplace(weight.entry.name(), plan.weights.size());
    if (!inserted) {
      const PlannedWeight &existing = plan.weights[it->second];
      if (existing.packAxis != weight.packAxis ||
          existing.entry.size() != weight.entry.size())
        return weight.op->emitError()
               << "two different weights would be stored as '" << weight.entry.name() << "'";
      plan.indexOf[result] = it->second;
      return success();
    }
    plan.indexOf[result] = plan.weights.size();
    plan.weights.push_back(std::move(weight));
    return success();
  };

  WalkResult walked = entry.walk([&](Operation *op) -> WalkResult {
    if (auto weightOp = dyn_cast<graph::WeightOp>(op)) {
      if (failed(checkData(weightOp)))
        return WalkResult::interrupt();
      // A weight only packs feed is stored inside the packs, not on its own.
      bool standalone = llvm::any_of(weightOp->getUsers(), [](Operation *user) {
        return !isa<graph::PackWeightsOp>(user);
      });
      if (!standalone)
        return WalkResult::advance();
      PlannedWeight weight;
      weight.op = op;
      weight.sources.push_back(op);
      weight.entry.set_name(weightKey(weightOp));
      if (failed(describe(op, cast<RankedTensorType>(weightOp.getType()), options, weight.entry)) ||
          failed(add(std::move(weight), weightOp.getResult())))
        return WalkResult::interrupt();
      return WalkResult::advance();
    }
    if (auto pack = dyn_cast<graph::PackWeightsOp>(op)) {
      PlannedWeight weight;
      weight.op = op;
      weight.packAxis = pack.getAxis();
      std::string name;
      for (auto [i, operand] : llvm::enumerate(pack.getWeights())) {
        auto source = operand.getDefiningOp<graph::WeightOp>();
        if (!source) {
          op->emitError() << "operand #" << i
                          << " is not a graph.weight; the artifact writer packs only weights";
          return WalkResult::interrupt();
        }
        if (failed(checkData(source)))
          return WalkResult::interrupt();
        weight.sources.push_back(source);
        std::string key = weightKey(source);
        weight.entry.add_packed_from(key);
        name += (i ? "+" : "") + key;
      }
      weight.entry.set_name(name);
      weight.entry.set_pack_axis(weight.packAxis);
      if (failed(describe(op, cast<RankedTensorType>(pack.getType()), options, weight.entry)) ||
          failed(add(std::move(weight), pack.getResult())))
        return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (walked.wasInterrupted())
    return failure();

  uint64_t offset = 0;
  for (PlannedWeight &weight : plan.weights) {
    weight.entry.set_offset(offset);
    plan.weightBytes += weight.entry.size();
    offset = art::alignUp(offset + weight.entry.size(), art::kWeightAlignment);
  }
  plan.sectionSize = offset;
  return plan;
}

FailureOr<ArtifactSummary> writeArtifact(ModuleOp module, llvm::StringRef path,
                                         const ArtifactOptions &options) {
  FailureOr<func::FuncOp> entry = findEntryFunction(module);
  if (failed(entry))
    return failure();
  FailureOr<WeightPlan> plan = planWeights(*entry, options);
  if (failed(plan))
    return failure();

  art::Manifest manifest;
  art::ModelInfo *model = manifest.mutable_model();
  model->set_name(options.modelName);
  model->set_opset(options.opset);
  model->set_entry(entry->getSymName().str());
  FunctionType type = entry->getFunctionType();
  for (unsigned i = 0; i < type.getNumInputs(); ++i)
    if (failed(fillTensorSpec(entry->getLoc(), type.getInput(i), entry->getArgAttrDict(i),
                              "input" + std::to_string(i), *model->add_inputs())))
      return failure();
  for (unsigned i = 0; i < type.getNumResults(); ++i)
    if (failed(fillTensorSpec(entry->getLoc(), type.getResult(i), entry->getResultAttrDict(i),
                              "output" + std::to_string(i), *model->add_outputs())))
      return failure();
  art::CompileOptions *compileOptions = manifest.mutable_options();
  compileOptions->set_target(options.target);
  compileOptions->set_dtype(options.dtype);
  compileOptions->set_max_batch_tokens(options.maxBatchTokens);
  compileOptions->set_max_seq_len(options.maxSeqLen);
  compileOptions->set_kv_block_size(options.kvBlockSize);
  auto addTool = [&](const char *name, std::string version) {
    art::ToolVersion *tool = manifest.add_tools();
    tool->set_name(name);
    tool->set_version(std::move(version));
  };
  addTool("infer-compile", INFER_VERSION);
  addTool("llvm", LLVM_VERSION_STRING);
  addTool("protobuf", google::protobuf::internal::VersionString(GOOGLE_PROTOBUF_VERSION));
  for (const PlannedWeight &weight : plan->weights)
    *manifest.add_weights() = weight.entry;
  manifest.set_weight_section_size(plan->sectionSize);
  manifest.set_weight_alignment(art::kWeightAlignment);

  // Deterministic serialization: fields in number order, no map ordering
  // left to the hash seed.
  std::string manifestBytes;
  {
    google::protobuf::io::StringOutputStream stream(&manifestBytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    if (!manifest.SerializeToCodedStream(&coded)) {
      emitError(module.getLoc()) << "cannot serialize the artifact manifest";
      return failure();
    }
  }

  art::Header header;
  header.manifestOffset = art::kHeaderSize;
  header.manifestSize = manifestBytes.size();
  header.weightsOffset = art::alignUp(art::kHeaderSize + manifestBytes.size(), art::kWeightAlignment);
  header.weightsSize = plan->sectionSize;
  header.fileSize = header.weightsOffset + header.weightsSize;

  auto ioError = [&](const char *what) {
    emitError(module.getLoc()) << "cannot " << what << " '" << path << "': " << std::strerror(errno);
    return failure();
  };
  TempFile temp;
  temp.path = (path + ".tmpXXXXXX").str();
  temp.fd = ::mkstemp(temp.path.data());
  if (temp.fd < 0) {
    temp.path.clear();
    return ioError("create a temporary file for");
  }
  // mkstemp creates 0600; an artifact is readable like any other output.
  mode_t mask = ::umask(0);
  ::umask(mask);
  if (::fchmod(temp.fd, 0666 & ~mask) != 0)
    return ioError("set the permissions of");

  unsigned char headerBytes[art::kHeaderSize] = {};
  if (::write(temp.fd, headerBytes, sizeof(headerBytes)) != static_cast<ssize_t>(sizeof(headerBytes)))
    return ioError("write");
  {
    HashingWriter out(temp.fd);
    bool ok = out.write(manifestBytes.data(), manifestBytes.size()) &&
              out.padTo(header.weightsOffset);
    for (const PlannedWeight &weight : plan->weights) {
      if (!ok)
        break;
      ok = out.padTo(header.weightsOffset + weight.entry.offset()) && writeWeight(out, weight);
    }
    ok = ok && out.padTo(header.fileSize) && out.flush();
    if (!ok)
      return ioError("write");
    header.payloadHash = out.digest();
  }
  art::encodeHeader(header, headerBytes);
  if (::pwrite(temp.fd, headerBytes, sizeof(headerBytes), 0) !=
      static_cast<ssize_t>(sizeof(headerBytes)))
    return ioError("write");
  int fd = temp.fd;
  temp.fd = -1;
  if (::close(fd) != 0)
    return ioError("close");
  if (::rename(temp.path.c_str(), path.str().c_str()) != 0)
    return ioError("rename the temporary file to");
  temp.keep = true;

  ArtifactSummary summary;
  summary.numWeights = plan->weights.size();
  summary.weightBytes = plan->weightBytes;
  summary.fileSize = header.fileSize;
  return summary;
}

} // namespace infer::compiler
