//===- ExecProgramTest.cpp - the exec program in the artifact -------------===//
//
// Compiles tiny-llama to a planned exec program, writes it into the artifact
// and reads it back through the runtime's reader: launch kinds in order,
// every buffer inside the arena at the bound, every weight reference
// resolving. A gpt2-style block checks the elementwise region's flat form.
//
//===----------------------------------------------------------------------===//

#include "compiler/artifact/ArtifactWriter.h"
#include "compiler/import/onnx/OnnxImporter.h"
#include "compiler/pipeline/Pipeline.h"
#include "dialects/exec/IR/ExecOps.h"
#include "runtime/artifact/ArtifactReader.h"
#include "test/artifact/TestModule.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>
#include <unistd.h>

using namespace mlir;
namespace art = infer::artifact;

namespace {

constexpr int64_t kBound = 8192;

OwningOpRef<ModuleOp> lowerToExec(ModuleOp module) {
  return infer::test::lowerToExec(module, kBound);
}

infer::exec::ProgramOp programOf(ModuleOp module) {
  for (auto program : module.getOps<infer::exec::ProgramOp>())
    return program;
  return nullptr;
}

uint64_t at(const art::Affine &value, int64_t tokens) {
  return static_cast<uint64_t>(value.a() * tokens + value.b());
}

const art::Attribute *findAttribute(const google::protobuf::RepeatedPtrField<art::Attribute> &attrs,
                                    const std::string &name) {
  for (const art::Attribute &attr : attrs)
    if (attr.name() == name)
      return &attr;
  return nullptr;
}

TEST(ExecProgram, TinyLlamaRoundTrip) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module = infer::test::optimizedTestModel(context);
  ASSERT_TRUE(module);
  OwningOpRef<ModuleOp> lowered = lowerToExec(*module);
  ASSERT_TRUE(lowered);
  infer::exec::ProgramOp program = programOf(*lowered);
  ASSERT_TRUE(program);

  std::string path =
      ::testing::TempDir() + "/infer-exec-" + std::to_string(::getpid()) + ".infer";
  infer::compiler::ArtifactOptions options;
  options.modelName = "tiny-llama";
  options.maxBatchTokens = kBound;
  ASSERT_TRUE(succeeded(infer::compiler::writeArtifact(*module, path, options, program)));
  auto reader = art::ArtifactReader::open(path);
  ::unlink(path.c_str());
  ASSERT_TRUE(reader.ok()) << reader.status().toString();
  const art::Manifest &manifest = (*reader)->manifest();
  ASSERT_TRUE(manifest.has_exec());
  const art::ExecProgram &exec = manifest.exec();
  EXPECT_EQ(exec.entry(), "main_graph");

  // Launch kinds: embedding, per layer the llama block, final norm, lm_head.
  using L = art::Launch;
  std::vector<L::Kind> expected = {L::EMBEDDING};
  for (int layer = 0; layer < 2; ++layer)
    expected.insert(expected.end(), {L::RMS_NORM, L::GEMM, L::ROTARY, L::ATTENTION, L::GEMM,
                                     L::RMS_NORM, L::GEMM, L::GATED_ACTIVATION, L::GEMM});
  expected.insert(expected.end(), {L::RMS_NORM, L::GEMM});
  std::vector<L::Kind> kinds;
  for (const art::Launch &launch : exec.launches())
    kinds.push_back(launch.kind());
  EXPECT_EQ(kinds, expected);

  // The arena at the bound holds every buffer.
  EXPECT_EQ(exec.arena().bound_tokens(), kBound);
  uint64_t arena = at(exec.arena().size(), kBound);
  EXPECT_EQ(arena, 22020096u); // the final norm's input lives through the LM head
  EXPECT_GE(arena, static_cast<uint64_t>(exec.arena().peak_live_bytes()));
  ASSERT_GT(exec.buffers_size(), 0);
  for (int i = 0; i < exec.buffers_size(); ++i) {
    const art::Buffer &buffer = exec.buffers(i);
    EXPECT_EQ(buffer.id(), static_cast<uint32_t>(i));
    EXPECT_LE(at(buffer.offset(), kBound) + at(buffer.size(), kBound), arena) << "buffer " << i;
    EXPECT_EQ(at(buffer.offset(), kBound) % 256, 0u) << "buffer " << i;
  }

