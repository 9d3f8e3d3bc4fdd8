//===- ArtifactWriter.cpp - writes model.infer from the optimized graph ---===//

#include "compiler/artifact/ArtifactWriter.h"

#include "compiler/artifact/OutputFile.h"
#include "compiler/artifact/QuantizedWeights.h"
#include "compiler/artifact/TransposeTiled.h"

#include "dialects/graph/IR/GraphOps.h"
#include "dialects/graph/Interpreter/LowPrecision.h"
#include "runtime/artifact/ArtifactFormat.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/Parallel.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/stubs/common.h>
#include <xxhash.h>

#include <cerrno>
#include <cstring>
#include <memory>
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

/// Buffers writes to a file descriptor and hashes everything it writes, in
/// chunks of art::kPayloadHashChunk (the header's kFlagChunkedPayloadHash).
class HashingWriter {
public:
  explicit HashingWriter(int fd) : fd(fd), state(XXH64_createState()) {
    XXH64_reset(state, 0);
    buffer.reserve(kBufferSize);
  }
  ~HashingWriter() { XXH64_freeState(state); }

  bool write(const void *data, size_t size) {
    hash(static_cast<const unsigned char *>(data), size);
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
  uint64_t position() const { return art::kHeaderSize + hashed; }
  /// The payload checksum of everything written (ends the last chunk).
  uint64_t digest() {
    if (hashed % art::kPayloadHashChunk != 0)
      digests.push_back(XXH64_digest(state));
    return art::combineChunkDigests(digests);
  }

private:
  void hash(const unsigned char *data, size_t size) {
    while (size > 0) {
      uint64_t room = art::kPayloadHashChunk - hashed % art::kPayloadHashChunk;
      size_t take = static_cast<size_t>(std::min<uint64_t>(room, size));
      XXH64_update(state, data, take);
      hashed += take, data += take, size -= take;
      if (hashed % art::kPayloadHashChunk == 0) {
        digests.push_back(XXH64_digest(state));
        XXH64_reset(state, 0);
      }
    }
  }

  static constexpr size_t kBufferSize = 1 << 20;
  int fd;
  XXH64_state_t *state;
  std::vector<uint64_t> digests; ///< of the whole chunks hashed so far
  uint64_t hashed = 0;           ///< bytes written (and hashed) after the header
  std::vector<char> buffer;
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

/// Streams one untransposed planned weight: a copy of its source, or the
/// concatenation of its sources along the pack axis, row block by row block:
///
///   result[o, :, i] = concat_s source_s[o, :, i]   (o: dims before the axis,
///                                                   i: dims after it)
bool streamWeight(HashingWriter &out, const PlannedWeight &weight) {
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

/// Calls `fn` with the codec of a convertible float type.
template <typename Fn>
void withCodec(art::ElementType type, Fn fn) {
  if (type == art::ELEMENT_TYPE_F32)
    fn(F32Codec());
  else if (type == art::ELEMENT_TYPE_BF16)
    fn(BF16Codec());
  else
    fn(F16Codec());
}

/// Writes the transpose of the rows x cols elements of `from` at `in`,
/// converted to `to`, at `out`, whose rows are `outStride` elements apart.
void transposeInto(const char *in, uint64_t rows, uint64_t cols, art::ElementType from,
                   art::ElementType to, char *out, uint64_t outStride) {
  if (from == to) {
    auto copy = [&](auto bits) {
      using Bits = decltype(bits);
      transposeTiled<Bits, Bits>(in, rows, cols, out, outStride, [](Bits b) { return b; });
    };
    switch (art::elementSize(from)) {
    case 1:
      return copy(uint8_t());
    case 2:
      return copy(uint16_t());
    case 4:
      return copy(uint32_t());
    case 8:
      return copy(uint64_t());
    default:
      llvm_unreachable("artifact element types are 1, 2, 4 or 8 bytes");
    }
  }
  // Only f32, bf16 and f16 are converted (describe()).
  withCodec(from, [&](auto source) {
    withCodec(to, [&](auto target) {
      using Source = decltype(source);
      using Target = decltype(target);
      transposeTiled<typename Source::Bits, typename Target::Bits>(
          in, rows, cols, out, outStride,
          [](typename Source::Bits bits) { return Target::encode(Source::decode(bits)); });
    });
  });
}

/// A buffer reused from weight to weight, so that transposing each one does
/// not fault in fresh pages; it grows to the largest transposed weight.
class ScratchBuffer {
public:
  char *get(uint64_t size) {
    if (size > capacity) {
      data.reset(); // before allocating: never two buffers at once
      data.reset(new char[size]);
      capacity = size;
    }
    return data.get();
  }

private:
  std::unique_ptr<char[]> data;
  uint64_t capacity = 0;
};

/// Writes one transposed planned weight (stored [n, k], the transpose of the
/// concatenation [k, n]): assembled in `scratch`, each source transposed (and
/// converted) straight into its place, then written:
///
///   axis 1, sources [k, n_s]:  [ A | B ]^T = [ A^T ]    (bands of rows)
///                                            [ B^T ]
///   axis 0, sources [k_s, n]:  [ A ]^T = [ A^T | B^T ]  (bands of columns)
///                              [ B ]
bool writeTransposed(HashingWriter &out, const PlannedWeight &weight, ScratchBuffer &scratch) {
  art::ElementType to = weight.entry.element_type();
  art::ElementType from =
      weight.entry.source_element_type() != art::ELEMENT_TYPE_UNSPECIFIED
          ? weight.entry.source_element_type()
          : to;
  uint64_t k = static_cast<uint64_t>(weight.entry.shape(1));
  uint64_t toBytes = art::elementSize(to);
  char *result = scratch.get(weight.entry.size());
  uint64_t offset = 0;
  for (Operation *source : weight.sources) {
    auto op = cast<graph::WeightOp>(source);
    auto type = cast<RankedTensorType>(op.getType());
    uint64_t rows = static_cast<uint64_t>(type.getDimSize(0));
    uint64_t cols = static_cast<uint64_t>(type.getDimSize(1));
    char *place = weight.packAxis == 1 ? result + offset * k * toBytes : result + offset * toBytes;
    transposeInto(op.getValue().getData().data(), rows, cols, from, to, place, k);
    offset += weight.packAxis == 1 ? cols : rows;
  }
  return out.write(result, weight.entry.size());
}

/// The last graph.quantize_weight's bytes: its q and scales are planned one
/// after the other, so each weight is quantized once for both.
struct QuantizedCache {
  Operation *op = nullptr;
  std::optional<QuantizedWeightBytes> bytes;
};

bool writeQuantized(HashingWriter &out, const PlannedWeight &weight, QuantizedCache &cache) {
  if (cache.op != weight.op) {
    cache.op = weight.op;
    cache.bytes = quantizedWeightBytes(cast<graph::QuantizeWeightOp>(weight.op));
  }
  if (!cache.bytes)
    return false;
  const std::vector<char> &bytes = weight.quantizedScales ? cache.bytes->scales : cache.bytes->q;
  return bytes.size() == weight.entry.size() && out.write(bytes.data(), bytes.size());
}

bool writeWeight(HashingWriter &out, const PlannedWeight &weight, ScratchBuffer &scratch,
                 QuantizedCache &quantized) {
  if (weight.quantized)
    return writeQuantized(out, weight, quantized);
  return weight.transposed ? writeTransposed(out, weight, scratch) : streamWeight(out, weight);
}

/// Fills a manifest weight entry's type, shape and size from `type`.
LogicalResult describe(Operation *op, RankedTensorType type, const ArtifactOptions &options,
                       art::Weight &entry, bool convert = true) {
  std::optional<art::ElementType> elementType = elementTypeOf(type.getElementType());
  if (!elementType)
    return op->emitError() << "the artifact cannot store weights of element type "
                           << type.getElementType();
  art::ElementType stored = *elementType;
  if (std::optional<art::ElementType> target = dtypeElementType(options.dtype);
      convert && target && isConvertibleFloat(stored) && *target != stored) {
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
      if (existing.packAxis != weight.packAxis || existing.transposed != weight.transposed ||
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
      // A weight only packs and quantizations read is stored inside them, not
      // on its own.
      bool standalone = llvm::any_of(weightOp->getUsers(), [](Operation *user) {
        return !isa<graph::PackWeightsOp, graph::QuantizeWeightOp>(user);
      });
      if (!standalone)
        return WalkResult::advance();
      PlannedWeight weight;
      weight.op = op;
      weight.sources.push_back(op);
      weight.entry.set_name(weightKey(weightOp));
      // The scales and zero points of a weight the model brings quantized
      // stay f32 whatever --dtype says, as graph.quantize_weight's do.
      bool quantizationParameter = llvm::all_of(weightOp->getUsers(), [&](Operation *user) {
        auto linear = dyn_cast<graph::QuantizedLinearOp>(user);
        return linear && (linear.getScales() == weightOp.getResult() ||
                          linear.getZeros() == weightOp.getResult());
      });
      if (failed(describe(op, cast<RankedTensorType>(weightOp.getType()), options, weight.entry,
                          /*convert=*/!quantizationParameter)) ||
          failed(add(std::move(weight), weightOp.getResult())))
        return WalkResult::interrupt();
      return WalkResult::advance();
    }
    if (auto quantize = dyn_cast<graph::QuantizeWeightOp>(op)) {
      for (Value result : quantize.getResults()) {
        std::optional<std::string> name = graph::storedWeightName(result);
        if (!name) {
          op->emitError() << "the artifact writer quantizes only graph.weight and packs of them";
          return WalkResult::interrupt();
        }
        PlannedWeight weight;
        weight.op = op;
        weight.quantized = true;
        weight.quantizedScales = result == quantize.getScales();
        weight.entry.set_name(*name);
        // q and scales keep their types whatever --dtype says.
        if (failed(describe(op, cast<RankedTensorType>(result.getType()), options, weight.entry,
                            /*convert=*/false)) ||
            failed(add(std::move(weight), result)))
          return WalkResult::interrupt();
      }
      return WalkResult::advance();
    }
    auto onlyQuantized = [](Operation *op) {
      return !op->use_empty() && llvm::all_of(op->getUsers(), [](Operation *user) {
        return isa<graph::QuantizeWeightOp>(user);
      });
    };
    if (auto pack = dyn_cast<graph::PackWeightsOp>(op); pack && !onlyQuantized(pack)) {
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
      weight.transposed = pack.getTranspose();
      weight.entry.set_name(name);
      weight.entry.set_transposed(weight.transposed);
      // A lone transposed weight is stored under its own name like the
      // weight it replaces, with nothing packed.
      if (weight.sources.size() == 1 && weight.transposed)
        weight.entry.clear_packed_from();
      else
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

//===----------------------------------------------------------------------===//
// The exec program
//===----------------------------------------------------------------------===//

namespace {

void setAffine(exec::AffineAttr value, art::Affine &out) {
  out.set_a(value.getPerToken());
  out.set_b(value.getConstant());
}

/// Appends `value`'s elements to `bytes`, little-endian, element by element
/// (splats expanded; bool one byte per element).
LogicalResult denseBytes(Location loc, Attribute attr, art::Constant &out) {
  auto dense = dyn_cast<DenseElementsAttr>(attr);
  auto type = dense ? dyn_cast<RankedTensorType>(dense.getType()) : RankedTensorType();
  if (!type || !type.hasStaticShape())
    return emitError(loc) << "the artifact stores only dense constants of static shape, got "
                          << attr;
  std::optional<art::ElementType> elementType = elementTypeOf(type.getElementType());
  if (!elementType)
    return emitError(loc) << "the artifact cannot store constants of element type "
                          << type.getElementType();
  out.set_element_type(*elementType);
  for (int64_t dim : type.getShape())
    out.add_shape(dim);
  uint64_t elementBytes = art::elementSize(*elementType);
  std::string bytes;
  bytes.reserve(static_cast<size_t>(type.getNumElements()) * elementBytes);
  auto append = [&](const llvm::APInt &bits) {
    for (uint64_t i = 0; i < elementBytes; ++i)
      bytes.push_back(static_cast<char>(bits.extractBitsAsZExtValue(8, 8 * i)));
  };
  if (isa<FloatType>(type.getElementType())) {
    for (const llvm::APFloat &value : dense.getValues<llvm::APFloat>())
      append(value.bitcastToAPInt());
  } else {
    for (const llvm::APInt &value : dense.getValues<llvm::APInt>())
      append(value.zextOrTrunc(static_cast<unsigned>(8 * elementBytes)));
  }
  out.set_data(std::move(bytes));
  return success();
}

/// One attribute as a manifest Attribute (anything unusual as MLIR text).
LogicalResult serializeAttribute(Location loc, NamedAttribute named, art::Attribute &out) {
  out.set_name(named.getName().str());
  Attribute value = named.getValue();
  if (auto boolean = dyn_cast<BoolAttr>(value)) {
    out.set_bool_value(boolean.getValue());
  } else if (isa<UnitAttr>(value)) { // a flag: present is true
    out.set_bool_value(true);
  } else if (auto integer = dyn_cast<IntegerAttr>(value)) {
    out.set_int_value(integer.getValue().getSExtValue());
  } else if (auto real = dyn_cast<FloatAttr>(value)) {
    out.set_float_value(real.getValueAsDouble());
  } else if (auto string = dyn_cast<StringAttr>(value)) {
    out.set_string_value(string.str());
  } else if (auto array = dyn_cast<ArrayAttr>(value);
             array && llvm::all_of(array, [](Attribute a) { return isa<IntegerAttr>(a); })) {
    art::Int64List *ints = out.mutable_ints();
    for (Attribute element : array)
      ints->add_values(cast<IntegerAttr>(element).getValue().getSExtValue());
  } else if (auto dense = dyn_cast<DenseI64ArrayAttr>(value)) {
    art::Int64List *ints = out.mutable_ints();
    for (int64_t element : dense.asArrayRef())
      ints->add_values(element);
  } else if (auto dense = dyn_cast<DenseI32ArrayAttr>(value)) {
    art::Int64List *ints = out.mutable_ints();
    for (int32_t element : dense.asArrayRef())
      ints->add_values(element);
  } else if (isa<DenseElementsAttr>(value)) {
    return denseBytes(loc, value, *out.mutable_tensor());
  } else {
    std::string text;
    llvm::raw_string_ostream os(text);
    value.print(os);
    out.set_mlir(std::move(os.str()));
  }
  return success();
}

/// An op's attributes in name order. A launch's operand segment sizes are
/// left out (its operands carry roles); a region op keeps them, as ints: they
/// say which optional operands it has (graph.clip with one bound).
LogicalResult serializeAttributes(Operation *op,
                                  google::protobuf::RepeatedPtrField<art::Attribute> &out,
                                  bool keepSegmentSizes = false) {
  for (NamedAttribute named : op->getAttrDictionary()) {
    if (named.getName() == "operandSegmentSizes" && !keepSegmentSizes)
      continue;
    if (failed(serializeAttribute(op->getLoc(), named, *out.Add())))
      return failure();
  }
  return success();
}

LogicalResult serializeTensorType(Location loc, Type type, art::TensorType &out) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  std::optional<art::ElementType> elementType =
      tensor ? elementTypeOf(tensor.getElementType()) : std::nullopt;
  if (!elementType)
    return emitError(loc) << "an elementwise region value of type " << type
                          << " cannot be stored in the artifact";
  out.set_element_type(*elementType);
  for (int64_t dim : tensor.getShape())
    out.add_shape(ShapedType::isDynamic(dim) ? -1 : dim);
  return success();
}

LogicalResult serializeRegion(exec::ElementwiseOp op, art::Region &out) {
  Block &body = op.getBody().front();
  llvm::DenseMap<Value, uint32_t> number;
  for (BlockArgument argument : body.getArguments()) {
    number[argument] = static_cast<uint32_t>(number.size());
    if (failed(serializeTensorType(op.getLoc(), argument.getType(), *out.add_arguments())))
      return failure();
  }
  for (Operation &inner : body) {
    auto lookup = [&](Value value, uint32_t &index) -> LogicalResult {
      auto found = number.find(value);
      if (found == number.end())
        return inner.emitError() << "uses a value defined outside its elementwise region";
      index = found->second;
      return success();
    };
    if (auto yield = dyn_cast<exec::YieldOp>(inner)) {
      for (Value value : yield.getValues()) {
        uint32_t index = 0;
        if (failed(lookup(value, index)))
          return failure();
        out.add_yields(index);
      }
      continue;
    }
    if (inner.getNumRegions() != 0)
      return inner.emitError() << "ops with regions cannot be serialized in an elementwise region";
    art::RegionOp &entry = *out.add_ops();
    entry.set_name(inner.getName().getStringRef().str());
    for (Value operand : inner.getOperands()) {
      uint32_t index = 0;
      if (failed(lookup(operand, index)))
        return failure();
      entry.add_operands(index);
    }
    if (failed(serializeAttributes(&inner, *entry.mutable_attributes(), /*keepSegmentSizes=*/true)))
      return failure();
    for (Value result : inner.getResults()) {
      number[result] = static_cast<uint32_t>(number.size());
      if (failed(serializeTensorType(inner.getLoc(), result.getType(), *entry.add_results())))
        return failure();
    }
  }
  return success();
}

/// The launch's kind (by its mnemonic: exec.kv_attention is KV_ATTENTION),
/// its operands by role and the buffers it writes, all read from the op's
/// operand groups (exec::LaunchOpInterface).
template <typename RefOf, typename BufferOf>
LogicalResult serializeLaunch(exec::LaunchOpInterface op, RefOf &refOf, BufferOf &bufferOf,
                              art::Launch &launch) {
  Operation *operation = op.getOperation();
  std::optional<art::Launch::Kind> kind =
      art::launchKindNamed(operation->getName().stripDialect().str());
  if (!kind)
    return op.emitError() << "has no launch kind in the artifact format (Launch.Kind)";
  launch.set_kind(*kind);
  for (auto [group, name] : llvm::enumerate(op.getOperandGroupNames())) {
    const bool written = exec::isWrittenGroup(name);
    std::optional<art::OperandRole> role = art::operandRoleNamed(name.str());
    if (!written && !role)
      return op.emitError() << "operand '" << name << "' has no role in the artifact format "
                            << "(OperandRole)";
    for (Value value : op.getOperandGroup(static_cast<unsigned>(group))) {
      if (written) {
        uint32_t id = 0;
        if (failed(bufferOf(operation, value, id)))
          return failure();
        launch.add_outputs(id);
        continue;
      }
      art::Operand &entry = *launch.add_operands();
      entry.set_role(*role);
      if (failed(refOf(operation, value, *entry.mutable_ref())))
        return failure();
    }
  }
  return success();
}

} // namespace

LogicalResult serializeExecProgram(exec::ProgramOp program, const std::vector<PlannedWeight> &weights,
                                   art::ExecProgram &out) {
  out.set_entry(program.getSymName().str());
  exec::ArenaOp arena = program.getArena();
  std::optional<exec::AffineAttr> arenaSize = arena.getSize();
  if (!arenaSize || !arena.getBoundTokens())
    return arena.emitError() << "the exec program is not planned (the arena has no size)";
  setAffine(*arenaSize, *out.mutable_arena()->mutable_size());
  out.mutable_arena()->set_bound_tokens(static_cast<int64_t>(*arena.getBoundTokens()));
  out.mutable_arena()->set_peak_live_bytes(
      static_cast<int64_t>(arena.getPeakLiveBytes().value_or(0)));

  llvm::StringMap<uint32_t> weightIndex;
  for (auto [i, weight] : llvm::enumerate(weights))
    weightIndex.try_emplace(weight.entry.name(), static_cast<uint32_t>(i));

  // Every value a launch can use, as a Ref.
  llvm::DenseMap<Value, art::Ref> refs;
  auto refOf = [&](Operation *user, Value value, art::Ref &ref) -> LogicalResult {
    auto found = refs.find(value);
    if (found == refs.end())
      return user->emitError() << "an operand is not an exec.buffer, exec.weight or exec.constant";
    ref = found->second;
    return success();
  };
  auto bufferOf = [&](Operation *user, Value value, uint32_t &id) -> LogicalResult {
    art::Ref ref;
    if (failed(refOf(user, value, ref)))
      return failure();
    if (ref.target_case() != art::Ref::kBuffer)
      return user->emitError() << "writes or binds something that is not an arena buffer";
    id = ref.buffer();
    return success();
  };

  for (Operation &op : program.getBody().front()) {
    Location loc = op.getLoc();
    if (auto buffer = dyn_cast<exec::BufferOp>(op)) {
      std::optional<art::ElementType> elementType = elementTypeOf(buffer.getElementType());
      if (!elementType)
        return buffer.emitError() << "the artifact cannot store buffers of element type "
                                  << buffer.getElementType();
      if (!buffer.getOffset())
        return buffer.emitError() << "the exec program is not planned (a buffer has no offset)";
      art::Buffer &entry = *out.add_buffers();
      entry.set_id(static_cast<uint32_t>(out.buffers_size() - 1));
      setAffine(*buffer.getOffset(), *entry.mutable_offset());
      setAffine(buffer.getSize(), *entry.mutable_size());
      entry.set_element_type(*elementType);
      entry.set_per_logit_row(buffer.getPerLogitRow());
      refs[buffer.getResult()].set_buffer(entry.id());
      continue;
    }
    if (auto weight = dyn_cast<exec::WeightOp>(op)) {
      auto found = weightIndex.find(weight.getName());
      if (found == weightIndex.end())
        return weight.emitError() << "the artifact stores no weight named '" << weight.getName()
                                  << "'";
      auto type = dyn_cast<RankedTensorType>(weight.getTensorType());
      const art::Weight &entry = weights[found->second].entry;
      if (!type || !llvm::equal(type.getShape(), entry.shape()))
        return weight.emitError() << "weight '" << weight.getName() << "' is stored with another shape";
      refs[weight.getResult()].set_weight(found->second);
      continue;
    }
    if (auto constant = dyn_cast<exec::ConstantOp>(op)) {
      art::Constant &entry = *out.add_constants();
      entry.set_id(static_cast<uint32_t>(out.constants_size() - 1));
      if (failed(denseBytes(loc, constant.getValue(), entry)))
        return failure();
      refs[constant.getResult()].set_constant(entry.id());
      continue;
    }
    if (auto input = dyn_cast<exec::InputOp>(op)) {
      art::Binding &binding = *out.add_inputs();
      binding.set_name(input.getName().str());
      uint32_t id = 0;
      if (failed(bufferOf(&op, input.getBuffer(), id)))
        return failure();
      binding.set_buffer(id);
      continue;
    }
    if (auto output = dyn_cast<exec::OutputOp>(op)) {
      art::Binding &binding = *out.add_outputs();
      binding.set_name(output.getName().str());
      uint32_t id = 0;
      if (failed(bufferOf(&op, output.getBuffer(), id)))
        return failure();
      binding.set_buffer(id);
      continue;
    }
    if (isa<exec::ArenaOp, exec::ReturnOp>(op))
      continue;

    auto launchOp = dyn_cast<exec::LaunchOpInterface>(op);
    if (!launchOp)
      return op.emitError() << "the artifact cannot serialize '" << op.getName() << "'";
    art::Launch launch;
    if (failed(serializeLaunch(launchOp, refOf, bufferOf, launch)))
      return failure();
    if (auto elementwise = dyn_cast<exec::ElementwiseOp>(op);
        elementwise && failed(serializeRegion(elementwise, *launch.mutable_region())))
      return failure();
    if (failed(serializeAttributes(&op, *launch.mutable_attributes())))
      return failure();
    *out.add_launches() = std::move(launch);
  }
  return success();
}

LogicalResult describeKvCache(exec::ProgramOp step, int64_t maxSeqLen, art::KvCacheLayout &out) {
  int64_t layers = 0;
  for (auto attention : step.getBody().front().getOps<exec::KvAttentionOp>()) {
    auto input = attention.getInputs().size() == 3 ? attention.getInputs()[1]
                                                   : attention.getInputs().front();
    auto buffer = input.getDefiningOp<exec::BufferOp>();
    std::optional<art::ElementType> type =
        buffer ? elementTypeOf(buffer.getElementType()) : std::nullopt;
    if (!type)
      return attention.emitError() << "the K/V input of a kv_attention is not an arena buffer";
    // --kv-cache-dtype fp8: the cache holds E4M3 bytes of K / k_cache_scale
    // and V / v_cache_scale (the cpu backend keeps those values in f32).
    const bool kFp8 = attention.getKCacheScale().convertToFloat() > 0;
    if (kFp8 != (attention.getVCacheScale().convertToFloat() > 0))
      return attention.emitError() << "has an FP8 cache scale for one of K and V only";
    if (kFp8)
      type = art::ELEMENT_TYPE_F8E4M3;
    if (layers == 0) {
      out.set_block_size(attention.getBlockSize());
      out.set_num_kv_heads(attention.getNumKvHeads());
      out.set_head_dim(attention.getHeadDim());
      out.set_element_type(*type);
    } else if (out.block_size() != static_cast<int64_t>(attention.getBlockSize()) ||
               out.num_kv_heads() != static_cast<int64_t>(attention.getNumKvHeads()) ||
               out.head_dim() != static_cast<int64_t>(attention.getHeadDim()) ||
               out.element_type() != *type) {
      return attention.emitError() << "kv_attention layers differ in their cache layout";
    }
    if (static_cast<int64_t>(attention.getLayer()) != layers)
      return attention.emitError() << "kv_attention layers are not numbered 0, 1, ... in order";
    ++layers;
  }
  out.set_num_layers(layers);
  out.set_layout("[num_blocks, 2, block_size, kv_heads, head_dim]");
  out.set_bytes_per_token(layers * 2 * out.num_kv_heads() * out.head_dim() *
                          static_cast<int64_t>(art::elementSize(out.element_type())));
  out.set_max_seq_len(maxSeqLen);
  if (out.block_size() > 0)
    out.set_max_blocks_per_sequence((maxSeqLen + out.block_size() - 1) / out.block_size());
  return success();
}

FailureOr<ArtifactSummary> writeArtifact(ModuleOp module, llvm::StringRef path,
                                         const ArtifactOptions &options,
                                         exec::ProgramOp program) {
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
  compileOptions->set_quantize(options.quantize);
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
  if (program && failed(serializeExecProgram(program, plan->weights, *manifest.mutable_exec())))
    return failure();
  if (options.stepProgram &&
      (failed(serializeExecProgram(options.stepProgram, plan->weights, *manifest.mutable_step())) ||
       failed(describeKvCache(options.stepProgram, options.maxSeqLen,
                              *manifest.mutable_kv_cache()))))
    return failure();
  if (options.text)
    *manifest.mutable_text() = *options.text;
  if (options.addTargetCode && failed(options.addTargetCode(manifest)))
    return failure();

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
  if (failed(checkOutputPath(module.getLoc(), path, options.inputFiles)))
    return failure();
  TempFile temp;
  if (!temp.create(path))
    return ioError("create a temporary file for");

  unsigned char headerBytes[art::kHeaderSize] = {};
  if (::write(temp.fd(), headerBytes, sizeof(headerBytes)) !=
      static_cast<ssize_t>(sizeof(headerBytes)))
    return ioError("write");
  {
    HashingWriter out(temp.fd());
    ScratchBuffer scratch;
    QuantizedCache quantized;
    bool ok = out.write(manifestBytes.data(), manifestBytes.size()) &&
              out.padTo(header.weightsOffset);
    for (const PlannedWeight &weight : plan->weights) {
      if (!ok)
        break;
      ok = out.padTo(header.weightsOffset + weight.entry.offset()) &&
           writeWeight(out, weight, scratch, quantized);
    }
    ok = ok && out.padTo(header.fileSize) && out.flush();
    if (!ok)
      return ioError("write");
    header.payloadHash = out.digest();
  }
  art::encodeHeader(header, headerBytes);
  if (::pwrite(temp.fd(), headerBytes, sizeof(headerBytes), 0) !=
      static_cast<ssize_t>(sizeof(headerBytes)))
    return ioError("write");
  if (!temp.close())
    return ioError("close");
  if (!temp.renameTo(path))
    return ioError("rename the temporary file to");

  ArtifactSummary summary;
  summary.numWeights = plan->weights.size();
  summary.weightBytes = plan->weightBytes;
  summary.fileSize = header.fileSize;
  return summary;
}

} // namespace infer::compiler
