//===- CudaStep.cpp - the step program (paged KV cache) on the GPU --------===//
//
// The cuda backend's half of docs/kv-cache.md "The step program": one cache
// allocation per layer ([num_blocks, 2, block_size, kv_heads, head_dim] of
// the activation type), the step arena allocated on the first step at the
// program's token bound. Per step: the host checks every index the device
// will use; a decode step (one new token per sequence) is padded to a bucket
// of sequences so that its launches can be captured once into a CUDA graph
// and replayed; the metadata arrays (and the sampling rows) are packed into
// pinned memory and uploaded in one copy, the program's input buffers read
// from that staging area; then either the device sampler turns the logit
// rows into token ids (only those come back) or the logit rows come back.
// With the device sampler, steps are enqueued (enqueueStep) and waited for
// (waitStep) apart, two at most, so a decode step can be enqueued before the
// tokens of the one before are back (serving/StepRunner.h); its token ids are
// then taken on the device from that step's draws. Where the artifact's
// embedding can take them, the upload runs on a second stream into one of two
// device areas and the tokens are written to mapped host memory, so nothing
// but the step's graph runs in the step's stream (docs/kv-cache.md).
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/CudaBackend.h"

#include "runtime/artifact/ArtifactFormat.h"
#include "runtime/base/LowPrecision.h"
#include "runtime/cuda/abi/KernelParams.h"
#include "runtime/cuda/abi/KvDecodeGeometry.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace infer::cuda {
namespace art = artifact;

namespace {

/// Decode steps run padded to the smallest of these sequence counts that
/// holds them (one CUDA graph each); larger decode steps run uncaptured.
constexpr int64_t kDecodeBuckets[] = {1,   2,   4,   8,   16,  24,  32,  48,  64, 96,
                                      128, 160, 192, 224, 256, 320, 384, 448, 512};

constexpr size_t kStagingAlignment = 256;

size_t alignUp(size_t value) {
  return (value + kStagingAlignment - 1) / kStagingAlignment * kStagingAlignment;
}

/// The bucket a decode-only step pads to, or 0 (not decode-only, too large).
int64_t decodeBucket(const StepArrays &arrays, int64_t boundTokens) {
  int64_t sequences = static_cast<int64_t>(arrays.contextLens.size());
  if (static_cast<int64_t>(arrays.tokenIds.size()) != sequences ||
      arrays.logitIndices.size() != size_t(sequences))
    return 0;
  for (int64_t bucket : kDecodeBuckets)
    if (bucket >= sequences)
      return bucket <= boundTokens ? bucket : 0;
  return 0;
}

/// Adds `bucket - S` one-token sequences that touch no real KV block: their
/// token writes nowhere (slot -1), their context is the null block's first
/// slot, and their logit row is computed and ignored.
void padDecodeStep(StepArrays &arrays, int64_t bucket, int64_t maxBlocks) {
  int64_t sequences = static_cast<int64_t>(arrays.contextLens.size());
  for (int64_t s = sequences; s < bucket; ++s) {
    arrays.tokenIds.push_back(0);
    arrays.positions.push_back(0);
    arrays.seqStarts.push_back(s + 1);
    arrays.contextLens.push_back(1);
    arrays.slotIds.push_back(-1);
    arrays.logitIndices.push_back(s);
    arrays.blockTables.insert(arrays.blockTables.end(), size_t(maxBlocks), 0);
  }
}

} // namespace

void CudaBackend::releaseStepGraphs() {
  for (auto &entry : stepGraphs_)
    release(entry.second);
  stepGraphs_.clear();
  for (auto &entry : prefillGraphs_)
    release(entry.second.captured);
  prefillGraphs_.clear();
}