  // Every weight reference resolves, and every stored weight is used.
  std::set<uint32_t> usedWeights;
  for (const art::Launch &launch : exec.launches()) {
    ASSERT_EQ(launch.outputs_size(), 1);
    EXPECT_LT(launch.outputs(0), static_cast<uint32_t>(exec.buffers_size()));
    for (const art::Operand &operand : launch.operands()) {
      const art::Ref &ref = operand.ref();
      switch (ref.target_case()) {
      case art::Ref::kWeight:
        ASSERT_LT(ref.weight(), static_cast<uint32_t>(manifest.weights_size()));
        usedWeights.insert(ref.weight());
        break;
      case art::Ref::kBuffer:
        EXPECT_LT(ref.buffer(), static_cast<uint32_t>(exec.buffers_size()));
        break;
      case art::Ref::kConstant:
        EXPECT_LT(ref.constant(), static_cast<uint32_t>(exec.constants_size()));
        break;
      default:
        ADD_FAILURE() << "operand '" << art::operandRoleName(operand.role())
                      << "' refers to nothing";
      }
    }
  }
  EXPECT_EQ(usedWeights.size(), static_cast<size_t>(manifest.weights_size()));

  // Typed details: the first GEMM reads the packed QKV weight; rotary reads
  // the inline inverse frequencies; the entry's input and output are bound.
  const art::Launch &qkv = exec.launches(2);
  ASSERT_EQ(qkv.operands_size(), 2);
  EXPECT_EQ(qkv.operands(0).role(), art::ROLE_INPUT);
  EXPECT_EQ(qkv.operands(1).role(), art::ROLE_WEIGHT);
  EXPECT_EQ(manifest.weights(static_cast<int>(qkv.operands(1).ref().weight())).name(),
            "val_92+val_99+val_106");
  const art::Attribute *n = findAttribute(qkv.attributes(), "n");
  ASSERT_TRUE(n);
  EXPECT_EQ(n->int_value(), 128);
  const art::Launch &down = exec.launches(9);
  ASSERT_EQ(down.operands_size(), 3);
  EXPECT_EQ(down.operands(2).role(), art::ROLE_RESIDUAL);
  EXPECT_TRUE(down.operands(2).ref().has_buffer());
  const art::Attribute *epsilon = findAttribute(exec.launches(1).attributes(), "epsilon");
  ASSERT_TRUE(epsilon);
  EXPECT_EQ(static_cast<float>(epsilon->float_value()), 1e-6f);
  const art::Launch &rotary = exec.launches(3);
  ASSERT_EQ(rotary.operands_size(), 2);
  EXPECT_EQ(rotary.operands(1).role(), art::ROLE_INV_FREQ);
  ASSERT_TRUE(rotary.operands(1).ref().has_constant());
  const art::Constant &invFreq = exec.constants(static_cast<int>(rotary.operands(1).ref().constant()));
  EXPECT_EQ(invFreq.element_type(), art::ELEMENT_TYPE_F32);
  EXPECT_EQ(invFreq.data().size(), 8u * 4u);
  ASSERT_EQ(exec.inputs_size(), 1);
  EXPECT_EQ(exec.inputs(0).name(), "input_ids");
  EXPECT_EQ(exec.buffers(static_cast<int>(exec.inputs(0).buffer())).element_type(),
            art::ELEMENT_TYPE_I64);
  ASSERT_EQ(exec.outputs_size(), 1);
  EXPECT_EQ(exec.outputs(0).name(), "logits");
  EXPECT_EQ(exec.outputs(0).buffer(), exec.launches(exec.launches_size() - 1).outputs(0));
}

