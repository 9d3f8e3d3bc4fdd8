//===- ArtifactRoundTripTest.cpp - writer → reader on tiny-llama ----------===//
//
// Compiles tiny-llama through the optimization pipeline, writes the artifact
// and reads it back: every weight's bytes equal the graph's, every
// pack_weights entry equals the concatenation computed element by element,
// and --dtype bf16 matches an independent round-to-nearest-even.
//
//===----------------------------------------------------------------------===//

#include "compiler/artifact/ArtifactWriter.h"
#include "compiler/import/onnx/OnnxImporter.h"
#include "compiler/pipeline/Pipeline.h"
#include "dialects/graph/IR/GraphOps.h"
#include "runtime/artifact/ArtifactReader.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <unistd.h>

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
  module->walk([&](infer::graph::PackWeightsOp pack) {
    std::string name;
    for (Value operand : pack.getWeights())
      name += (name.empty() ? "" : "+") + keyOf(operand.getDefiningOp<infer::graph::WeightOp>());
    auto view = reader->weight(name);
    ASSERT_TRUE(view.ok()) << view.status().toString();
    auto type = cast<RankedTensorType>(pack.getType());
    ASSERT_TRUE(type.getElementType().isF32());
    ASSERT_EQ(view->size, type.getNumElements() * 4u);
    const float *packed = static_cast<const float *>(view->data);
    int64_t axis = pack.getAxis();
    // Element by element: the result index's coordinate along the axis picks
    // the source and its coordinate there.
    SmallVector<int64_t> index(type.getRank(), 0);
    for (int64_t flat = 0; flat < type.getNumElements(); ++flat) {
      int64_t rest = flat;
      for (int64_t d = type.getRank() - 1; d >= 0; --d) {
        index[d] = rest % type.getDimSize(d);
        rest /= type.getDimSize(d);
      }
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
        ASSERT_EQ(packed[flat], expected) << name << " at " << flat;
        break;
      }
    }
    EXPECT_EQ(view->entry->pack_axis(), axis);
    ++packs;
  });
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
    if (!view.ok())
      return; // stored inside a pack
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
}

TEST_F(ArtifactRoundTrip, Fp16WithinHalfAnUlp) {
  options.dtype = "fp16";
  auto reader = write("fp16.infer");
  ASSERT_TRUE(reader);
  module->walk([&](infer::graph::WeightOp op) {
    auto view = reader->weight(keyOf(op));
    if (!view.ok())
      return;
    ASSERT_EQ(view->entry->element_type(), art::ELEMENT_TYPE_F16);
    ArrayRef<char> data = op.getValue().getData();
    const uint16_t *stored = static_cast<const uint16_t *>(view->data);
    for (size_t i = 0; i < data.size() / 4; ++i) {
      float value;
      std::memcpy(&value, data.data() + 4 * i, 4);
      // Decode f16 (normal numbers only here) and compare within half an ulp.
      uint16_t h = stored[i];
      int exponent = (h >> 10) & 0x1f;
      ASSERT_NE(exponent, 0x1f);
      float magnitude = exponent ? std::ldexp(1.0f + (h & 0x3ff) / 1024.0f, exponent - 15)
                                 : std::ldexp((h & 0x3ff) / 1024.0f, -14);
      float decoded = (h & 0x8000) ? -magnitude : magnitude;
      float ulp = exponent ? std::ldexp(1.0f, exponent - 25) : std::ldexp(1.0f, -24);
      ASSERT_LE(std::fabs(decoded - value), ulp * 0.5f * 1.0001f) << keyOf(op) << "[" << i << "]";
    }
  });
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