CudaBackend::Captured &CudaBackend::prefillGraph(const exec::BoundInputs &sizes, bool sample) {
  PrefillShape shape{sizes.tokens, sizes.sequences, sizes.maxNewTokens, sizes.logitRows, sample,
                     streamedUpload_ ? stepArea_ : 0};
  auto found = prefillGraphs_.find(shape);
  if (found == prefillGraphs_.end()) {
    if (prefillGraphs_.size() >= kPrefillGraphs) {
      auto oldest = std::min_element(prefillGraphs_.begin(), prefillGraphs_.end(),
                                     [](const auto &a, const auto &b) {
                                       return a.second.lastUse < b.second.lastUse;
                                     });
      release(oldest->second.captured);
      prefillGraphs_.erase(oldest);
    }
    found = prefillGraphs_.emplace(shape, PrefillGraph()).first;
  }
  found->second.lastUse = ++prefillGraphUses_;
  return found->second.captured;
}

bool CudaBackend::hasStep() const { return step_.program != nullptr; }

bool CudaBackend::samplesOnDevice() const {
  return sampleFunction_ != nullptr && step_.program && exec::gathersLogitRows(*step_.program);
}

uint64_t CudaBackend::kvCacheBudgetBytes() {
  if (!step_.program || api_->cuCtxSetCurrent(context_) != CUDA_SUCCESS)
    return 0;
  size_t freeBytes = 0, totalBytes = 0;
  if (api_->cuMemGetInfo(&freeBytes, &totalBytes) != CUDA_SUCCESS)
    return 0;
  const art::ExecProgram &program = *step_.program;
  uint64_t arena =
      step_.arena ? 0 : uint64_t(exec::affineAt(program.arena().size(), program.arena().bound_tokens()));
  // Headroom for cuBLASLt, graphs, the staging area and the driver.
  uint64_t reserve = arena + (2ull << 30);
  return freeBytes > reserve ? uint64_t(double(freeBytes - reserve) * 0.9) : 0;
}

Backend::KvCacheCapacity CudaBackend::kvCacheCapacity() {
  KvCacheCapacity capacity;
  if (!step_.program)
    return capacity;
  const art::KvCacheLayout &layout = reader_.manifest().kv_cache();
  capacity.blockBytes = uint64_t(layout.bytes_per_token()) * uint64_t(layout.block_size());
  capacity.availableBytes = kvCacheBudgetBytes();
  capacity.memory = "device";
  return capacity;
}

