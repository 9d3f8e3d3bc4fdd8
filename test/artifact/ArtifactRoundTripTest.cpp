//===- ArtifactRoundTripTest.cpp - writer → reader on tiny-llama ----------===//
//
// Compiles tiny-llama through the optimization pipeline, writes the artifact
// and reads it back: every weight's bytes equal the graph's, every
// pack_weights entry equals the concatenation (transposed with `transpose`:
// the pipeline stores every linear weight [n, k]) computed element by element,
// and --dtype bf16 and fp16 match an independent conversion of those elements.
//
//===----------------------------------------------------------------------===//

#include "compiler/artifact/ArtifactWriter.h"
#include "compiler/import/onnx/OnnxImporter.h"
#include "compiler/pipeline/Pipeline.h"
#include "dialects/graph/IR/GraphOps.h"
#include "dialects/graph/IR/GraphResources.h"
#include "runtime/artifact/ArtifactReader.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <unistd.h>
#include <utility>
#include <vector>

using namespace mlir;
namespace art = infer::artifact;

namespace {

std::string tempPath(const std::string &name) {
  return ::testing::TempDir() + "/infer-artifact-" + std::to_string(::getpid()) + "-" + name;
}

class ArtifactRoundTrip : public ::testing::Test {
protected:
  void SetUp() override {
    infer::import::ImportStats stats;
    module = infer::import::importOnnxFile(context, INFER_TEST_MODEL, &stats);
    ASSERT_TRUE(module) << "cannot import " << INFER_TEST_MODEL;
    PassManager pm(&context);
    infer::pipeline::buildOptimizationPipeline(pm, infer::pipeline::PipelineOptions());
    ASSERT_TRUE(succeeded(pm.run(*module)));
    options.modelName = "tiny-llama";
    options.opset = stats.opsetVersion;
  }

