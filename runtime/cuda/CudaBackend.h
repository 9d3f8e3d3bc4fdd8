//===- CudaBackend.h - runs an artifact's exec program on an NVIDIA GPU -*- C++ -*-===//
//
// create(): loads the driver and cuBLASLt (CudaApi.h), uploads the weight
// section in one allocation and the constants, loads the artifact's cubin
// (its PTX on GPUs the cubin is not for) and resolves every launch's kernel,
// and allocates the arena once at the artifact's token bound. forward():
// checks the inputs (ids against the vocabulary on the host), copies them
// into their buffers, enqueues every launch on one stream (generated kernels
// with the geometry the compiler recorded, cuBLASLt for GEMMs), and copies
// the outputs back as float32. Every driver and cuBLASLt call is checked.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_CUDA_CUDABACKEND_H
#define INFER_RUNTIME_CUDA_CUDABACKEND_H

#include "runtime/artifact/ArtifactReader.h"
#include "runtime/cuda/CudaApi.h"
#include "runtime/cuda/FoldedLaunches.h"
#include "runtime/cuda/KernelParamsPacking.h"
#include "runtime/cuda/RuntimeOptions.h"
#include "runtime/cuda/abi/KernelParams.h"
#include "runtime/exec/Backend.h"
#include "runtime/exec/LaunchArgs.h"
#include "runtime/exec/ProgramIO.h"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace infer::cuda {

class GemmRunner;

struct LoadReport {
  std::string deviceName;
  uint64_t weightBytes = 0, arenaBytes = 0;
  bool usedPtx = false; ///< the cubin was not for this GPU; the driver JIT-compiled the PTX
  int tuningRecords = 0; ///< the artifact's GEMM tuning records for this GPU
  /// Wall seconds of load(): the context and stream; reading the weights and
  /// copying them to the device; the kernels' modules and functions; the rest
  /// (constants, arena, cuBLASLt, workspaces).
  double contextSeconds = 0, weightSeconds = 0, kernelSeconds = 0, restSeconds = 0;
};

/// Milliseconds of GPU time per launch kind (from events around each launch).
using KindTimes = std::map<std::string, double>;

class CudaBackend : public Backend {
public:
  /// `reader` must outlive the backend.
  static StatusOr<std::unique_ptr<CudaBackend>> create(const artifact::ArtifactReader &reader);
  ~CudaBackend() override;

  StatusOr<std::vector<NamedArray>> forward(const std::vector<NamedArray> &inputs) override;

  /// GPU milliseconds per forward over `inputs` (uploaded once), the mean of
  /// `iterations` after `warmup` runs; with `perKind`, also one profiled run
  /// split by launch kind.
  StatusOr<double> timeForward(const std::vector<NamedArray> &inputs, int warmup, int iterations,
                               KindTimes *perKind = nullptr);
  /// The same with the launches enqueued one by one instead of replaying a CUDA graph.
  StatusOr<double> timeForwardWithoutGraph(const std::vector<NamedArray> &inputs, int iterations);

  const LoadReport &loadReport() const { return report_; }
  std::vector<std::pair<std::string, double>> loadPhases() const override;