Status CudaBackend::allocateKvCache(int64_t numBlocks) {
  if (!step_.program)
    return failedPreconditionError(reader_.path() +
                                   ": the artifact has no GPU code for a step program");
  const art::KvCacheLayout &layout = reader_.manifest().kv_cache();
  uint64_t elementBytes = art::elementSize(layout.element_type());
  if (numBlocks < 2 || elementBytes == 0 || layout.num_layers() <= 0)
    return invalidArgumentError("the KV cache needs at least 2 blocks and a known layout");
  INFER_CU_CHECK(*api_, api_->cuCtxSetCurrent(context_));
  INFER_CU_CHECK(*api_, api_->cuStreamSynchronize(stream_));
  for (CUdeviceptr layer : kvLayers_)
    INFER_CU_CHECK(*api_, api_->cuMemFree(layer));
  kvLayers_.clear();
  releaseStepGraphs(); // they point at the old cache
  uint64_t perLayer = uint64_t(numBlocks) * 2 * uint64_t(layout.block_size()) *
                      uint64_t(layout.num_kv_heads()) * uint64_t(layout.head_dim()) * elementBytes;
  size_t freeBytes = 0, totalBytes = 0;
  INFER_CU_CHECK(*api_, api_->cuMemGetInfo(&freeBytes, &totalBytes));
  if (perLayer * uint64_t(layout.num_layers()) > freeBytes)
    return resourceExhaustedError("a KV cache of " + std::to_string(numBlocks) + " blocks needs " +
                                  std::to_string(perLayer * uint64_t(layout.num_layers())) +
                                  " bytes; " + std::to_string(freeBytes) + " are free");
  stepContext_ = StepContext();
  for (int64_t layer = 0; layer < layout.num_layers(); ++layer) {
    CUdeviceptr cache = 0;
    INFER_CU_CHECK(*api_, api_->cuMemAlloc(&cache, perLayer));
    kvLayers_.push_back(cache);
    // Zeroed, so that no read of a slot is ever of uninitialized memory.
    INFER_CU_CHECK(*api_, api_->cuMemsetD8Async(cache, 0, perLayer, stream_));
    stepContext_.kvLayers.push_back(reinterpret_cast<void *>(cache));
  }
  stepContext_.blockSize = layout.block_size();
  stepContext_.kvFp8 = layout.element_type() == art::ELEMENT_TYPE_F8E4M3;
  kvNumBlocks_ = numBlocks;
  if (!kvDecodeWorkspace_) {
    // Split-KV decode partials for the largest step (any layer: one shape).
    const art::ExecProgram &program = *step_.program;
    for (const art::Launch &launch : program.launches()) {
      if (launch.kind() != art::Launch::KV_ATTENTION)
        continue;
      exec::LaunchArgs args;
      args.launch = &launch;
      int64_t heads = args.intAttr("num_heads", 1), kvHeads = args.intAttr("num_kv_heads", 1);
      int64_t bound = program.arena().bound_tokens();
      size_t floats = size_t(kernels::kvDecodeWorkspaceFloats(bound, heads, kvHeads,
                                                              args.intAttr("head_dim", 1)));
      size_t counters = size_t(kernels::kvDecodeCounterCount(bound, heads, kvHeads));
      INFER_CU_CHECK(*api_, api_->cuMemAlloc(&kvDecodeWorkspace_, std::max<size_t>(4 * floats, 16)));
      INFER_CU_CHECK(*api_, api_->cuMemAlloc(&kvDecodeCounters_, std::max<size_t>(4 * counters, 16)));
      INFER_CU_CHECK(*api_, api_->cuMemsetD8Async(kvDecodeWorkspace_, 0,
                                                  std::max<size_t>(4 * floats, 16), stream_));
      INFER_CU_CHECK(*api_, api_->cuMemsetD8Async(kvDecodeCounters_, 0,
                                                  std::max<size_t>(4 * counters, 16), stream_));
      break;
    }
  }
  stepContext_.kvWorkspace = reinterpret_cast<float *>(kvDecodeWorkspace_);
  stepContext_.kvCounters = reinterpret_cast<unsigned int *>(kvDecodeCounters_);
  stepContext_.maxBlocksPerSeq = layout.max_blocks_per_sequence();
  INFER_CU_CHECK(*api_, api_->cuStreamSynchronize(stream_));
  return okStatus();
}