  std::unique_ptr<art::ArtifactReader> write(const std::string &name) {
    path = tempPath(name);
    auto summary = infer::compiler::writeArtifact(*module, path, options);
    EXPECT_TRUE(succeeded(summary));
    auto reader = art::ArtifactReader::open(path);
    EXPECT_TRUE(reader.ok()) << reader.status().toString();
    return reader.ok() ? std::move(*reader) : nullptr;
  }
  void TearDown() override {
    if (!path.empty())
      ::unlink(path.c_str());
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  infer::compiler::ArtifactOptions options;
  std::string path;
};

std::string keyOf(infer::graph::WeightOp op) {
  return op.getValue().getHandle().getKey().str();
}

/// The artifact's name for a pack: its sources' keys joined with '+' (a lone
/// transposed weight keeps its own name).
std::string packName(infer::graph::PackWeightsOp pack) {
  std::string name;
  for (Value operand : pack.getWeights())
    name += (name.empty() ? "" : "+") + keyOf(operand.getDefiningOp<infer::graph::WeightOp>());
  return name;
}

/// Calls `check(flat, expected)` for each element of `pack`'s (f32) result in
/// row-major order, with the source element it must hold: the coordinate
/// along the axis of the concatenation's index (the result index, its two
/// coordinates swapped when transposed) picks the source and the coordinate
/// there. Stops at the first element `check` rejects.
template <typename Check>
void forEachPackedElement(infer::graph::PackWeightsOp pack, Check check) {
  auto type = cast<RankedTensorType>(pack.getType());
  ASSERT_TRUE(type.getElementType().isF32());
  int64_t axis = pack.getAxis();
  SmallVector<int64_t> index(type.getRank(), 0);
  for (int64_t flat = 0; flat < type.getNumElements(); ++flat) {
    int64_t rest = flat;
    for (int64_t d = type.getRank() - 1; d >= 0; --d) {
      index[d] = rest % type.getDimSize(d);
      rest /= type.getDimSize(d);
    }
    if (pack.getTranspose())
      std::swap(index[0], index[1]);
    int64_t along = index[axis];
    for (Value operand : pack.getWeights()) {
      auto sourceType = cast<RankedTensorType>(operand.getType());
      if (along >= sourceType.getDimSize(axis)) {
        along -= sourceType.getDimSize(axis);
        continue;
      }
      int64_t sourceFlat = 0;
      for (int64_t d = 0; d < sourceType.getRank(); ++d)
        sourceFlat = sourceFlat * sourceType.getDimSize(d) + (d == axis ? along : index[d]);
      float expected;
      std::memcpy(&expected,
                  operand.getDefiningOp<infer::graph::WeightOp>().getValue().getData().data() +
                      sourceFlat * 4,
                  4);
      if (!check(flat, expected))
        return;
      break;
    }
  }
}

TEST_F(ArtifactRoundTrip, WeightsAndPacksReadBackEqual) {
  auto reader = write("fp32.infer");
  ASSERT_TRUE(reader);
  int plain = 0, packs = 0;
  module->walk([&](infer::graph::WeightOp op) {
    bool standalone = llvm::any_of(op->getUsers(), [](Operation *user) {
      return !isa<infer::graph::PackWeightsOp>(user);
    });
    if (!standalone)
      return;
    auto view = reader->weight(keyOf(op));
    ASSERT_TRUE(view.ok()) << view.status().toString();
    ArrayRef<char> data = op.getValue().getData();
    ASSERT_EQ(view->size, data.size()) << keyOf(op);
    EXPECT_EQ(std::memcmp(view->data, data.data(), data.size()), 0) << keyOf(op);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(view->data) % art::kWeightAlignment, 0u);
    ++plain;
  });
  int transposedPacks = 0, transposedLone = 0;
  module->walk([&](infer::graph::PackWeightsOp pack) {
    std::string name = packName(pack);
    auto view = reader->weight(name);
    ASSERT_TRUE(view.ok()) << view.status().toString();
    auto type = cast<RankedTensorType>(pack.getType());
    ASSERT_EQ(view->size, type.getNumElements() * 4u);
    EXPECT_EQ(std::vector<int64_t>(view->entry->shape().begin(), view->entry->shape().end()),
              type.getShape().vec())
        << name;
    const float *packed = static_cast<const float *>(view->data);
    forEachPackedElement(pack, [&](int64_t flat, float expected) {
      EXPECT_EQ(packed[flat], expected) << name << " at " << flat;
      return packed[flat] == expected;
    });
    EXPECT_EQ(view->entry->transposed(), pack.getTranspose()) << name;
    bool lone = pack.getWeights().size() == 1 && pack.getTranspose();
    int sources = static_cast<int>(pack.getWeights().size());
    EXPECT_EQ(view->entry->packed_from_size(), lone ? 0 : sources) << name;
    if (!lone)
      EXPECT_EQ(view->entry->pack_axis(), pack.getAxis());
    transposedPacks += pack.getTranspose() && !lone;
    transposedLone += lone;
    ++packs;
  });
  // tiny-llama: QKV and gate/up packs, and o_proj, down and the LM head alone.
  EXPECT_EQ(transposedPacks, 4);
  EXPECT_EQ(transposedLone, 5);
  EXPECT_GT(plain, 0);
  EXPECT_GT(packs, 0);
  EXPECT_EQ(reader->numWeights(), static_cast<size_t>(plain + packs));
  const art::Manifest &manifest = reader->manifest();
  EXPECT_EQ(manifest.model().name(), "tiny-llama");
  EXPECT_EQ(manifest.model().inputs(0).name(), "input_ids");
  EXPECT_EQ(manifest.model().inputs(0).dims(0).symbol(), "batch");
  EXPECT_EQ(manifest.model().outputs(0).dims(2).size(), 512);
  EXPECT_EQ(manifest.options().target(), art::TARGET_CUDA);
  EXPECT_FALSE(reader->weight("no.such.weight").ok());
  EXPECT_EQ(reader->weight("no.such.weight").status().code(), infer::StatusCode::kNotFound);
}

/// bf16 with round to nearest even, written independently of the compiler's
/// helpers (no NaNs in the weights).
uint16_t referenceBF16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return static_cast<uint16_t>((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
}

TEST_F(ArtifactRoundTrip, Bf16ConvertsWithRoundToNearestEven) {
  options.dtype = "bf16";
  auto reader = write("bf16.infer");
  ASSERT_TRUE(reader);
  int checked = 0;
  module->walk([&](infer::graph::WeightOp op) {
    auto view = reader->weight(keyOf(op));
    if (!view.ok() || view->entry->transposed())
      return; // stored inside a pack (below)
    EXPECT_EQ(view->entry->element_type(), art::ELEMENT_TYPE_BF16);
    EXPECT_EQ(view->entry->source_element_type(), art::ELEMENT_TYPE_F32);
    ArrayRef<char> data = op.getValue().getData();
    ASSERT_EQ(view->size * 2, data.size());
    const uint16_t *stored = static_cast<const uint16_t *>(view->data);
    for (size_t i = 0; i < data.size() / 4; ++i) {
      float value;
      std::memcpy(&value, data.data() + 4 * i, 4);
      ASSERT_EQ(stored[i], referenceBF16(value)) << keyOf(op) << "[" << i << "]";
    }
    ++checked;
  });
  EXPECT_GT(checked, 0);
  int transposed = 0;
  module->walk([&](infer::graph::PackWeightsOp pack) {
    auto view = reader->weight(packName(pack));
    ASSERT_TRUE(view.ok()) << view.status().toString();
    EXPECT_EQ(view->entry->element_type(), art::ELEMENT_TYPE_BF16);
    EXPECT_EQ(view->entry->source_element_type(), art::ELEMENT_TYPE_F32);
    const uint16_t *stored = static_cast<const uint16_t *>(view->data);
    forEachPackedElement(pack, [&](int64_t flat, float expected) {
      EXPECT_EQ(stored[flat], referenceBF16(expected)) << packName(pack) << "[" << flat << "]";
      return stored[flat] == referenceBF16(expected);
    });
    transposed += pack.getTranspose();
  });
  EXPECT_EQ(transposed, 9);
}

/// Whether the f16 `h` is within half an ulp of `value` (normal numbers and
/// subnormals; no infinities or NaNs in the weights), decoded independently.
::testing::AssertionResult f16WithinHalfAnUlp(uint16_t h, float value) {
  int exponent = (h >> 10) & 0x1f;
  if (exponent == 0x1f)
    return ::testing::AssertionFailure() << "inf or NaN for " << value;
  float magnitude = exponent ? std::ldexp(1.0f + (h & 0x3ff) / 1024.0f, exponent - 15)
                             : std::ldexp((h & 0x3ff) / 1024.0f, -14);
  float decoded = (h & 0x8000) ? -magnitude : magnitude;
  float ulp = exponent ? std::ldexp(1.0f, exponent - 25) : std::ldexp(1.0f, -24);
  if (std::fabs(decoded - value) > ulp * 0.5f * 1.0001f)
    return ::testing::AssertionFailure() << decoded << " for " << value;
  return ::testing::AssertionSuccess();
}

TEST_F(ArtifactRoundTrip, Fp16WithinHalfAnUlp) {
  options.dtype = "fp16";
  auto reader = write("fp16.infer");
  ASSERT_TRUE(reader);
  module->walk([&](infer::graph::WeightOp op) {
    auto view = reader->weight(keyOf(op));
    if (!view.ok() || view->entry->transposed())
      return; // stored inside a pack (below)
    ASSERT_EQ(view->entry->element_type(), art::ELEMENT_TYPE_F16);
    ArrayRef<char> data = op.getValue().getData();
    const uint16_t *stored = static_cast<const uint16_t *>(view->data);
    for (size_t i = 0; i < data.size() / 4; ++i) {
      float value;
      std::memcpy(&value, data.data() + 4 * i, 4);
      ASSERT_TRUE(f16WithinHalfAnUlp(stored[i], value)) << keyOf(op) << "[" << i << "]";
    }
  });
  module->walk([&](infer::graph::PackWeightsOp pack) {
    auto view = reader->weight(packName(pack));
    ASSERT_TRUE(view.ok()) << view.status().toString();
    ASSERT_EQ(view->entry->element_type(), art::ELEMENT_TYPE_F16);
    const uint16_t *stored = static_cast<const uint16_t *>(view->data);
    forEachPackedElement(pack, [&](int64_t flat, float expected) {
      ::testing::AssertionResult near = f16WithinHalfAnUlp(stored[flat], expected);
      EXPECT_TRUE(near) << packName(pack) << "[" << flat << "]";
      return bool(near);
    });
  });
}

/// Transposed packs along both axes, with shapes no tile divides: along
/// axis 0 each source fills a band of the result's columns, along axis 1 a
/// band of its rows (tiny-llama packs only along axis 1).
constexpr const char *kTransposedPacks = R"mlir(
func.func @main(%x: tensor<1xf32>) -> (tensor<3x3xf32>, tensor<3x2xf32>) {
  %a = graph.weight <a> : tensor<2x3xf32>
  %b = graph.weight <b> : tensor<1x3xf32>
  %ab = graph.pack_weights %a, %b {axis = 0 : i64, transpose} : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<3x3xf32>
  %c = graph.weight <c> : tensor<2x2xf32>
  %d = graph.weight <d> : tensor<2x1xf32>
  %cd = graph.pack_weights %c, %d {axis = 1 : i64, transpose} : (tensor<2x2xf32>, tensor<2x1xf32>) -> tensor<3x2xf32>
  return %ab, %cd : tensor<3x3xf32>, tensor<3x2xf32>
}
{-#
  dialect_resources: {
    graph: {
      a: "0x040000000000803F0000004000004040000080400000A0400000C040",
      b: "0x040000000000E0400000004100001041",
      c: "0x040000000000803F000000400000404000008040",
      d: "0x040000000000A0400000C040"
    }
  }
#-}
)mlir";

TEST(TransposedPack, BothAxesReadBackAsTheTransposedConcatenation) {
  MLIRContext context;
  infer::import::registerImportDialects(context);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kTransposedPacks, &context);
  ASSERT_TRUE(module);
  // a = [[1 2 3] [4 5 6]], b = [[7 8 9]]: concat(a, b; 0)^T = [[1 4 7] [2 5 8] [3 6 9]].
  // c = [[1 2] [3 4]], d = [[5] [6]]:     concat(c, d; 1)^T = [[1 3] [2 4] [5 6]].
  const std::vector<float> ab = {1, 4, 7, 2, 5, 8, 3, 6, 9}, cd = {1, 3, 2, 4, 5, 6};
  for (std::string dtype : {"", "bf16"}) {
    infer::compiler::ArtifactOptions options;
    options.dtype = dtype;
    std::string path = tempPath("transposed-" + dtype + ".infer");
    ASSERT_TRUE(succeeded(infer::compiler::writeArtifact(*module, path, options)));
    auto reader = art::ArtifactReader::open(path);
    ::unlink(path.c_str());
    ASSERT_TRUE(reader.ok()) << reader.status().toString();
    for (auto [name, expected] : {std::make_pair("a+b", ab), std::make_pair("c+d", cd)}) {
      auto view = (*reader)->weight(name);
      ASSERT_TRUE(view.ok()) << view.status().toString();
      EXPECT_TRUE(view->entry->transposed());
      std::vector<float> stored(expected.size());
      for (size_t i = 0; i < expected.size(); ++i) {
        if (dtype.empty()) {
          std::memcpy(&stored[i], static_cast<const char *>(view->data) + 4 * i, 4);
        } else {
          uint16_t bits; // small integers are exact in bf16: the top half of the f32
          std::memcpy(&bits, static_cast<const char *>(view->data) + 2 * i, 2);
          uint32_t wide = uint32_t(bits) << 16;
          std::memcpy(&stored[i], &wide, 4);
        }
      }
      EXPECT_EQ(stored, expected) << name << " " << dtype;
    }
  }
}

/// Writes a module with one f32 weight "big" of rows x cols (a byte pattern)
/// to `path`; returns the weight's bytes.
std::vector<char> writeLargeWeight(const std::string &path, int64_t rows, int64_t cols) {
  MLIRContext context;
  infer::import::registerImportDialects(context);
  OpBuilder builder(&context);
  Location loc = builder.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  builder.setInsertionPointToEnd(module->getBody());
  auto type = RankedTensorType::get({rows, cols}, builder.getF32Type());
  const size_t bytes = size_t(rows * cols) * 4;
  auto data = std::make_unique<char[]>(bytes);
  for (size_t i = 0; i < bytes; ++i)
    data[i] = char((i * 2654435761u) >> 13);
  std::vector<char> expected(data.get(), data.get() + bytes);
  auto handle = infer::graph::insertOwnedWeight(&context, "big", std::move(data), bytes);
  auto func = func::FuncOp::create(builder, loc, "main", builder.getFunctionType({}, {type}));
  builder.setInsertionPointToStart(func.addEntryBlock());
  Value weight = infer::graph::WeightOp::create(
      builder, loc, type, infer::graph::WeightAttr::get(&context, type, handle));
  func::ReturnOp::create(builder, loc, weight);
  EXPECT_TRUE(succeeded(infer::compiler::writeArtifact(*module, path, {})));
  return expected;
}

/// The weight section through streamWeightSection, parts concatenated.
infer::Status streamAll(const art::ArtifactReader &reader, uint64_t bufferBytes,
                        std::vector<char> &out, int &parts) {
  std::vector<char> a(bufferBytes), b(bufferBytes);
  void *buffers[2] = {a.data(), b.data()};
  out.assign(size_t(reader.header().weightsSize), 0);
  parts = 0;
  uint64_t next = 0;
  return reader.streamWeightSection(
      buffers, bufferBytes,
      [&](uint64_t offset, uint64_t bytes, const void *data, int buffer) -> infer::Status {
        EXPECT_EQ(offset, next);
        EXPECT_EQ(data, buffers[parts % 2]);
        EXPECT_EQ(buffer, parts % 2);
        std::memcpy(out.data() + offset, data, bytes);
        next = offset + bytes;
        ++parts;
        return infer::okStatus();
      });
}

// Deferred weight checksums (ArtifactReader::Options::deferWeightChecksum):
// the payload's last chunk holds weights only, so it is hashed as
// streamWeightSection reads it. The stream gives the bytes a fully verified
// read gives, in parts that end on the chunk; a flipped weight byte is found
// by the full check at open, by the stream's end, and by any other weight
// read of a deferred reader; a flipped manifest byte by the full check at
// open, by the stream's end with deferral.
TEST(LargeWeight, DeferredChecksumIsCheckedByTheStreamAndByReads) {
  const std::string path = tempPath("deferred-checksum.infer");
  const std::vector<char> expected = writeLargeWeight(path, 4099, 4097); // 67.2 MB: two chunks
  art::ArtifactReader::Options deferred;
  deferred.deferWeightChecksum = true;
  {
    auto reader = art::ArtifactReader::open(path, deferred);
    ASSERT_TRUE(reader.ok()) << reader.status().toString();
    std::vector<char> streamed;
    int parts = 0;
    infer::Status status = streamAll(**reader, uint64_t(48) << 20, streamed, parts);
    ASSERT_TRUE(status.ok()) << status.toString();
    EXPECT_GE(parts, 2);
    const art::Weight &entry = (*reader)->manifest().weights(0);
    ASSERT_EQ(entry.size(), expected.size());
    EXPECT_EQ(std::memcmp(streamed.data() + entry.offset(), expected.data(), expected.size()), 0);
  }
  // One byte of the last chunk (weights only), then one of the manifest.
  auto flip = [&](uint64_t offset) {
    int fd = ::open(path.c_str(), O_RDWR);
    ASSERT_GE(fd, 0);
    char byte = 0;
    ASSERT_EQ(::pread(fd, &byte, 1, off_t(offset)), 1);
    byte = char(byte ^ 0x20);
    ASSERT_EQ(::pwrite(fd, &byte, 1, off_t(offset)), 1);
    ::close(fd);
  };
  uint64_t fileSize = 0, manifestOffset = 0;
  {
    auto reader = art::ArtifactReader::open(path);
    ASSERT_TRUE(reader.ok());
    fileSize = (*reader)->fileSize();
    manifestOffset = (*reader)->header().manifestOffset;
  }
  flip(fileSize - 5);
  auto full = art::ArtifactReader::open(path);
  ASSERT_FALSE(full.ok());
  EXPECT_NE(full.status().toString().find("checksum mismatch"), std::string::npos);
  {
    auto reader = art::ArtifactReader::open(path, deferred);
    ASSERT_TRUE(reader.ok()) << reader.status().toString();
    std::vector<char> streamed;
    int parts = 0;
    infer::Status status = streamAll(**reader, uint64_t(64) << 20, streamed, parts);
    ASSERT_FALSE(status.ok());
    EXPECT_NE(status.toString().find("checksum mismatch"), std::string::npos) << status.toString();
  }
  {
    auto reader = art::ArtifactReader::open(path, deferred);
    ASSERT_TRUE(reader.ok());
    std::vector<char> one(16);
    infer::Status status = (*reader)->readWeightSection(0, one.size(), one.data());
    ASSERT_FALSE(status.ok());
    EXPECT_NE(status.toString().find("checksum mismatch"), std::string::npos) << status.toString();
    EXPECT_FALSE((*reader)->weight("big").ok());
  }
  // A manifest byte: refused at open by the full check; with deferral the
  // manifest is checked field by field at open and the checksum, which
  // covers it too, is compared when the weights have been hashed.
  flip(fileSize - 5); // the weights as written again
  flip(manifestOffset + 2);
  EXPECT_FALSE(art::ArtifactReader::open(path).ok());
  auto reopened = art::ArtifactReader::open(path, deferred);
  if (reopened.ok()) {
    std::vector<char> streamed;
    int parts = 0;
    infer::Status status = streamAll(**reopened, uint64_t(64) << 20, streamed, parts);
    EXPECT_FALSE(status.ok());
    EXPECT_NE(status.toString().find("checksum mismatch"), std::string::npos) << status.toString();
  }
  ::unlink(path.c_str());
}

// A weight past the reader's parallel-read threshold (64 MiB) reads back
// equal, whole and in a range whose parts start mid-word.
TEST(LargeWeight, ReadsBackEqualInParallelParts) {
  const int64_t rows = 4099, cols = 4097; // 67.2 MB of f32: odd sizes, so parts split words
  const size_t bytes = size_t(rows * cols) * 4;
  std::string path = tempPath("large-weight.infer");
  const std::vector<char> expected = writeLargeWeight(path, rows, cols);
  auto reader = art::ArtifactReader::open(path);
  ::unlink(path.c_str());
  ASSERT_TRUE(reader.ok()) << reader.status().toString();
  auto view = (*reader)->weight("big");
  ASSERT_TRUE(view.ok()) << view.status().toString();
  ASSERT_EQ(view->size, bytes);
  EXPECT_EQ(std::memcmp(view->data, expected.data(), bytes), 0);
  const uint64_t offset = view->entry->offset() + 3, size = bytes - 1001;
  std::vector<char> part(size);
  ASSERT_TRUE((*reader)->readWeightSection(offset, size, part.data()).ok());
  EXPECT_EQ(std::memcmp(part.data(), expected.data() + 3, size), 0);
}

TEST_F(ArtifactRoundTrip, FailedWriteLeavesNoFile) {
  std::string bad = ::testing::TempDir() + "/no-such-dir-" + std::to_string(::getpid()) + "/m.infer";
  context.getDiagEngine().registerHandler([](Diagnostic &) { return success(); });
  EXPECT_TRUE(failed(infer::compiler::writeArtifact(*module, bad, options)));
  EXPECT_NE(::access(bad.c_str(), F_OK), 0);
}

TEST_F(ArtifactRoundTrip, WithoutChecksumVerificationStillChecksStructure) {
  auto reader = write("nochecksum.infer");
  ASSERT_TRUE(reader);
  art::ArtifactReader::Options readOptions;
  readOptions.verifyChecksum = false;
  auto again = art::ArtifactReader::open(path, readOptions);
  ASSERT_TRUE(again.ok()) << again.status().toString();
  EXPECT_EQ((*again)->numWeights(), reader->numWeights());
}

} // namespace