  bool hasStep() const override;
  uint64_t kvCacheBudgetBytes() override;
  /// Blocks in the KV cache's element type within kvCacheBudgetBytes().
  KvCacheCapacity kvCacheCapacity() override;
  Status allocateKvCache(int64_t numBlocks) override;
  StatusOr<std::vector<float>> step(const StepArrays &arrays, int64_t &vocab) override;
  bool samplesOnDevice() const override;
  StatusOr<std::vector<int32_t>> stepAndSample(const StepArrays &arrays,
                                               const std::vector<RowSampling> &sampling) override;
  bool queuesSteps() const override { return samplesOnDevice(); }
  StatusOr<uint64_t> enqueueStep(const StepArrays &arrays, const std::vector<RowSampling> &sampling,
                                 bool tokensFromPrevious) override;
  StatusOr<std::vector<int32_t>> waitStep(uint64_t ticket) override;

private:
  explicit CudaBackend(const artifact::ArtifactReader &reader);
  Status load();
  /// Reads the weight section (pread) and copies it to weights_.
  Status uploadWeightSection(uint64_t section);
  /// Checks and uploads the inputs; returns the step's sizes.
  StatusOr<exec::BoundInputs> upload(const std::vector<NamedArray> &inputs);
  /// Enqueues every launch for a step of `batch` x `seq` tokens.
  Status enqueue(const exec::BoundInputs &step, KindTimes *perKind = nullptr);
  /// A program with its GPU code resolved (the forward and the step program).
  struct LoadedProgram {
    const artifact::ExecProgram *program = nullptr;
    const google::protobuf::RepeatedPtrField<artifact::CudaLaunch> *launches = nullptr;
    /// Per launch (null: none / cuBLASLt).
    std::vector<CUfunction> functions, prologues, prefills, gemvs, gemvRows, gemvMultiRows,
        gemvMmas, fusedPrologues, decodes, qkvDecodes, dequantizes, roundInputs, fp8Inputs;
    /// Which launches another launch's kernels may do (FoldedLaunches.h).
    FoldedLaunches folded;
    /// Per launch: its CudaLaunch.stages' kernels, in order.
    std::vector<std::vector<CUfunction>> stages;
    CUdeviceptr arena = 0;
    /// QUANTIZED_GEMM steps of more than max_rows tokens (CudaLaunch.dequantize):
    /// the largest dequantized weight, then (fp8) its rounded inputs at the
    /// program's bound of tokens (CudaLaunch.fp8_gemm: the E4M3 inputs and
    /// their scales); allocated with the arena.
    CUdeviceptr quantScratch = 0;
    /// Per buffer id: where an input buffer is read from instead of the
    /// arena (the step's one-copy staging area), or 0.
    std::vector<CUdeviceptr> redirected;
  };
  Status resolveFunctions(LoadedProgram &loaded, std::map<std::string, CUfunction> &byName);
  /// The kernel `name` from whichever loaded module holds it.
  StatusOr<CUfunction> findFunction(const std::string &name) const;
  Status allocateArena(LoadedProgram &loaded);
  Status launch(const LoadedProgram &loaded, int index, const exec::LaunchArgs &args,
                const StepContext *step = nullptr);
  /// A QUANTIZED_GEMM step of more than max_rows tokens: the weight
  /// dequantized into the scratch (fp8: the inputs rounded beside it), then
  /// cuBLASLt.
  Status launchDequantizedGemm(const LoadedProgram &loaded, int index,
                               const exec::LaunchArgs &args);
  /// The same on cuBLASLt's FP8 GEMM (CudaLaunch.fp8_gemm): the inputs
  /// quantized to E4M3 into the scratch, then the GEMM over the stored weight.
  Status launchFp8Gemm(const LoadedProgram &loaded, int index, const exec::LaunchArgs &args);
  /// Enqueues every launch of `loaded` (with events around each, summed by
  /// kind into `perKind`, when given).
  Status launchAll(const LoadedProgram &loaded, const exec::BoundInputs &step,
                   const StepContext *context, KindTimes *perKind);
  /// One of our kernels on `stream_`, programmatically after another of ours
  /// (programmaticNext); marks it as the last launch.
  Status launchOurKernel(CUfunction function, const unsigned (&grid)[3], unsigned blockX,
                         unsigned sharedBytes, void **kernelArgs);
  Status launchKernel(const artifact::CudaLaunch &cuda, CUfunction function,
                      const exec::LaunchArgs &args, const PackedParams &params);
  /// Whether the next kernel is launched programmatically (the step's launches
  /// are, programmaticStep_, and its predecessor is one of our kernels).
  bool programmaticNext() const { return programmaticStep_ && lastLaunchWasKernel_; }
  /// Whether launch `index` (a KV_ATTENTION) runs the rotary before it inside
  /// its KV write, so that rotary launch is skipped.
  bool fusesRotary(const LoadedProgram &loaded, int index) const {
    return loaded.launches->Get(index).has_fused_prologue() && loaded.fusedPrologues[size_t(index)];
  }
  /// Whether KV_ATTENTION `index` runs as infer_kv_decode in this step (one
  /// new token per sequence, at most kGemvMaxRows of them; CudaLaunch.decode),
  /// so the rotary before it is skipped. Larger decode steps keep the three
  /// kernels: there infer_kv_decode measured slower (64 sequences x 1,024
  /// positions, 128-wide heads: 137 against 94 us; bench/results, session 14).
  bool runsDecode(const LoadedProgram &loaded, int index, const exec::BoundInputs &step) const {
    return step.maxNewTokens == 1 && step.tokens <= kernels::kGemvMaxRows &&
           loaded.launches->Get(index).has_decode() && loaded.decodes[size_t(index)];
  }
  /// Whether GEMM `index` and the KV_ATTENTION that records it as its
  /// qkv_gemm_launch run as one infer_qkv_decode in this step
  /// (CudaLaunch.qkv_decode; batch-1 decode, the GEMM on its single-row GEMV
  /// and the attention on infer_kv_decode).
  bool runsQkvDecode(const LoadedProgram &loaded, int index,
                     const exec::BoundInputs &step) const;
  /// Whether this step may run infer_qkv_decode at all (batch 1, contexts of
  /// at most kQkvDecodeMaxContext, an exchange).
  bool qkvDecodeStep(const exec::BoundInputs &step) const {
    return qkvExchange_ && stepSerialDevice_ && shortContextStep_ && step.tokens == 1;
  }
  /// The next step's serial: its low byte (the tags' serial byte) differs
  /// from the last infer_qkv_decode step's, whose words the exchange may
  /// still hold (CudaQkvDecode.cpp).
  void advanceStepSerial();
  /// Launches infer_qkv_decode for GEMM `index` (CudaQkvDecode.cpp); false in
  /// `fused` when the operands do not fit it (then nothing was launched).
  Status launchQkvDecode(const LoadedProgram &loaded, int index, const exec::BoundInputs &step,
                         const StepContext *context, bool &fused);
  /// Allocates infer_qkv_decode's exchange for the step program's widest
  /// qkv GEMM (none without a qkv_decode record).
  Status allocateQkvExchange();
  /// Runs a whole step: the second time a [batch, seq] shape comes (GEMMs are
  /// tuned by then, and tuning synchronizes), the launches are captured into a
  /// CUDA graph that every later step of that shape replays in one call.
  Status run(const exec::BoundInputs &step);
  StatusOr<double> timeSteps(const exec::BoundInputs &step, int iterations, bool graphs);
  exec::LaunchArgs resolve(const LoadedProgram &loaded, int index,
                           const exec::BoundInputs &step) const;
  exec::View bufferView(const LoadedProgram &loaded, uint32_t id,
                        const exec::BoundInputs &step) const;
  /// The input buffer of launch `index` when it is a gather the IR marks
  /// `elidable` (no later launch writes over its input) and this step's
  /// logit rows are its rows in order (every sequence one token, each a logit
  /// row: a decode step), so that its readers may read the input instead;
  /// none otherwise.
  std::optional<uint32_t> identityGatherSource(const LoadedProgram &loaded, int index,
                                               const exec::BoundInputs &step) const;
  /// Whether launch `index` is skipped in this step because the kernels of
  /// the launch that folds it (FoldedLaunches) do its work.
  bool runByAnother(const LoadedProgram &loaded, int index, const exec::BoundInputs &step) const;