Status CudaBackend::checkStep(const StepArrays &arrays) const {
  if (!step_.program)
    return failedPreconditionError("step: the artifact has no GPU code for a step program");
  if (kvLayers_.empty())
    return failedPreconditionError("step: the KV cache is not allocated");
  const art::ExecProgram &program = *step_.program;
  int64_t tokens = static_cast<int64_t>(arrays.tokenIds.size());
  int64_t sequences = static_cast<int64_t>(arrays.contextLens.size());
  int64_t maxBlocks = stepContext_.maxBlocksPerSeq;
  RETURN_IF_ERROR(exec::checkStepArrays(program, arrays, maxBlocks));
  // Everything the device indexes with is checked here, where a bad value is
  // an error message rather than an out-of-bounds access.
  int64_t slots = kvNumBlocks_ * stepContext_.blockSize;
  for (int64_t slot : arrays.slotIds)
    if (slot >= slots)
      return invalidArgumentError("step: slot " + std::to_string(slot) + " is outside the " +
                                  std::to_string(kvNumBlocks_) + "-block KV cache");
  for (int64_t block : arrays.blockTables)
    if (block < 0 || block >= kvNumBlocks_)
      return invalidArgumentError("step: block " + std::to_string(block) + " is outside the " +
                                  std::to_string(kvNumBlocks_) + "-block KV cache");
  if (arrays.seqStarts.front() != 0 || arrays.seqStarts.back() != tokens)
    return invalidArgumentError("step: seq_starts must run from 0 to the token count");
  for (int64_t s = 0; s < sequences; ++s) {
    int64_t count = arrays.seqStarts[size_t(s + 1)] - arrays.seqStarts[size_t(s)];
    int64_t context = arrays.contextLens[size_t(s)];
    if (count < 0 || context < count || context > maxBlocks * stepContext_.blockSize)
      return invalidArgumentError("step: sequence " + std::to_string(s) + " has " +
                                  std::to_string(count) + " new tokens in a context of " +
                                  std::to_string(context));
  }
  for (int64_t row : arrays.logitIndices)
    if (row < 0 || row >= tokens)
      return invalidArgumentError("step: logit row " + std::to_string(row) + " is not one of the " +
                                  std::to_string(tokens) + " tokens");
  exec::BoundInputs shape = exec::stepSizes(arrays);
  for (int index = 0; index < program.launches_size(); ++index) {
    const art::Launch &launch = program.launches(index);
    if (launch.kind() != art::Launch::EMBEDDING)
      continue;
    exec::LaunchArgs args = resolve(step_, index, shape);
    ASSIGN_OR_RETURN(int64_t hidden, args.intAttr("hidden"));
    int64_t rowsOfTable = hidden > 0 ? args.operand(art::ROLE_TABLE)->elements / hidden : 0;
    for (int64_t id : arrays.tokenIds)
      if (id < 0 || id >= rowsOfTable)
        return invalidArgumentError("token id " + std::to_string(id) +
                                    " is outside the vocabulary [0, " +
                                    std::to_string(rowsOfTable) + ")");
    if (const exec::View *table = args.operand(art::ROLE_POSITION_TABLE)) {
      int64_t positionRows = table->elements / hidden - args.intAttr("position_offset", 0);
      for (int64_t position : arrays.positions)
        if (position < 0 || position >= positionRows)
          return invalidArgumentError("position " + std::to_string(position) +
                                      " is beyond the model's " + std::to_string(positionRows) +
                                      " learned positions");
    }
  }
  return okStatus();
}

Status CudaBackend::allocateStepStaging() {
  const art::ExecProgram &program = *step_.program;
  int64_t bound = program.arena().bound_tokens();
  size_t bytes = 0;
  for (const art::Binding &binding : program.inputs())
    bytes += alignUp(size_t(exec::affineAt(program.buffers(int(binding.buffer())).size(), bound)));
  bytes += 4 * alignUp(size_t(bound) * 4); // the sampling rows: R <= T
  bytes += alignUp(sizeof(stepSerial_));   // QkvDecodeParams::stepSerial
  bytes += alignUp(sizeof(int64_t));       // EmbeddingParams::fedCount
  for (int area = 0; area < 2; ++area) {
    INFER_CU_CHECK(*api_, api_->cuMemHostAlloc(reinterpret_cast<void **>(&stagingHost_[area]),
                                               bytes, 0));
    // Mapped into the device: infer_sample writes the tokens there.
    INFER_CU_CHECK(*api_, api_->cuMemHostAlloc(
                              reinterpret_cast<void **>(&sampledTokensHost_[area]),
                              size_t(bound) * 4, CU_MEMHOSTALLOC_DEVICEMAP));
    INFER_CU_CHECK(*api_, api_->cuMemHostGetDevicePointer(&sampledTokensHostMapped_[area],
                                                          sampledTokensHost_[area], 0));
    INFER_CU_CHECK(*api_, api_->cuEventCreate(&sampledReady_[area], CU_EVENT_DISABLE_TIMING));
    INFER_CU_CHECK(*api_, api_->cuEventCreate(&uploaded_[area], CU_EVENT_DISABLE_TIMING));
  }
  INFER_CU_CHECK(*api_, api_->cuStreamCreate(&uploadStream_, CU_STREAM_NON_BLOCKING));
  INFER_CU_CHECK(*api_, api_->cuMemAlloc(&staging_, 2 * bytes));
  INFER_CU_CHECK(*api_, api_->cuMemAlloc(&sampledTokens_, size_t(bound) * 4));
  // The embedding loads a row of it for every token, fed or not.
  INFER_CU_CHECK(*api_, api_->cuMemsetD8Async(sampledTokens_, 0, size_t(bound) * 4, stream_));
  INFER_CU_CHECK(*api_, api_->cuMemAlloc(&argmaxSlot_, sizeof(unsigned long long)));
  INFER_CU_CHECK(*api_, api_->cuMemsetD8Async(argmaxSlot_, 0, sizeof(unsigned long long), stream_));
  stagingBytes_ = bytes;
  step_.redirected.assign(size_t(program.buffers_size()), 0);
  return okStatus();
}

