//===- infer-compile.cpp - the infer compiler driver ----------------------===//
//
//   infer-compile MODEL.{onnx,onnxtext,mlir} -o MODEL.infer [--target cuda|cpu] [--dtype ...]
//                 [--tokenizer DIR] [--chat-template FILE] [--no-tokenizer]
//   infer-compile MODEL.{onnx,onnxtext,mlir} --emit=graph|optimized|exec
//   infer-compile MODEL.onnx --check
//   infer-compile MODEL --reference-run --input NAME=IN.npy --output NAME=OUT.npy
//
//===----------------------------------------------------------------------===//

#include "compiler/artifact/ArtifactWriter.h"
#include "compiler/artifact/OutputFile.h"
#include "compiler/artifact/TargetSupport.h"
#include "compiler/import/onnx/OnnxImporter.h"
#include "compiler/pipeline/Awq.h"
#include "compiler/pipeline/KvCacheScales.h"
#include "compiler/pipeline/MlirSource.h"
#include "compiler/pipeline/Pipeline.h"
#include "compiler/pipeline/QuantizationReport.h"
#include "compiler/pipeline/VerifyNumerics.h"
#include "compiler/text/TextFiles.h"
#include "dialects/exec/IR/ExecOps.h"
#include "dialects/graph/IR/GraphDialect.h"
#include "dialects/graph/IR/GraphResources.h"
#include "runtime/artifact/ArtifactFormat.h"
#include "tools/infer-compile/Calibration.h"
#include "tools/infer-compile/Diagnostics.h"
#include "tools/infer-compile/ReferenceRun.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#ifdef INFER_HAVE_CUDA
#include "codegen/cuda/CudaCodegen.h"
#endif
#include "Tuning.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>

using namespace mlir;

namespace {

struct Options {
  std::string model;
  std::string emit;
  std::string outputPath;
#ifdef INFER_HAVE_CUDA
  std::string target = "cuda";
#else
  std::string target = "cpu"; // no NVRTC in this build
#endif
  std::string dtype;
  int64_t maxBatchTokens = 8192;
  int64_t maxSeqLen = 4096;
  int64_t kvBlockSize = 16;
  bool cudaLineInfo = false;
  bool embedPtx = false;
  size_t nvrtcPrograms = 6; ///< codegen::kMaxNvrtcPrograms
  infer::tools::TuningOptions tuning;
  bool check = false;
  bool referenceRun = false;
  bool verifyNumerics = false;
  double verifyTolerance = 0; // 0: by the model's precision (defaultTolerance)
  uint64_t verifySeed = 0;
  bool testBreakNumerics = false;
  std::string quantize;
  int64_t groupSize = 0; // 0: not given (int4's default is 128)
  std::string method = "rtn";
  bool quantizeLmHead = false;
  std::string calibration;
  std::string kvCacheDtype = "auto";
  double accuracyGate = 0; // 0: none
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::string tokenizerDir;
  std::string chatTemplatePath;
  bool noTokenizer = false;
  std::vector<std::string> fuse, noFuse; // --fuse / --no-fuse, as given
  infer::pipeline::KernelFusions fusions;
};

/// The static last dimension of the entry's first result (the logits'
/// vocabulary), or 0.
int64_t logitsVocabulary(ModuleOp module) {
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isPrivate() || func.getFunctionType().getNumResults() == 0)
      continue;
    auto type = dyn_cast<ShapedType>(func.getFunctionType().getResult(0));
    if (type && type.hasRank() && type.getRank() > 0 && !type.isDynamicDim(type.getRank() - 1))
      return type.getDimSize(type.getRank() - 1);
  }
  return 0;
}

/// The tokenizer files for the artifact (TextFiles.h): 1 on an error, after
/// printing it; a note when there is no tokenizer.
int readText(ModuleOp module, const Options &options, infer::compiler::ArtifactOptions &out) {
  if (options.noTokenizer)
    return 0;
  infer::compiler::TextFileOptions textOptions;
  textOptions.modelPath = options.model;
  textOptions.tokenizerDir = options.tokenizerDir;
  textOptions.chatTemplatePath = options.chatTemplatePath;
  textOptions.modelVocab = logitsVocabulary(module);
  std::string note;
  auto text = infer::compiler::readTextFiles(textOptions, note);
  if (!text.ok()) {
    llvm::errs() << "error: " << text.status().message() << "\n";
    return 1;
  }
  if (!note.empty())
    llvm::errs() << "note: " << note << "\n";
  out.text = std::move(*text);
  if (out.text)
    llvm::errs() << "tokenizer: " << out.text->stop_token_ids_size() << " stop token id"
                 << (out.text->stop_token_ids_size() == 1 ? "" : "s") << ", "
                 << (out.text->chat_template().empty() ? "no chat template"
                                                       : "a chat template")
                 << "\n";
  return 0;
}

