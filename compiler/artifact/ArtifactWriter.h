//===- ArtifactWriter.h - writes model.infer from the optimized graph -*- C++ -*-===//
//
// Plans the weight section of an artifact from the entry function of an
// optimized `graph` module (graph.weight ops, and graph.pack_weights ops as
// the concatenation of their sources, transposed with `transpose`) and writes
// the artifact atomically, streaming weight bytes from the mmap'd sources
// (a transposed weight is assembled in memory, one at a time). See
// docs/artifact-format.md.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_COMPILER_ARTIFACT_ARTIFACTWRITER_H
#define INFER_COMPILER_ARTIFACT_ARTIFACTWRITER_H

#include "dialects/exec/IR/ExecOps.h"
#include "runtime/artifact/artifact.pb.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace infer::compiler {

/// What the manifest records besides the graph itself.
struct ArtifactOptions {
  artifact::Target target = artifact::TARGET_CUDA;
  /// "fp32", "bf16" or "fp16": floating-point weights are converted to it
  /// (round to nearest even); "" keeps every weight's exported type.
  std::string dtype;
  /// --quantize as given, e.g. "int4 g128 awq" ("" without).
  std::string quantize;
  int64_t maxBatchTokens = 0;
  int64_t maxSeqLen = 0;
  int64_t kvBlockSize = 0;
  /// The model's name (the input file's stem; never a full path).
  std::string modelName;
  /// The source model's ONNX opset (0 when unknown).
  int64_t opset = 0;
  /// Adds the target's code to the finished manifest (target cuda: the
  /// NVRTC-compiled kernels); failure means no artifact is written.
  std::function<mlir::LogicalResult(artifact::Manifest &)> addTargetCode;
  /// The planned `step` program (--infer-step-entry), stored as
  /// Manifest.step with its KvCacheLayout; null: none.
  infer::exec::ProgramOp stepProgram;
  /// The tokenizer and chat template (compiler/text/TextFiles.h); unset:
  /// the artifact has none and works with token ids only.
  std::optional<artifact::TextInfo> text;
  /// Every file the compile read (model, external data, tokenizer files):
  /// the output path may not be one of them (OutputFile.h).
  std::vector<std::string> inputFiles;
};

/// One entry of the weight section and the ops its bytes come from.
struct PlannedWeight {
  artifact::Weight entry;
  /// The graph.weight or graph.pack_weights op this entry stores.
  mlir::Operation *op = nullptr;
  /// The graph.weight ops whose data is concatenated (one unless packed).
  llvm::SmallVector<mlir::Operation *> sources;
  int64_t packAxis = 0;
  /// Stored as the transpose of the (rank-2) concatenation: entry.shape() is
  /// [n, k] (graph.pack_weights `transpose`).
  bool transposed = false;
  /// `op` is a graph.quantize_weight and this entry its q, or its scales
  /// (compiler/artifact/QuantizedWeights.h makes the bytes).
  bool quantized = false, quantizedScales = false;
};

/// The weight section of one entry function.
struct WeightPlan {
  std::vector<PlannedWeight> weights;
  /// The weight entry each graph.weight / graph.pack_weights result is stored
  /// as (the exec lowering refers to weights through this). A graph.weight
  /// used only by pack_weights has no entry of its own.
  llvm::DenseMap<mlir::Value, size_t> indexOf;
  /// Bytes of the weight section, a multiple of the weight alignment.
  uint64_t sectionSize = 0;
  /// Sum of the weights' sizes (no padding).
  uint64_t weightBytes = 0;
};

/// The module's entry function (its only public func.func), or an error.
mlir::FailureOr<mlir::func::FuncOp> findEntryFunction(mlir::ModuleOp module);

/// Plans the weight section of `entry` in program order; fails (with a
/// diagnostic at the op) on a pack_weights operand that is not a graph.weight,
/// an element type the artifact cannot store, or a weight whose data does not
/// match its type.
mlir::FailureOr<WeightPlan> planWeights(mlir::func::FuncOp entry, const ArtifactOptions &options);

/// Serializes a planned `exec.program` (every buffer has an offset, the arena
/// a size) into `out`: buffers, constants and launches numbered in program
/// order, `exec.weight`s resolved by name to their index in `weights` (the
/// manifest's table). Fails with a diagnostic on an unplanned program, a
/// weight the table lacks or whose shape differs, or a type the artifact
/// cannot store.
mlir::LogicalResult serializeExecProgram(infer::exec::ProgramOp program,
                                         const std::vector<PlannedWeight> &weights,
                                         artifact::ExecProgram &out);

/// The KV cache layout of a planned step program: one layer per
/// exec.kv_attention (all of the same KV heads and head size), in the element
/// type of its K/V input, B = ceil(maxSeqLen / block_size).
mlir::LogicalResult describeKvCache(infer::exec::ProgramOp step, int64_t maxSeqLen,
                                    artifact::KvCacheLayout &out);

/// Sizes of a written artifact.
struct ArtifactSummary {
  size_t numWeights = 0;
  uint64_t weightBytes = 0;
  uint64_t fileSize = 0;
};

/// Writes the artifact of `module` to `path` through a temporary file in the
/// same directory renamed into place, so `path` is either the complete
/// artifact or untouched (also when SIGINT/SIGTERM ends the compile: the
/// temporary file is removed). `path` must not be a device or other
/// non-regular file, nor one of options.inputFiles. Errors are reported as
/// diagnostics. With a planned
/// `program` (the exec lowering of `module`'s entry), the manifest carries it
/// as `exec`; without, the artifact can be inspected but not run.
mlir::FailureOr<ArtifactSummary> writeArtifact(mlir::ModuleOp module, llvm::StringRef path,
                                               const ArtifactOptions &options,
                                               infer::exec::ProgramOp program = {});

} // namespace infer::compiler

#endif // INFER_COMPILER_ARTIFACT_ARTIFACTWRITER_H