Status CudaBackend::enqueueStep(const exec::BoundInputs &sizes, bool sample, KindTimes *perKind) {
  argmaxWanted_ = sample && sizes.logitRows == 1;
  argmaxFolded_ = false;
  Status launched = launchAll(step_, sizes, &stepContext_, perKind);
  argmaxWanted_ = false;
  RETURN_IF_ERROR(launched);
  if (!sample)
    return okStatus();
  int64_t vocab = 0;
  ASSIGN_OR_RETURN(exec::View logits, stepLogits(sizes, vocab));
  kernels::SampleParams params{};
  params.logits = logits.data;
  params.rows = sizes.logitRows;
  params.vocab = vocab;
  params.temperature = reinterpret_cast<const float *>(samplingRows_[0]);
  params.topK = reinterpret_cast<const int *>(samplingRows_[1]);
  params.topP = reinterpret_cast<const float *>(samplingRows_[2]);
  params.uniform = reinterpret_cast<const float *>(samplingRows_[3]);
  params.tokens = reinterpret_cast<int *>(sampledTokens_);
  if (streamedUpload_)
    params.hostTokens = reinterpret_cast<int *>(sampledTokensHostMapped_[stepArea_]);
  if (argmaxFolded_)
    params.argmax = reinterpret_cast<unsigned long long *>(argmaxSlot_);
  argmaxFolded_ = false;
  void *kernelArgs[] = {&params};
  // Like the step's other kernels: it may start while the LM head runs.
  const unsigned grid[3] = {unsigned(sizes.logitRows), 1, 1};
  return launchOurKernel(sampleFunction_, grid, module_->sample_block_x(), 0, kernelArgs);
}

StatusOr<exec::View> CudaBackend::stepLogits(const exec::BoundInputs &sizes,
                                             int64_t &vocab) const {
  const art::ExecProgram &program = *step_.program;
  if (program.outputs_size() != 1)
    return failedPreconditionError("step program: expected one output (the logits)");
  exec::View logits = bufferView(step_, program.outputs(0).buffer(), sizes);
  int64_t rows = exec::gathersLogitRows(program) ? sizes.logitRows : sizes.tokens;
  if (rows <= 0 || logits.elements % rows != 0 ||
      (logits.type != art::ELEMENT_TYPE_F32 && logits.type != art::ELEMENT_TYPE_BF16 &&
       logits.type != art::ELEMENT_TYPE_F16))
    return failedPreconditionError("step program: the logits are not [rows, vocab] floats");
  vocab = logits.elements / rows;
  return logits;
}