OwningOpRef<ModuleOp> loadModel(MLIRContext &context, const Options &options,
                                infer::import::ImportStats *stats) {
  llvm::StringRef path = options.model;
  if (path.ends_with(".mlir")) {
    infer::import::registerImportDialects(context);
    auto file = infer::pipeline::readMlirSource(path);
    if (!file) {
      emitError(FileLineColLoc::get(&context, path, 0, 0)) << llvm::toString(file.takeError());
      return nullptr;
    }
    if (auto problem = infer::pipeline::checkMlirSource((*file)->getBuffer())) {
      emitError(FileLineColLoc::get(&context, path, problem->line, problem->column))
          << problem->message;
      return nullptr;
    }
    // Weight references ("file:...") must lie beside the .mlir file, as
    // external data lies beside its .onnx.
    std::string directory = llvm::sys::path::parent_path(path).str();
    infer::graph::setWeightFileDirectory(&context, directory.empty() ? "." : directory);
    // The source manager must outlive parsing only: locations keep file names.
    llvm::SourceMgr sourceMgr;
    sourceMgr.AddNewSourceBuffer(std::move(*file), llvm::SMLoc());
    return parseSourceFile<ModuleOp>(sourceMgr, &context);
  }
  if (path.ends_with(".onnx") || path.ends_with(".onnxtext"))
    return infer::import::importOnnxFile(context, path, stats);
  emitError(UnknownLoc::get(&context))
      << "'" << path << "': expected a .onnx, .onnxtext or .mlir file";
  return nullptr;
}

/// Lowers a copy of the optimized module to exec and plans it at
/// T = --max-batch-tokens; the copy holds the planned exec.program.
FailureOr<OwningOpRef<ModuleOp>> lowerToExec(ModuleOp module, const Options &options) {
  OwningOpRef<ModuleOp> lowered = module.clone();
  PassManager pm(module.getContext());
  infer::pipeline::buildExecPipeline(pm, options.maxBatchTokens, options.dtype, options.fusions);
  if (failed(pm.run(*lowered)))
    return failure();
  return lowered;
}

/// The planned `step` program (docs/kv-cache.md) in a lowered copy of the
/// module, or null with a note on stderr when the step transform rejects the
/// model: the artifact then only has the forward program.
OwningOpRef<ModuleOp> lowerToStep(ModuleOp module, const Options &options,
                                  infer::exec::ProgramOp &step) {
  OwningOpRef<ModuleOp> lowered = module.clone();
  PassManager pm(module.getContext());
  infer::pipeline::buildStepPipeline(pm, options.maxBatchTokens, options.kvBlockSize,
                                     options.maxSeqLen, options.dtype, options.fusions);
  std::string reasons;
  LogicalResult result = success();
  {
    ScopedDiagnosticHandler capture(module.getContext(), [&](Diagnostic &diagnostic) {
      if (diagnostic.getSeverity() == DiagnosticSeverity::Error)
        reasons += (reasons.empty() ? "" : "; ") + diagnostic.str();
      return success();
    });
    result = pm.run(*lowered);
  }
  if (failed(result)) {
    llvm::errs() << "note: no step program (paged KV serving) for this model: " << reasons
                 << "\n";
    return nullptr;
  }
  for (auto candidate : lowered->getOps<infer::exec::ProgramOp>())
    step = candidate;
  return lowered;
}

/// Where the tokenizer files are read from: --tokenizer, else beside the model.
std::string tokenizerDirectory(const Options &options) {
  if (!options.tokenizerDir.empty())
    return options.tokenizerDir;
  return llvm::sys::path::parent_path(options.model).str();
}

/// --group-size as the pipeline takes it (int4's default when not given).
int64_t groupSize(const Options &options) { return options.groupSize ? options.groupSize : 128; }

/// --quantize as the artifact records it and the report names it: "int4 g128
/// rtn", "fp8", or "".
std::string quantizeLabel(const Options &options) {
  std::string label = options.quantize;
  if (options.quantize == "int4")
    label += " g" + std::to_string(groupSize(options)) + " " + options.method;
  if (options.quantizeLmHead)
    label += " lm-head";
  if (options.kvCacheDtype == "fp8")
    label += label.empty() ? "kv fp8" : ", kv fp8";
  return label;
}