  // The step program (CudaStep.cpp).
  /// Checks `arrays`, pads a decode step to its CUDA-graph bucket, uploads
  /// the metadata (and the sampling rows) in one copy, and runs the step
  /// (and the sampler); `sizes` gets the padded step's sizes.
  /// With `tokensFromPrevious`, the step's token ids are the last enqueued
  /// step's sampled tokens, taken on the device (enqueueStep): by the
  /// embedding with streamedUpload_, else copied over the staged ones.
  Status runStep(const StepArrays &arrays, const std::vector<RowSampling> *sampling,
                 bool tokensFromPrevious, exec::BoundInputs &sizes);
  Status checkStep(const StepArrays &arrays) const;
  Status enqueueStep(const exec::BoundInputs &sizes, bool sample, KindTimes *perKind = nullptr);
  Status allocateStepStaging();
  /// The step's logits output: [R, vocab] (or [T, vocab] without a gather).
  StatusOr<exec::View> stepLogits(const exec::BoundInputs &sizes, int64_t &vocab) const;

  const artifact::ArtifactReader &reader_;
  LoadedProgram forward_, step_;
  StepContext stepContext_;          ///< the KV cache and per-step sizes
  std::vector<CUdeviceptr> kvLayers_; ///< one allocation per layer
  int64_t kvNumBlocks_ = 0;
  const artifact::ExecProgram *program_ = nullptr; ///< = forward_.program
  const artifact::CudaModule *module_ = nullptr;
  const CudaApi *api_ = nullptr;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr;
  std::vector<CUmodule> cuModules_; ///< one per NVRTC program (CudaModule.extra_cubins)
  /// Kernel name -> index in cuModules_ for those the extra cubins list (the
  /// rest are in the first).
  std::map<std::string, size_t> moduleOfFunction_;
  CUdeviceptr weights_ = 0;
  std::vector<CUdeviceptr> constants_;
  std::vector<exec::View> weightViews_, constantViews_;
  /// The last uploaded ids per program input: the planner reuses an input's
  /// arena slot once it is read, so every enqueue copies them in again.
  std::vector<CUdeviceptr> inputStaging_;
  std::vector<size_t> inputBytes_;
  struct Captured {
    int runs = 0;
    CUgraph graph = nullptr;
    CUgraphExec exec = nullptr;
  };
  std::map<std::pair<int64_t, int64_t>, Captured> graphs_; ///< by (batch, seq)
  /// Replays `captured`, or runs `enqueue` (the first time: GEMM tuning
  /// synchronizes) or captures it into the graph (the second time) and
  /// launches that. Forwards and decode buckets share it.
  Status replayOrCapture(Captured &captured, const std::function<Status()> &enqueue);
  void release(Captured &captured);
  /// Decode steps padded to a bucket of sequences, by (bucket, device
  /// sampling, whether it may run infer_qkv_decode: qkvDecodeStep, the
  /// staging area when the upload runs on uploadStream_ or else 0).
  std::map<std::tuple<int64_t, bool, bool, size_t>, Captured> stepGraphs_;
  /// Every other step (prefill chunks, mixed steps) by its sizes (tokens,
  /// sequences, most new tokens of one, logit rows), device sampling and
  /// staging area as above: a shape that comes again (prompts of one length,
  /// a long prompt's full chunks) replays what its second run captured,
  /// instead of ~10 host launches a layer. Only steps of at most
  /// kPrefillGraphMaxTokens tokens: the capture holds the GPU back while the
  /// host records and instantiates (~3 ms more for that step, TinyLlama),
  /// and on longer steps the kernels outlast the host's launches anyway
  /// (2,048 tokens: ~8.5 ms of kernels), so it would not pay back. The
  /// kPrefillGraphs most recently used are kept (INFER_PREFILL_GRAPHS=0:
  /// none).
  static constexpr int64_t kPrefillGraphMaxTokens = 512;
  using PrefillShape = std::tuple<int64_t, int64_t, int64_t, int64_t, bool, size_t>;
  struct PrefillGraph {
    Captured captured;
    uint64_t lastUse = 0;
  };
  static constexpr size_t kPrefillGraphs = 32;
  std::map<PrefillShape, PrefillGraph> prefillGraphs_;
  uint64_t prefillGraphUses_ = 0;
  /// The entry of this step's shape, the least recently used one released
  /// to make room for it.
  Captured &prefillGraph(const exec::BoundInputs &sizes, bool sample);
  /// Releases every captured step (they point at the KV cache).
  void releaseStepGraphs();
  /// The step's inputs and sampling rows: pinned host memory and its device
  /// copy, uploaded in one cuMemcpyHtoDAsync per step. Two host areas, one
  /// per outstanding step (enqueueStep): an enqueued copy reads its area when
  /// the stream reaches it.
  unsigned char *stagingHost_[2] = {};
  CUdeviceptr staging_ = 0;  ///< two areas of stagingBytes_ (area 1 only with uploadStream_)
  size_t stagingBytes_ = 0;
  CUdeviceptr samplingRows_[4] = {}; ///< temperature, top-k, top-p, uniform (this step)
  CUdeviceptr sampledTokens_ = 0;     ///< int32 per logit row
  /// Where this step's token ids are in the staging area (int64 each).
  CUdeviceptr stagedTokenIds_ = 0;
  /// With an embedding that feeds a step ahead's tokens
  /// (CudaModule.embedding_feeds_tokens; INFER_UPLOAD_STREAM=0: not used),
  /// nothing but the step's graph runs in `stream_`: the upload goes to one
  /// of two device staging areas on uploadStream_ (while the step before
  /// runs), the embedding feeds the tokens, and infer_sample writes them to
  /// the mapped token buffers (no copy back). Else cuMemcpy on `stream_`.
  bool embeddingFeedsTokens_ = false;
  CUstream uploadStream_ = nullptr;
  CUevent uploaded_[2] = {};               ///< after each area's upload
  CUdeviceptr sampledTokensHostMapped_[2] = {};
  /// This step: its host (and, uploaded on uploadStream_, device) area =
  /// ticket % 2, and whether it is (embeddingFeedsTokens_ and device sampling).
  size_t stepArea_ = 0;
  bool streamedUpload_ = false;
  /// Per outstanding step (ticket % 2): its tokens copied back, the event
  /// after that copy, and its logit rows.
  int32_t *sampledTokensHost_[2] = {};
  CUevent sampledReady_[2] = {};
  size_t ticketRows_[2] = {};
  uint64_t enqueuedSteps_ = 0, waitedSteps_ = 0; ///< tickets given and waited for
  /// Logit rows the last enqueued step samples into sampledTokens_ (0 after
  /// a step without the sampler): what tokensFromPrevious may take.
  size_t lastSampledRows_ = 0;
  CUfunction sampleFunction_ = nullptr;
  int64_t stepCalls_ = 0;
  /// The INFER_* switches, read when the artifact is loaded (RuntimeOptions.h).
  RuntimeOptions options_;
  /// While launchAll runs a step whose gather is elided: the gather's output
  /// buffer, which bufferView gives as its input buffer (gatherSource_).
  int64_t elidedGatherOutput_ = -1;
  uint32_t gatherSource_ = 0;
  /// GemvParams::argmax / SampleParams::argmax of one-logit-row steps (one
  /// word, 0 between steps: the sampler sets it back).
  CUdeviceptr argmaxSlot_ = 0;
  /// Whether the step being enqueued samples one row on the device, so its
  /// LM head may fold the argmax (set by enqueueStep), and whether it did.
  bool argmaxWanted_ = false, argmaxFolded_ = false;
  CUdeviceptr qkvExchange_ = 0;     ///< infer_qkv_decode's tagged GEMV outputs
  uint64_t stepSerial_ = 0;         ///< QkvDecodeParams::stepSerial's value this step
  /// The serial of the last step that ran infer_qkv_decode (0: none; the
  /// exchange's zero words carry its low byte).
  uint64_t lastQkvDecodeSerial_ = 0;
  CUdeviceptr stepSerialDevice_ = 0; ///< where this step's staging holds it
  unsigned qkvDecodeLaunches_ = 0;  ///< infer_qkv_decode launches so far this step
  /// Whether no sequence of this step is longer than kQkvDecodeMaxContext
  /// (infer_qkv_decode's limit).
  bool shortContextStep_ = false;
  /// The shared-memory carveout (percent of the most an SM offers) every one
  /// of our kernels asks for: one value for all, so that the next kernel's
  /// blocks may become resident beside the previous kernel's (an SM runs
  /// blocks of one carveout at a time, so under the driver's per-kernel
  /// default a programmatic launch waited for whole SMs to drain).
  /// (options_.sharedCarveout, INFER_SMEM_CARVEOUT: 100 by default; -1
  /// leaves each kernel the driver's choice.) Which steps launch a kernel
  /// that follows one of ours with programmatic stream serialization is
  /// options_.programmaticLaunch (docs/codegen.md, "Launch overlap").
  /// Whether the launches of the step being enqueued are programmatic.
  bool programmaticStep_ = false;
  /// Whether the last operation enqueued by launchAll was one of our kernels
  /// (the only predecessor a programmatic launch may overlap).
  bool lastLaunchWasKernel_ = false;
  /// The GEMV kernels' shared split-k workspace and tile counters (zeroed once;
  /// every launch leaves them zeroed).
  CUdeviceptr gemvWorkspace_ = 0, gemvCounters_ = 0;
  /// The split-KV decode attention's partials and counters (same contract).
  CUdeviceptr kvDecodeWorkspace_ = 0, kvDecodeCounters_ = 0;
  Status allocateGemvWorkspace();
  /// The small-T kernel GEMM launch `index` runs as at this T, or null for
  /// cuBLASLt: infer_gemv_rows at T = 1 (gemv_single_row),
  /// infer_gemv_rows_mma at its min_rows .. max_rows (gemv_mma),
  /// infer_gemv_rows at 2 .. kGemvRowsMultiRowsRun (gemv_multi_row), else
  /// infer_gemv up to kGemvMaxRows; its function goes to `function` when
  /// given.
  const artifact::CudaLaunch *gemvFor(const LoadedProgram &loaded, int index, int64_t tokens,
                                      CUfunction *function = nullptr) const;
  /// Whether GEMM `index` at this T writes the gated activation after it
  /// itself (CudaLaunch.fuses_next), so that launch is skipped: only when the
  /// GEMM after the activation does not fold it as well (a row GEMV that did
  /// not load leaves the next GEMM on its infer_gemv record, which may).
  bool foldsNextActivation(const LoadedProgram &loaded, int index, int64_t tokens) const;
  std::unique_ptr<GemmRunner> gemm_;
  LoadReport report_;
};

} // namespace infer::cuda

#endif // INFER_RUNTIME_CUDA_CUDABACKEND_H