Status CudaBackend::runStep(const StepArrays &given, const std::vector<RowSampling> *sampling,
                            bool tokensFromPrevious, exec::BoundInputs &sizes) {
  RETURN_IF_ERROR(checkStep(given));
  const art::ExecProgram &program = *step_.program;
  INFER_CU_CHECK(*api_, api_->cuCtxSetCurrent(context_));
  if (!step_.arena)
    RETURN_IF_ERROR(allocateArena(step_));
  if (!staging_) {
    RETURN_IF_ERROR(allocateStepStaging());
  }
  int64_t bucket = options_.graphs ? decodeBucket(given, program.arena().bound_tokens()) : 0;
  StepArrays padded;
  const StepArrays *arrays = &given;
  if (bucket > 0) {
    padded = given;
    padDecodeStep(padded, bucket, stepContext_.maxBlocksPerSeq);
    arrays = &padded;
  }
  sizes = exec::stepSizes(*arrays);
  if (!exec::gathersLogitRows(program))
    sizes.logitRows = sizes.tokens;

  // One staging area, tightly packed for this step's sizes (so a bucket's
  // addresses are the same every time its graph replays); the host side is
  // the area of this step's ticket, and so is the device side when the
  // upload runs on the upload stream (streamedUpload_).
  bool sample = sampling != nullptr;
  stepArea_ = enqueuedSteps_ % 2;
  streamedUpload_ = embeddingFeedsTokens_ && sample;
  unsigned char *host = stagingHost_[stepArea_];
  CUdeviceptr device = staging_ + (streamedUpload_ ? stepArea_ * stagingBytes_ : 0);
  size_t offset = 0;
  auto place = [&](const void *data, size_t bytes) {
    CUdeviceptr at = device + offset;
    std::memcpy(host + offset, data, bytes);
    offset += alignUp(bytes);
    return at;
  };
  // First, the fed token count (EmbeddingParams::fedCount), set below.
  int64_t fedCount = 0;
  place(&fedCount, sizeof(fedCount));
  stagedTokenIds_ = 0;
  for (const art::Binding &binding : program.inputs()) {
    const std::vector<int64_t> *source = exec::stepInput(*arrays, binding.name());
    if (!source)
      return failedPreconditionError("step program input '" + binding.name() +
                                     "' has no metadata array");
    step_.redirected[binding.buffer()] = place(source->data(), sizeof(int64_t) * source->size());
    if (source == &arrays->tokenIds)
      stagedTokenIds_ = step_.redirected[binding.buffer()];
  }
  if (sample) {
    size_t rows = size_t(sizes.logitRows);
    std::vector<float> temperature(rows, 0.0f), topP(rows, 1.0f), uniform(rows, 0.0f);
    std::vector<int32_t> topK(rows, 0);
    for (size_t r = 0; r < sampling->size(); ++r) {
      temperature[r] = float((*sampling)[r].temperature);
      topK[r] = (*sampling)[r].topK;
      topP[r] = float((*sampling)[r].topP);
      uniform[r] = float((*sampling)[r].uniform);
    }
    samplingRows_[0] = place(temperature.data(), 4 * rows);
    samplingRows_[1] = place(topK.data(), 4 * rows);
    samplingRows_[2] = place(topP.data(), 4 * rows);
    samplingRows_[3] = place(uniform.data(), 4 * rows);
  }
  shortContextStep_ = std::all_of(given.contextLens.begin(), given.contextLens.end(),
                                  [](int64_t n) { return n <= kernels::kQkvDecodeMaxContext; });
  // Last, so that a bucket's other addresses stay where its graph has them.
  advanceStepSerial();
  stepSerialDevice_ = place(&stepSerial_, sizeof(stepSerial_));
  if (offset > stagingBytes_)
    return internalError("step: the metadata outgrew its staging area");
  if (tokensFromPrevious && !stagedTokenIds_)
    return failedPreconditionError("step: the step program has no token ids input");
  fedCount = tokensFromPrevious ? int64_t(given.tokenIds.size()) : 0;
  std::memcpy(host, &fedCount, sizeof(fedCount));
  if (streamedUpload_) {
    // On the upload stream, after the last step that read this area (its
    // tokens' event; a never-recorded event is no wait), before this step.
    INFER_CU_CHECK(*api_, api_->cuStreamWaitEvent(uploadStream_, sampledReady_[stepArea_], 0));
    INFER_CU_CHECK(*api_, api_->cuMemcpyHtoDAsync(device, host, offset, uploadStream_));
    INFER_CU_CHECK(*api_, api_->cuEventRecord(uploaded_[stepArea_], uploadStream_));
    INFER_CU_CHECK(*api_, api_->cuStreamWaitEvent(stream_, uploaded_[stepArea_], 0));
  } else {
    INFER_CU_CHECK(*api_, api_->cuMemcpyHtoDAsync(device, host, offset, stream_));
  }
  if (tokensFromPrevious && !streamedUpload_) {
    // The previous step's sampled int32 tokens into the low halves of the
    // staged int64 ids (little-endian; the host's placeholders are 0 and the
    // tokens non-negative, so the high halves stay right).
    CUDA_MEMCPY2D copy{};
    copy.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    copy.srcDevice = sampledTokens_;
    copy.srcPitch = sizeof(int32_t);
    copy.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    copy.dstDevice = stagedTokenIds_;
    copy.dstPitch = sizeof(int64_t);
    copy.WidthInBytes = sizeof(int32_t);
    copy.Height = given.tokenIds.size();
    INFER_CU_CHECK(*api_, api_->cuMemcpy2DAsync(&copy, stream_));
  }
  stepContext_.numSeqs = sizes.sequences;
  stepContext_.fedCount = streamedUpload_ ? reinterpret_cast<const long long *>(device) : nullptr;
  stepContext_.fedIds = streamedUpload_ ? reinterpret_cast<const int *>(sampledTokens_) : nullptr;
  if (qkvDecodeStep(sizes))
    lastQkvDecodeSerial_ = stepSerial_;

  ++stepCalls_;
  if (std::find(options_.profiledSteps.begin(), options_.profiledSteps.end(), stepCalls_) !=
      options_.profiledSteps.end()) {
    INFER_CU_CHECK(*api_, api_->cuStreamSynchronize(stream_));
    KindTimes times;
    RETURN_IF_ERROR(enqueueStep(sizes, sample, &times));
    double total = 0;
    for (const auto &[kind, ms] : times)
      total += ms;
    std::fprintf(stderr, "step %lld profile: %lld tokens, %lld sequences, %lld logit rows, "
                 "%.3f ms in launches:", static_cast<long long>(stepCalls_),
                 static_cast<long long>(sizes.tokens), static_cast<long long>(sizes.sequences),
                 static_cast<long long>(sizes.logitRows), total);
    for (const auto &[kind, ms] : times)
      std::fprintf(stderr, " %s %.3f", kind.c_str(), ms);
    std::fprintf(stderr, "\n");
    return okStatus();
  }

  auto enqueue = [&] { return enqueueStep(sizes, sample); };
  if (bucket > 0)
    return replayOrCapture(
        stepGraphs_[{bucket, sample, qkvDecodeStep(sizes), streamedUpload_ ? stepArea_ : 0}],
        enqueue);
  if (options_.graphs && options_.prefillGraphs && sizes.tokens <= kPrefillGraphMaxTokens)
    return replayOrCapture(prefillGraph(sizes, sample), enqueue);
  return enqueue();
}