/// --kv-cache-dtype fp8 without --calibration: the scales come from random
/// token ids over the vocabulary the logits have.
llvm::Error applyKvCacheScales(ModuleOp module) {
  func::FuncOp entry = infer::pipeline::singleFunction(module);
  auto logits = entry && entry.getNumResults()
                    ? dyn_cast<RankedTensorType>(entry.getResultTypes()[0])
                    : RankedTensorType();
  if (!logits || logits.getRank() < 1 || logits.isDynamicDim(logits.getRank() - 1))
    return llvm::createStringError("--kv-cache-dtype fp8 without --calibration needs logits of a "
                                   "static vocabulary (give --calibration FILE)");
  return infer::pipeline::applyKvCacheScales(
      module, infer::pipeline::randomPrompts(logits.getShape().back(), 4, 64, /*seed=*/0),
      llvm::errs());
}

/// The files this compile reads besides the model's own bytes: -o may not
/// name one of them.
std::vector<std::string> inputFiles(MLIRContext *context, const Options &options) {
  std::vector<std::string> files = infer::graph::weightFiles(context);
  files.push_back(options.model);
  std::string directory = tokenizerDirectory(options);
  for (const char *name : {"tokenizer.json", "tokenizer_config.json", "chat_template.jinja",
                           "generation_config.json"}) {
    llvm::SmallString<256> path(directory.empty() ? "." : directory);
    llvm::sys::path::append(path, name);
    files.push_back(path.str().str());
  }
  if (!options.chatTemplatePath.empty())
    files.push_back(options.chatTemplatePath);
  return files;
}

int writeArtifact(ModuleOp module, const Options &options,
                  const infer::import::ImportStats &stats) {
  // Plan first: a model the exec lowering rejects gets no artifact.
  FailureOr<OwningOpRef<ModuleOp>> lowered = lowerToExec(module, options);
  if (failed(lowered))
    return 1;
  infer::exec::ProgramOp program;
  for (auto candidate : (*lowered)->getOps<infer::exec::ProgramOp>())
    program = candidate;
  std::optional<infer::exec::AffineAttr> arenaSize;
  if (program)
    arenaSize = program.getArena().getSize();
  if (!arenaSize) {
    emitError(module.getLoc()) << "the exec lowering gave no planned program";
    return 1;
  }
  uint64_t activationBytes = static_cast<uint64_t>(arenaSize->at(options.maxBatchTokens));
  uint64_t scratchBytes = 0; // the cuda backend's quantization scratch (below)
  infer::compiler::ArtifactOptions artifactOptions;
  artifactOptions.target =
      options.target == "cpu" ? infer::artifact::TARGET_CPU : infer::artifact::TARGET_CUDA;
  artifactOptions.dtype = options.dtype;
  artifactOptions.quantize = quantizeLabel(options);
  artifactOptions.maxBatchTokens = options.maxBatchTokens;
  artifactOptions.maxSeqLen = options.maxSeqLen;
  artifactOptions.kvBlockSize = options.kvBlockSize;
  artifactOptions.modelName = llvm::sys::path::stem(options.model).str();
  if (llvm::StringRef(artifactOptions.modelName).ends_with(".onnx")) // MODEL.onnx.mlir
    artifactOptions.modelName.resize(artifactOptions.modelName.size() - 5);
  artifactOptions.opset = stats.opsetVersion;
  artifactOptions.inputFiles = inputFiles(module.getContext(), options);
  if (readText(module, options, artifactOptions))
    return 1;
  if (artifactOptions.target == infer::artifact::TARGET_CUDA) {
#ifdef INFER_HAVE_CUDA
    artifactOptions.addTargetCode = [&](infer::artifact::Manifest &manifest) -> LogicalResult {
      auto start = std::chrono::steady_clock::now();
      llvm::errs() << "generating CUDA kernels (NVRTC, sm_90a cubin"
                   << (options.embedPtx ? " + compute_90 PTX" : "") << ")...\n";
      infer::codegen::CudaCodegenOptions codegenOptions;
      codegenOptions.lineInfo = options.cudaLineInfo;
      codegenOptions.embedPtx = options.embedPtx;
      codegenOptions.maxPrograms = options.nvrtcPrograms;
      std::vector<std::string> programTimes;
      codegenOptions.programTimes = &programTimes;
      infer::Status status = infer::codegen::generateCudaModule(manifest, codegenOptions);
      if (!status.ok()) {
        emitError(module.getLoc()) << status.message();
        return failure();
      }
      status = infer::tools::addTuningRecords(manifest, options.tuning);
      if (!status.ok()) {
        emitError(module.getLoc()) << status.message();
        return failure();
      }
      // Quantized GEMMs of large steps run over a dequantized copy of the weight.
      scratchBytes = uint64_t(infer::artifact::quantizationScratchBytes(
          manifest.exec(), manifest.cuda().launches(), options.maxBatchTokens));
      double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      int kernels = 0, gemms = 0;
      for (const auto &launch : manifest.cuda().launches())
        (launch.runner() == infer::artifact::CudaLaunch::CUBLASLT ? gemms : kernels) += 1;
      size_t cubinBytes = manifest.cuda().cubin().size();
      for (const infer::artifact::CudaCubin &extra : manifest.cuda().extra_cubins())
        cubinBytes += extra.cubin().size();
      llvm::errs() << "  " << kernels << " kernel launches, " << gemms << " cuBLASLt GEMMs; cubin "
                   << cubinBytes / 1024 << " KiB from "
                   << 1 + manifest.cuda().extra_cubins_size() << " NVRTC program"
                   << (manifest.cuda().extra_cubins_size() ? "s" : "");
      if (options.embedPtx)
        llvm::errs() << ", PTX " << manifest.cuda().ptx().size() / 1024 << " KiB";
      llvm::errs() << " in " << llvm::format("%.2f", seconds) << " s\n";
      // Where a first compile's NVRTC time goes: the longest program.
      llvm::errs() << "  NVRTC programs, longest first:";
      for (size_t i = 0; i < programTimes.size(); ++i)
        llvm::errs() << (i ? "; " : " ") << programTimes[i];
      llvm::errs() << "\n";
      return success();
    };
#else
    emitError(module.getLoc()) << "this infer-compile was built without the CUDA toolkit, so it "
                                  "cannot generate GPU code; use --target cpu";
    return 1;
#endif
  } else {
    artifactOptions.addTargetCode = [&](infer::artifact::Manifest &manifest) {
      return infer::compiler::checkCpuTargetSupport(module.getLoc(), manifest);
    };
  }
  OwningOpRef<ModuleOp> stepModule = lowerToStep(module, options, artifactOptions.stepProgram);
  auto summary =
      infer::compiler::writeArtifact(module, options.outputPath, artifactOptions, program);
  if (failed(summary))
    return 1;
  llvm::outs() << "wrote " << options.outputPath << ": " << summary->numWeights << " weights, "
               << llvm::format("%.1f", summary->fileSize / 1e6) << " MB (weights: "
               << summary->weightBytes << " bytes)\n";
  llvm::outs() << "this artifact needs "
               << llvm::format("%.2f",
                               (summary->weightBytes + activationBytes + scratchBytes) / 1e9)
               << " GB on the device at the bounds you gave (weights "
               << llvm::format("%.2f", summary->weightBytes / 1e9) << " GB + activations "
               << llvm::format("%.2f", activationBytes / 1e9) << " GB";
  if (scratchBytes)
    llvm::outs() << " + quantized GEMMs' scratch " << llvm::format("%.2f", scratchBytes / 1e9)
                 << " GB";
  llvm::outs() << " at " << options.maxBatchTokens << " batch tokens)\n";
  return 0;
}

