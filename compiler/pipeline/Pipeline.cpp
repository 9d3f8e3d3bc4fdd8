//===- Pipeline.cpp - the graph optimization pipeline ---------------------===//

#include "compiler/pipeline/Pipeline.h"

#include "dialects/exec/Transforms/Passes.h"
#include "dialects/graph/Transforms/Passes.h"
#include "passes/GraphToExec/Passes.h"
#include "runtime/cuda/abi/KernelParams.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace infer;

namespace {

void addCleanup(OpPassManager &pm) {
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

} // namespace

func::FuncOp pipeline::singleFunction(ModuleOp module) {
  auto funcs = llvm::to_vector(module.getOps<func::FuncOp>());
  return funcs.size() == 1 ? funcs.front() : func::FuncOp();
}

std::vector<pipeline::PipelineStage>
pipeline::optimizationStages(const PipelineOptions &options) {
  std::vector<PipelineStage> stages;
  stages.push_back({"fold-shapes", [](OpPassManager &pm) {
                      addCleanup(pm);
                      pm.addNestedPass<func::FuncOp>(graph::createFoldShapesPass());
                      addCleanup(pm);
                    }});
  stages.push_back({"raise", [](OpPassManager &pm) {
                      pm.addNestedPass<func::FuncOp>(graph::createRaiseNormsPass());
                      pm.addNestedPass<func::FuncOp>(graph::createRaiseLinearPass());
                      pm.addNestedPass<func::FuncOp>(graph::createRaiseAttentionPass());
                      pm.addNestedPass<func::FuncOp>(graph::createRaiseMlpPass());
                      pm.addNestedPass<func::FuncOp>(graph::createRaiseMoePass());
                      // Attention's outputs may now feed flattened projections.
                      pm.addNestedPass<func::FuncOp>(graph::createRaiseLinearPass());
                      addCleanup(pm);
                    }});
  if (options.testBreakNumerics)
    stages.push_back({"test-break-numerics", [](OpPassManager &pm) {
                        pm.addNestedPass<func::FuncOp>(graph::createTestBreakNumericsPass());
                      }});
  stages.push_back({"fuse", [](OpPassManager &pm) {
                      pm.addNestedPass<func::FuncOp>(graph::createFuseHorizontalPass());
                      pm.addNestedPass<func::FuncOp>(graph::createAttachEpiloguesPass());
                      // After packing, so a packed QKV is transposed as one weight.
                      pm.addNestedPass<func::FuncOp>(graph::createTransposeWeightsPass());
                      pm.addNestedPass<func::FuncOp>(graph::createRaisePrequantizedPass());
                      addCleanup(pm);
                    }});
  stages.push_back({"group-elementwise", [](OpPassManager &pm) {
                      pm.addNestedPass<func::FuncOp>(graph::createRaiseFeatureGatherPass());
                      addCleanup(pm);
                      pm.addNestedPass<func::FuncOp>(graph::createGroupElementwisePass());
                    }});
  if (!options.quantize.empty() || options.kvCacheFp8)
    stages.push_back({"quantize",
                      [options](OpPassManager &pm) {
                        if (options.quantize.empty())
                          return; // the KV cache scales only: set by the caller
                        graph::QuantizeWeightsPassOptions quantize;
                        quantize.scheme = options.quantize;
                        quantize.groupSize = options.groupSize;
                        quantize.lmHead = options.quantizeLmHead;
                        pm.addNestedPass<func::FuncOp>(graph::createQuantizeWeightsPass(quantize));
                      },
                      /*approximates=*/true});
  return stages;
}

void pipeline::buildOptimizationPipeline(OpPassManager &pm, const PipelineOptions &options) {
  for (const PipelineStage &stage : optimizationStages(options))
    stage.addPasses(pm);
}

const char *pipeline::KernelFusions::names() {
  return "gemm-prologue, gated-epilogue, argmax, kv-decode, rotary-kv-write, qkv-decode, "
         "identity-gather";
}

bool pipeline::KernelFusions::set(const std::string &name, bool on) {
  bool *flag = name == "gemm-prologue"     ? &gemmPrologue
               : name == "gated-epilogue"  ? &gatedEpilogue
               : name == "argmax"          ? &argmax
               : name == "kv-decode"       ? &kvDecode
               : name == "rotary-kv-write" ? &rotaryKvWrite
               : name == "qkv-decode"      ? &qkvDecode
               : name == "identity-gather" ? &identityGather
                                           : nullptr;
  if (flag)
    *flag = on;
  return flag != nullptr;
}

/// The fusions and kernel variants decided on the planned program
/// (docs/exec.md), for every target; the step program's passes find nothing
/// to do in a forward one.
static void addKernelFusionPasses(OpPassManager &pm, const std::string &activationType,
                                  const pipeline::KernelFusions &fusions) {
  if (fusions.gemmPrologue) {
    exec::FoldGemmProloguePassOptions prologue;
    prologue.maxRows = kernels::kGemvMaxRows;
    prologue.weightDtype = activationType; // the artifact stores float weights in --dtype
    pm.addNestedPass<exec::ProgramOp>(exec::createFoldGemmProloguePass(prologue));
  }
  exec::FoldGemmEpiloguePassOptions epilogue;
  epilogue.gatedActivation = fusions.gatedEpilogue;
  epilogue.argmax = fusions.argmax;
  pm.addNestedPass<exec::ProgramOp>(exec::createFoldGemmEpiloguePass(epilogue));
  exec::FoldKvRotaryPassOptions rotary;
  rotary.decode = fusions.kvDecode;
  rotary.kvWrite = fusions.rotaryKvWrite;
  pm.addNestedPass<exec::ProgramOp>(exec::createFoldKvRotaryPass(rotary));
  if (fusions.qkvDecode)
    pm.addNestedPass<exec::ProgramOp>(exec::createFoldQkvDecodePass());
  if (fusions.identityGather)
    pm.addNestedPass<exec::ProgramOp>(exec::createElideIdentityGatherPass());
  exec::SelectKernelsPassOptions select;
  select.mmaGemvMinTokens = fusions.mmaGemvMinTokens;
  select.prefillKernels = fusions.prefillKernels;
  select.fp8CachePrefill = fusions.fp8CachePrefill;
  select.quantizedMma = fusions.quantizedMma;
  select.fp8Mma = fusions.fp8Mma;
  select.fp8Gemm = fusions.fp8Gemm;
  pm.addNestedPass<exec::ProgramOp>(exec::createSelectKernelsPass(select));
}

void pipeline::buildExecPipeline(OpPassManager &pm, int64_t maxBatchTokens,
                                 const std::string &activationType, const KernelFusions &fusions) {
  ConvertGraphToExecPassOptions lowerOptions;
  lowerOptions.activationType = activationType;
  pm.addPass(createConvertGraphToExecPass(lowerOptions));
  exec::PlanMemoryPassOptions planOptions;
  planOptions.maxBatchTokens = maxBatchTokens;
  pm.addNestedPass<exec::ProgramOp>(exec::createPlanMemoryPass(planOptions));
  addKernelFusionPasses(pm, activationType, fusions);
}

void pipeline::buildStepPipeline(OpPassManager &pm, int64_t maxBatchTokens, int64_t blockSize,
                                 int64_t maxSeqLen, const std::string &activationType,
                                 const KernelFusions &fusions) {
  ConvertGraphToExecPassOptions lowerOptions;
  lowerOptions.activationType = activationType;
  pm.addPass(createConvertGraphToExecPass(lowerOptions));
  exec::StepEntryPassOptions stepOptions;
  stepOptions.blockSize = blockSize;
  stepOptions.maxSeqLen = maxSeqLen;
  pm.addNestedPass<exec::ProgramOp>(exec::createStepEntryPass(stepOptions));
  exec::PlanMemoryPassOptions planOptions;
  planOptions.maxBatchTokens = maxBatchTokens;
  pm.addNestedPass<exec::ProgramOp>(exec::createPlanMemoryPass(planOptions));
  addKernelFusionPasses(pm, activationType, fusions);
}

void pipeline::registerPipelines() {
  PassPipelineRegistration<>("infer-optimize",
                             "The graph optimization pipeline of infer-compile --emit=optimized",
                             [](OpPassManager &pm) { buildOptimizationPipeline(pm, {}); });
  PassPipelineRegistration<>(
      "infer-lower-to-exec",
      "Lowers the optimized graph to exec and plans memory (T <= 8192), as --emit=exec",
      [](OpPassManager &pm) { buildExecPipeline(pm, 8192); });
}