StatusOr<std::vector<float>> CudaBackend::step(const StepArrays &arrays, int64_t &vocab) {
  if (waitedSteps_ != enqueuedSteps_)
    return failedPreconditionError("step: enqueued steps are not waited for yet");
  exec::BoundInputs sizes;
  RETURN_IF_ERROR(runStep(arrays, nullptr, false, sizes));
  lastSampledRows_ = 0;
  ASSIGN_OR_RETURN(exec::View logits, stepLogits(sizes, vocab));
  uint64_t elementBytes = art::elementSize(logits.type);
  size_t rowBytes = size_t(vocab) * elementBytes;
  const std::vector<int64_t> &rows = arrays.logitIndices;
  std::vector<unsigned char> raw(rows.size() * rowBytes);
  bool gathered = exec::gathersLogitRows(*step_.program);
  CUdeviceptr base = reinterpret_cast<CUdeviceptr>(logits.data);
  if (gathered) {
    INFER_CU_CHECK(*api_, api_->cuMemcpyDtoHAsync(raw.data(), base, raw.size(), stream_));
  } else {
    for (size_t r = 0; r < rows.size(); ++r)
      INFER_CU_CHECK(*api_, api_->cuMemcpyDtoHAsync(raw.data() + r * rowBytes,
                                                    base + uint64_t(rows[r]) * rowBytes, rowBytes,
                                                    stream_));
  }
  INFER_CU_CHECK(*api_, api_->cuStreamSynchronize(stream_));
  std::vector<float> values(rows.size() * size_t(vocab));
  for (size_t e = 0; e < values.size(); ++e) {
    if (logits.type == art::ELEMENT_TYPE_F32) {
      std::memcpy(&values[e], raw.data() + 4 * e, 4);
    } else {
      uint16_t bits;
      std::memcpy(&bits, raw.data() + 2 * e, 2);
      values[e] = logits.type == art::ELEMENT_TYPE_BF16 ? lowp::floatFromBF16(bits)
                                                        : lowp::floatFromF16(bits);
    }
  }
  return values;
}