/// --calibration: optimizes `module` (quantize stage included), printing
/// what the quantize stage costs on the prompts; 1 past --accuracy-gate.
int reportQuantization(ModuleOp module, const Options &options,
                       const infer::pipeline::PipelineOptions &pipelineOptions) {
  auto prompts =
      infer::tools::readCalibrationPrompts(options.calibration, tokenizerDirectory(options));
  if (!prompts) {
    llvm::errs() << "error: " << llvm::toString(prompts.takeError()) << "\n";
    return 1;
  }
  // After the quantize stage: AWQ's scales, then the KV cache's (measured on
  // the model as quantized).
  auto refine = [&](ModuleOp quantized) -> llvm::Error {
    if (options.method == "awq")
      if (llvm::Error error = infer::pipeline::applyAwq(quantized, *prompts, llvm::errs()))
        return error;
    if (options.kvCacheDtype == "fp8")
      return infer::pipeline::applyKvCacheScales(quantized, *prompts, llvm::errs());
    return llvm::Error::success();
  };
  auto accuracy = infer::pipeline::measureQuantization(
      module, infer::pipeline::optimizationStages(pipelineOptions), *prompts, refine);
  if (!accuracy) {
    llvm::errs() << "error: --calibration: " << llvm::toString(accuracy.takeError()) << "\n";
    return 1;
  }
  std::string scheme = quantizeLabel(options);
  llvm::errs() << llvm::format(
      "quantization (%s) on %lld calibration prompts, %lld positions: top-1 agreement %.2f%%, "
      "mean KL %.4g nats, perplexity %.3f -> %.3f (%+.2f%%)\n",
      scheme.c_str(), (long long)accuracy->prompts, (long long)accuracy->positions,
      100 * accuracy->top1Agreement, accuracy->meanKl, accuracy->perplexity,
      accuracy->quantizedPerplexity,
      100 * (accuracy->quantizedPerplexity / accuracy->perplexity - 1));
  if (options.accuracyGate > 0 && !(accuracy->meanKl <= options.accuracyGate)) {
    llvm::errs() << llvm::format("error: --accuracy-gate %g: the quantized model's mean KL %.4g "
                                 "nats exceeds it\n",
                                 options.accuracyGate, accuracy->meanKl);
    return 1;
  }
  return 0;
}