constexpr const char *kGpt2Block = R"mlir(
func.func @gpt2(%x: tensor<?x?x4xf32>) -> tensor<?x?x4xf32> {
  %s = graph.constant dense<1.0> : tensor<4xf32>
  %b = graph.constant dense<0.5> : tensor<4xf32>
  %w = graph.constant dense<0.25> : tensor<4x4xf32>
  %n = graph.layer_normalization %x, %s bias(%b) {axis = 2 : i64} : (tensor<?x?x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x?x4xf32>
  %u = graph.linear %n, %w bias(%b) {transpose_weight = true} : (tensor<?x?x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<?x?x4xf32>
  %g = graph.fusion_group %u : (tensor<?x?x4xf32>) -> tensor<?x?x4xf32> {
  ^bb0(%a: tensor<?x?x4xf32>):
    %r = graph.gelu %a {approximate = "tanh"} : (tensor<?x?x4xf32>) -> tensor<?x?x4xf32>
    graph.yield %r : tensor<?x?x4xf32>
  }
  return %g : tensor<?x?x4xf32>
}
)mlir";

TEST(ExecProgram, ElementwiseRegionIsFlattened) {
  MLIRContext context;
  infer::import::registerImportDialects(context);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kGpt2Block, &context);
  ASSERT_TRUE(module);
  OwningOpRef<ModuleOp> lowered = lowerToExec(*module);
  ASSERT_TRUE(lowered);
  art::ExecProgram exec;
  ASSERT_TRUE(succeeded(infer::compiler::serializeExecProgram(programOf(*lowered), {}, exec)));

  ASSERT_EQ(exec.launches_size(), 3);
  const art::Launch &norm = exec.launches(0);
  EXPECT_EQ(norm.kind(), art::Launch::LAYER_NORM);
  ASSERT_EQ(norm.operands_size(), 3);
  EXPECT_EQ(norm.operands(2).role(), art::ROLE_BIAS);
  EXPECT_TRUE(norm.operands(2).ref().has_constant());
  const art::Launch &gemm = exec.launches(1);
  EXPECT_EQ(gemm.kind(), art::Launch::GEMM);
  const art::Attribute *transpose = findAttribute(gemm.attributes(), "transpose_weight");
  ASSERT_TRUE(transpose);
  EXPECT_EQ(transpose->value_case(), art::Attribute::kBoolValue);
  EXPECT_TRUE(transpose->bool_value());

  const art::Launch &gelu = exec.launches(2);
  EXPECT_EQ(gelu.kind(), art::Launch::ELEMENTWISE);
  ASSERT_EQ(gelu.operands_size(), 1);
  EXPECT_EQ(gelu.operands(0).ref().buffer(), gemm.outputs(0));
  ASSERT_EQ(gelu.outputs_size(), 1);
  const art::Region &region = gelu.region();
  ASSERT_EQ(region.arguments_size(), 1);
  EXPECT_EQ(region.arguments(0).element_type(), art::ELEMENT_TYPE_F32);
  EXPECT_EQ(std::vector<int64_t>(region.arguments(0).shape().begin(),
                                 region.arguments(0).shape().end()),
            (std::vector<int64_t>{-1, -1, 4}));
  ASSERT_EQ(region.ops_size(), 1);
  const art::RegionOp &op = region.ops(0);
  EXPECT_EQ(op.name(), "graph.gelu");
  ASSERT_EQ(op.operands_size(), 1);
  EXPECT_EQ(op.operands(0), 0u);
  const art::Attribute *approximate = findAttribute(op.attributes(), "approximate");
  ASSERT_TRUE(approximate);
  EXPECT_EQ(approximate->string_value(), "tanh");
  ASSERT_EQ(region.yields_size(), 1);
  EXPECT_EQ(region.yields(0), 1u);

  // The splat constants are expanded: 4x4 f32 of 0.25.
  bool found = false;
  for (const art::Constant &constant : exec.constants()) {
    if (constant.shape_size() != 2)
      continue;
    found = true;
    ASSERT_EQ(constant.data().size(), 64u);
    float first;
    std::memcpy(&first, constant.data().data() + 60, 4);
    EXPECT_EQ(first, 0.25f);
  }
  EXPECT_TRUE(found);
}

} // namespace

// Every launch op of the exec dialect serializes: its mnemonic names a
// Launch.Kind and each operand group a written buffer or an OperandRole, so
// an op or operand added to ExecOps.td without its number in artifact.proto
// fails here rather than at a user's compile.
TEST(ExecProgram, EveryLaunchOpHasAKindAndRoles) {
  MLIRContext context;
  context.loadDialect<infer::exec::ExecDialect>();
  int launches = 0;
  std::set<art::OperandRole> used;
  for (RegisteredOperationName name : context.getRegisteredOperations()) {
    if (name.getDialectNamespace() != "exec")
      continue;
    const auto *launch = name.getInterface<infer::exec::LaunchOpInterface>();
    if (!launch)
      continue;
    ++launches;
    EXPECT_TRUE(art::launchKindNamed(name.stripDialect().str())) << name.getStringRef().str();
    int written = 0;
    for (llvm::StringLiteral group : launch->getOperandGroupNames()) {
      if (infer::exec::isWrittenGroup(group)) {
        ++written;
        continue;
      }
      std::optional<art::OperandRole> role = art::operandRoleNamed(group.str());
      ASSERT_TRUE(role) << name.getStringRef().str() << " operand " << group.str();
      EXPECT_EQ(art::operandRoleName(*role), group.str());
      used.insert(*role);
    }
    EXPECT_EQ(written, 1) << name.getStringRef().str();
  }
  // Every kind but the unspecified one is some op's; every role some operand's.
  EXPECT_EQ(launches, art::Launch::Kind_ARRAYSIZE - 1);
  EXPECT_EQ(used.size(), size_t(art::OperandRole_ARRAYSIZE - 1));
  EXPECT_FALSE(art::operandRoleNamed("unspecified"));
  EXPECT_FALSE(art::operandRoleNamed("WEIGHT"));
  EXPECT_EQ(art::operandRoleName(static_cast<art::OperandRole>(999)), "?");
}