StatusOr<std::vector<int32_t>> CudaBackend::stepAndSample(const StepArrays &arrays,
                                                          const std::vector<RowSampling> &sampling) {
  ASSIGN_OR_RETURN(uint64_t ticket, enqueueStep(arrays, sampling, false));
  return waitStep(ticket);
}

StatusOr<uint64_t> CudaBackend::enqueueStep(const StepArrays &arrays,
                                            const std::vector<RowSampling> &sampling,
                                            bool tokensFromPrevious) {
  if (!samplesOnDevice())
    return failedPreconditionError("step: the artifact has no device sampler for its logits");
  if (sampling.size() != arrays.logitIndices.size())
    return invalidArgumentError("step: " + std::to_string(sampling.size()) +
                                " sampling rows for " +
                                std::to_string(arrays.logitIndices.size()) + " logit rows");
  if (enqueuedSteps_ - waitedSteps_ >= 2)
    return failedPreconditionError("step: two steps are outstanding already");
  if (tokensFromPrevious && (arrays.tokenIds.empty() || lastSampledRows_ < arrays.tokenIds.size()))
    return failedPreconditionError("step: " + std::to_string(arrays.tokenIds.size()) +
                                   " tokens cannot come from the previous step's " +
                                   std::to_string(lastSampledRows_) + " sampled rows");
  exec::BoundInputs sizes;
  RETURN_IF_ERROR(runStep(arrays, &sampling, tokensFromPrevious, sizes));
  size_t rows = sampling.size();
  if (!streamedUpload_) // else infer_sample wrote them to the mapped buffer
    INFER_CU_CHECK(*api_, api_->cuMemcpyDtoHAsync(sampledTokensHost_[stepArea_], sampledTokens_,
                                                  4 * rows, stream_));
  INFER_CU_CHECK(*api_, api_->cuEventRecord(sampledReady_[stepArea_], stream_));
  ticketRows_[stepArea_] = rows;
  lastSampledRows_ = rows;
  return ++enqueuedSteps_;
}

StatusOr<std::vector<int32_t>> CudaBackend::waitStep(uint64_t ticket) {
  if (ticket != waitedSteps_ + 1 || ticket > enqueuedSteps_)
    return failedPreconditionError("step: ticket " + std::to_string(ticket) +
                                   " is not the next outstanding step");
  size_t area = (ticket - 1) % 2;
  INFER_CU_CHECK(*api_, api_->cuCtxSetCurrent(context_));
  INFER_CU_CHECK(*api_, api_->cuEventSynchronize(sampledReady_[area]));
  waitedSteps_ = ticket;
  return std::vector<int32_t>(sampledTokensHost_[area], sampledTokensHost_[area] + ticketRows_[area]);
}

} // namespace infer::cuda