int run(const Options &options) {
  // One thread: the program has one or two functions, so the pass manager's
  // thread pool buys nothing, and other threads' allocations in this process
  // made NVRTC's output for one function differ now and then (a few
  // instructions of infer_gemv<__half> in fp16 artifacts; never in a fresh
  // single-threaded process), which broke artifact.determinism.
  MLIRContext context(MLIRContext::Threading::DISABLED);
  infer::tools::CommandLineDiagnostics diagnostics(context);

  // Before the work: -o may not replace a device or the model itself (the
  // writer checks again with every file the compile read).
  if (!options.outputPath.empty() &&
      failed(infer::compiler::checkOutputPath(FileLineColLoc::get(&context, options.model, 0, 0),
                                              options.outputPath, {options.model})))
    return 1;
  infer::import::ImportStats stats;
  OwningOpRef<ModuleOp> module = loadModel(context, options, &stats);
  if (!module) {
    if (options.check)
      llvm::errs() << options.model << ": not supported (see the errors above)\n";
    return 1;
  }
  if (failed(verify(*module)))
    return 1;

  if (options.check) {
    llvm::outs() << options.model << ": supported";
    if (stats.nodes)
      llvm::outs() << " (" << stats.nodes << " nodes, opset " << stats.opsetVersion << ", "
                   << stats.initializers << " initializers)";
    llvm::outs() << "\n";
    return 0;
  }
  if (options.referenceRun) {
    if (llvm::Error error = infer::tools::referenceRun(*module, options.inputs, options.outputs)) {
      llvm::errs() << "error: " << llvm::toString(std::move(error)) << "\n";
      return 1;
    }
    return 0;
  }
  infer::pipeline::PipelineOptions pipelineOptions;
  pipelineOptions.testBreakNumerics = options.testBreakNumerics;
  pipelineOptions.quantize = options.quantize;
  pipelineOptions.kvCacheFp8 = options.kvCacheDtype == "fp8";
  pipelineOptions.groupSize = groupSize(options);
  pipelineOptions.quantizeLmHead = options.quantizeLmHead;
  if (options.verifyNumerics) {
    std::vector<infer::interp::Tensor> inputs;
    if (!options.inputs.empty()) {
      auto given = infer::tools::readInputs(*module, options.inputs);
      if (!given) {
        llvm::errs() << "error: " << llvm::toString(given.takeError()) << "\n";
        return 1;
      }
      inputs = std::move(*given);
    } else {
      auto random = infer::pipeline::randomInputs(*module, options.verifySeed);
      if (!random) {
        llvm::errs() << "error: " << llvm::toString(random.takeError()) << "\n";
        return 1;
      }
      inputs = std::move(*random);
    }
    // The table goes to stderr when stdout carries the IR.
    llvm::raw_ostream &table = options.emit.empty() ? llvm::outs() : llvm::errs();
    auto rows = infer::pipeline::verifyNumerics(
        *module, infer::pipeline::optimizationStages(pipelineOptions), std::move(inputs),
        options.verifyTolerance > 0 ? options.verifyTolerance
                                    : infer::pipeline::defaultTolerance(*module),
        table);
    if (!rows) {
      llvm::errs() << "error: " << llvm::toString(rows.takeError()) << "\n";
      return 1;
    }
  } else if (!options.calibration.empty()) {
    if (int status = reportQuantization(*module, options, pipelineOptions))
      return status;
  } else if (options.emit == "optimized" || options.emit == "exec" || options.emit == "step" ||
             !options.outputPath.empty()) {
    PassManager pm(&context);
    infer::pipeline::buildOptimizationPipeline(pm, pipelineOptions);
    if (failed(pm.run(*module)))
      return 1;
    if (options.kvCacheDtype == "fp8")
      if (llvm::Error error = applyKvCacheScales(*module)) {
        llvm::errs() << "error: " << llvm::toString(std::move(error)) << "\n";
        return 1;
      }
  }
  if (options.emit == "graph" || options.emit == "optimized") {
    if (options.verifyNumerics && options.emit == "graph") {
      llvm::errs() << "error: --verify-numerics optimizes the graph; use --emit=optimized\n";
      return 1;
    }
    module->print(llvm::outs());
    llvm::outs() << "\n";
    return 0;
  }
  if (options.emit == "exec" || options.emit == "step") {
    PassManager pm(&context);
    if (options.emit == "exec")
      infer::pipeline::buildExecPipeline(pm, options.maxBatchTokens, options.dtype,
                                         options.fusions);
    else
      infer::pipeline::buildStepPipeline(pm, options.maxBatchTokens, options.kvBlockSize,
                                         options.maxSeqLen, options.dtype, options.fusions);
    if (failed(pm.run(*module)))
      return 1;
    module->print(llvm::outs());
    llvm::outs() << "\n";
    return 0;
  }
  if (!options.outputPath.empty())
    return writeArtifact(*module, options, stats);
  if (options.verifyNumerics)
    return 0;
  llvm::errs() << "error: nothing to do: give -o MODEL.infer, --emit=graph|optimized|exec, --check, "
                  "--reference-run or --verify-numerics\n";
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"infer-compile: compiles ONNX models exported from PyTorch for LLM inference"};
  app.set_version_flag("--version", std::string("infer-compile ") + INFER_VERSION +
                                        " (MLIR/LLVM " LLVM_VERSION_STRING ")");
  Options options;
  app.add_option("model", options.model, "MODEL.onnx, MODEL.onnxtext (ONNX text syntax) or an .mlir file")
      ->required();
  app.add_option("-o,--output-file", options.outputPath,
                 "write the artifact (MODEL.infer) after the optimization pipeline");
  app.add_option("--target", options.target, "the backend the artifact is for")
      ->check(CLI::IsMember({"cuda", "cpu"}))
      ->capture_default_str();
  app.add_option("--dtype", options.dtype,
                 "store floating-point weights in this type (round to nearest even); "
                 "default: as exported")
      ->check(CLI::IsMember({"fp32", "bf16", "fp16"}));
  app.add_option("--quantize", options.quantize,
                 "quantize the linear layers' weights (not embeddings, MoE experts or, without "
                 "--quantize-lm-head, the LM head): int4 weight-only in groups of --group-size "
                 "along k, or fp8 (E4M3) "
                 "weights and per-token activations (docs/quantization.md)")
      ->check(CLI::IsMember({"int4", "fp8"}));
  app.add_option("--group-size", options.groupSize,
                 "--quantize int4: the k values that share a scale (default 128; even, and "
                 "dividing every quantized linear's k)")
      ->check(CLI::PositiveNumber);
  app.add_option("--method", options.method,
                 "--quantize int4: rtn (round to nearest) or awq (activation-aware scales from "
                 "the --calibration prompts)")
      ->check(CLI::IsMember({"rtn", "awq"}))
      ->capture_default_str();
  app.add_flag("--quantize-lm-head", options.quantizeLmHead,
               "--quantize: the LM head too (left in the activations' type by default: it is "
               "the layer whose rounding moves the logits most)");
  app.add_option("--kv-cache-dtype", options.kvCacheDtype,
                 "the KV cache's element type: auto (the activations') or fp8 (E4M3 with a "
                 "scale per layer for K and for V, from the --calibration prompts or random "
                 "token ids)")
      ->check(CLI::IsMember({"auto", "fp8"}))
      ->capture_default_str();
  app.add_option("--calibration", options.calibration,
                 "--quantize, --kv-cache-dtype fp8: text prompts, one a line (up to 64 of up to "
                 "256 tokens), on which "
                 "the reference interpreter compares the model before and after quantization: "
                 "top-1 agreement, mean KL of the next-token distribution, perplexity");
  app.add_option("--accuracy-gate", options.accuracyGate,
                 "with --calibration: fail the compile when the mean KL exceeds this (nats)")
      ->check(CLI::PositiveNumber);
  app.add_option("--max-batch-tokens", options.maxBatchTokens,
                 "most tokens in one step (recorded for the memory plan)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--max-seq-len", options.maxSeqLen,
                 "longest sequence (the step program's block-table width and context limit)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--kv-block-size", options.kvBlockSize,
                 "tokens per KV-cache block of the step program")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_flag("--cuda-lineinfo", options.cudaLineInfo,
               "compile the GPU code with source line information (for compute-sanitizer and "
               "profiler reports); the artifact then depends on the working directory");
  app.add_flag("--ptx", options.embedPtx,
               "also store the GPU code as compute_90 PTX, which the driver JIT-compiles on GPUs "
               "the sm_90a cubin does not run on (such artifacts are not always byte-identical "
               "across compiles)");
  app.add_flag("--tune", options.tuning.tune,
               "time cuBLASLt's candidate algorithms for every GEMM shape and token bucket on "
               "this machine's GPU and record the fastest in the artifact (the runtime never "
               "times; docs/tuning.md)");
  app.add_option("--tuning-db", options.tuning.database,
                 "a tuning database: --tune reuses its records and adds the new ones; without "
                 "--tune (no GPU needed) the artifact takes every GPU's records it holds for "
                 "the program's shapes");
  app.add_option(
         "--nvrtc-programs", options.nvrtcPrograms,
         "compile the kernels as at most N NVRTC programs side by side (1 is one "
         "program, for comparisons; the cubins, and so the artifact's bytes, differ with N)")
      ->check(CLI::Range(1, 6))
      ->capture_default_str();
  app.add_option("--tokenizer", options.tokenizerDir,
                 "take tokenizer.json, tokenizer_config.json, chat_template.jinja and "
                 "generation_config.json from DIR (default: beside the model, when there)");
  app.add_option("--chat-template", options.chatTemplatePath,
                 "use this Jinja chat template instead of the tokenizer's");
  app.add_flag("--no-tokenizer", options.noTokenizer,
               "store no tokenizer: the artifact takes and gives token ids only");
  app.add_option("--emit", options.emit,
                 "print the IR after this stage to stdout instead of writing an artifact")
      ->check(CLI::IsMember({"graph", "optimized", "exec", "step"}));
  const std::string fusionNames = infer::pipeline::KernelFusions::names();
  app.add_option("--fuse", options.fuse,
                 "turn on kernel fusions that are off by default (comma-separated: " + fusionNames +
                     "; docs/exec.md)")
      ->delimiter(',');
  app.add_option("--no-fuse", options.noFuse,
                 "turn off kernel fusions that are on by default (the names --fuse takes)")
      ->delimiter(',');
  app.add_option("--mma-gemv-min-tokens", options.fusions.mmaGemvMinTokens,
                 "the fewest tokens of a decode step whose GEMMs run the tensor-core GEMV, 0 "
                 "never (exec.gemm's mma_gemv; docs/codegen.md)")
      ->check(CLI::Range(0, infer::kernels::kGemvMmaRows))
      ->capture_default_str();
  app.add_flag("--no-prefill-kernel{false}", options.fusions.prefillKernels,
               "run prefill chunks on the paged attention's one-block-per-token kernel instead "
               "of the tensor-core prefill kernel (exec.kv_attention's prefill_kernel; for "
               "comparisons)");
  app.add_flag("--no-fp8-cache-prefill-kernel{false}", options.fusions.fp8CachePrefill,
               "with --kv-cache-dtype fp8, run prefill chunks on the general paged attention "
               "(infer_kv_attention_fp8) instead of the tensor-core prefill kernel that decodes "
               "the FP8 cache as it loads it (exec.kv_attention's prefill_kernel; for "
               "comparisons)");
  app.add_flag("--no-fp8-mma-gemv{false}", options.fusions.fp8Mma,
               "run fp8 GEMMs' decode steps of up to 8 tokens on the CUDA-core quantized GEMM "
               "instead of the FP8 tensor cores (infer_quantized_gemv_fp8_mma, "
               "exec.quantized_gemm's mma_block_k; for comparisons)");
  app.add_flag("--no-quantized-mma{false}", options.fusions.quantizedMma,
               "run int4 GEMMs' decode steps on the CUDA-core quantized GEMM instead of the "
               "tensor-core int4 GEMV (exec.quantized_gemm's mma_block_k; for comparisons)");
  app.add_flag("--no-fp8-gemm{false}", options.fusions.fp8Gemm,
               "run fp8 GEMMs' steps of more than 8 tokens on a weight dequantized to the "
               "activations' type instead of cuBLASLt's FP8 GEMM (exec.quantized_gemm's "
               "fp8_gemm; for comparisons)");
  app.add_flag("--check", options.check,
               "list every unsupported op or attribute; exit 1 if there is any");
  app.add_flag("--reference-run", options.referenceRun,
               "run the graph on the CPU reference interpreter (f32, i64, bool; bf16/f16 computed in f32 and rounded)");
  app.add_option("--input", options.inputs, "NAME=FILE.npy: a model input for --reference-run");
  app.add_option("--output", options.outputs, "NAME=FILE.npy: where --reference-run writes an output");
  app.add_flag("--verify-numerics", options.verifyNumerics,
               "run the reference interpreter after each optimization stage on the same inputs "
               "(random, or --input) and fail naming the stage that changes the outputs");
  app.add_option("--verify-tolerance", options.verifyTolerance,
                 "largest max-abs error, relative to the largest output magnitude, a stage may "
                 "add (default: 1e-4 for f32 models, 5e-3 for f16, 3e-2 for bf16)");
  app.add_option("--verify-seed", options.verifySeed, "seed of the random inputs")
      ->capture_default_str();
  app.add_flag("--test-break-numerics", options.testBreakNumerics,
               "test only: add a deliberately wrong rewrite to the pipeline")
      ->group("");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &error) {
    return app.exit(error);
  }
  if ((options.check + options.referenceRun + (!options.emit.empty() || options.verifyNumerics)) > 1) {
    llvm::errs() << "error: --check, --reference-run and --emit/--verify-numerics are exclusive\n";
    return 2;
  }
  if ((options.tuning.tune || !options.tuning.database.empty()) &&
      (options.target != "cuda" || options.check || options.referenceRun || !options.emit.empty() ||
       options.verifyNumerics)) {
    llvm::errs() << "error: --tune and --tuning-db record cuBLASLt algorithms in a --target cuda "
                    "artifact; they go with neither --target cpu nor --check, --reference-run, "
                    "--emit or --verify-numerics\n";
    return 2;
  }
  if (infer::Status status = infer::tools::checkTuningPossible(options.tuning); !status.ok()) {
    llvm::errs() << "error: " << status.message() << "\n";
    return 1;
  }
  for (const std::string &name : options.fuse)
    if (std::find(options.noFuse.begin(), options.noFuse.end(), name) != options.noFuse.end()) {
      llvm::errs() << "error: kernel fusion '" << name << "' given to both --fuse and --no-fuse\n";
      return 2;
    }
  for (auto [names, on] : {std::pair{&options.fuse, true}, std::pair{&options.noFuse, false}})
    for (const std::string &name : *names)
      if (!options.fusions.set(name, on)) {
        llvm::errs() << "error: --" << (on ? "" : "no-") << "fuse: unknown kernel fusion '" << name
                     << "' (known: " << infer::pipeline::KernelFusions::names() << ")\n";
        return 2;
      }
  if (options.quantizeLmHead && options.quantize.empty()) {
    llvm::errs() << "error: --quantize-lm-head needs --quantize int4 or fp8\n";
    return 2;
  }
  if (options.groupSize && options.quantize != "int4") {
    llvm::errs() << "error: --group-size applies to --quantize int4 only\n";
    return 2;
  }
  if (options.method == "awq" && (options.quantize != "int4" || options.calibration.empty())) {
    llvm::errs() << "error: --method awq applies to --quantize int4 and needs --calibration FILE "
                    "(the activations it scales by)\n";
    return 2;
  }
  if (!options.calibration.empty() && options.quantize.empty() && options.kvCacheDtype != "fp8") {
    llvm::errs() << "error: --calibration measures --quantize or --kv-cache-dtype fp8; give "
                    "--quantize int4 or fp8, or --kv-cache-dtype fp8\n";
    return 2;
  }
  if (options.accuracyGate > 0 && options.calibration.empty()) {
    llvm::errs()
        << "error: --accuracy-gate needs --calibration FILE (the prompts it measures on)\n";
    return 2;
  }
  if (!options.calibration.empty() &&
      (options.verifyNumerics || options.check || options.referenceRun)) {
    llvm::errs() << "error: --calibration runs with -o or --emit, not --verify-numerics, --check "
                    "or --reference-run\n";
    return 2;
  }
  if (options.noTokenizer && (!options.tokenizerDir.empty() || !options.chatTemplatePath.empty())) {
    llvm::errs() << "error: --no-tokenizer cannot be combined with --tokenizer or --chat-template\n";
    return 2;
  }
  if (!options.outputPath.empty() && (options.check || options.referenceRun || !options.emit.empty())) {
    llvm::errs() << "error: -o writes an artifact; it cannot be combined with --check, "
                    "--reference-run or --emit\n";
    return 2;
  }
  try {
    return run(options);
  } catch (const std::bad_alloc &) {
    // A backstop: sizes a model states are bounded where they are read, and
    // compile-time evaluation is budgeted (docs/trust-model.md).
    llvm::errs() << "error: out of memory compiling '" << options.model << "'\n";
    return 1;
  }
}
