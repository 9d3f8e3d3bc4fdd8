//===- CudaBackend.cpp - the exec program on one GPU stream ----------------===//

#include "runtime/cuda/CudaBackend.h"

#include "runtime/artifact/ArtifactFormat.h"
#include "runtime/base/LowPrecision.h"
#include "runtime/cuda/GemmRunner.h"
#include "runtime/cuda/KernelParamsPacking.h"
#include "runtime/cuda/abi/GemvGeometry.h"
#include "runtime/cuda/abi/KernelParams.h"
#include "runtime/cuda/abi/KvDecodeGeometry.h"
#include "runtime/cuda/abi/QuantizedFp8Gemm.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <cstring>

namespace infer::cuda {
namespace art = artifact;
using exec::affineAt;

namespace {

/// Copies of more than this go in pieces, so one call never pins gigabytes.
constexpr uint64_t kUploadChunk = 256ull << 20;

/// A step whose longest new-token run is at least this uses the paged
/// prefill kernel (when the artifact has one) instead of one block per token.
constexpr int64_t kPrefillMinNewTokens = 16;
/// Weight bytes each GEMV block asks L2 for before it waits for the previous
/// kernel under programmatic launch: ~12 MB over a wave of 396 blocks, about
/// the data HBM could deliver in the ~3 us a kernel boundary costs.
constexpr int64_t kGemvPrefetchBytes = 32 << 10;

void *pointer(CUdeviceptr address) { return reinterpret_cast<void *>(address); }

/// The step sizes a launch was resolved with.
exec::BoundInputs sizesOf(const exec::LaunchArgs &args) {
  exec::BoundInputs sizes;
  sizes.batch = args.batch;
  sizes.seq = args.seq;
  sizes.tokens = args.tokens;
  sizes.sequences = args.sequences;
  sizes.maxNewTokens = args.maxNewTokens;
  sizes.logitRows = args.logitRows;
  return sizes;
}

} // namespace

StatusOr<std::unique_ptr<CudaBackend>> CudaBackend::create(const art::ArtifactReader &reader) {
  const art::Manifest &manifest = reader.manifest();
  if (!manifest.has_exec())
    return failedPreconditionError(reader.path() +
                                   ": the artifact has no exec program (it can be inspected, "
                                   "not run); recompile it with infer-compile -o");
  if (manifest.options().target() != art::TARGET_CUDA || !manifest.has_cuda())
    return failedPreconditionError(reader.path() +
                                   (manifest.options().target() == art::TARGET_CPU
                                        ? ": the artifact was compiled for --target cpu and has "
                                          "no GPU code"
                                        : ": the artifact has no GPU code") +
                                   "; run it with --device cpu or recompile with --target cuda");
  if (manifest.cuda().launches_size() != manifest.exec().launches_size())
    return dataLossError(reader.path() + ": the GPU code does not match the exec program (" +
                         std::to_string(manifest.cuda().launches_size()) + " kernel records for " +
                         std::to_string(manifest.exec().launches_size()) + " launches)");
  std::unique_ptr<CudaBackend> backend(new CudaBackend(reader));
  backend->program_ = &manifest.exec();
  backend->module_ = &manifest.cuda();
  backend->forward_.program = &manifest.exec();
  backend->forward_.launches = &manifest.cuda().launches();
  if (manifest.has_step() && manifest.cuda().step_launches_size() == manifest.step().launches_size()) {
    backend->step_.program = &manifest.step();
    backend->step_.launches = &manifest.cuda().step_launches();
  }
  ASSIGN_OR_RETURN(backend->api_, loadCudaApi());
  RETURN_IF_ERROR(backend->load());
  return backend;
}

Status CudaBackend::uploadWeightSection(uint64_t section) {
  const CudaApi &api = *api_;
  uint64_t stage = std::min(kUploadChunk, section);
  void *pinned[2] = {nullptr, nullptr};
  std::vector<unsigned char> pageable;
  bool pinnedOk = true;
  for (void *&buffer : pinned)
    pinnedOk = pinnedOk && api.cuMemHostAlloc(&buffer, stage, 0) == CUDA_SUCCESS;
  auto release = [&] {
    for (void *buffer : pinned)
      if (buffer)
        (void)api.cuMemFreeHost(buffer); // nothing to do if freeing fails
  };
  void *buffers[2] = {pinned[0], pinned[1]};
  if (!pinnedOk) { // no pinned memory: one pageable buffer, copies in turn
    release();
    pinned[0] = pinned[1] = nullptr;
    pageable.resize(static_cast<size_t>(stage));
    buffers[0] = buffers[1] = pageable.data();
  }
  // Each part is read (and its deferred checksum chunks hashed) while the
  // copy of the part before runs; that copy must be done before its buffer
  // is read into again, two parts later.
  Status status = reader_.streamWeightSection(
      buffers, stage, [&](uint64_t offset, uint64_t bytes, const void *data, int) -> Status {
        CUresult result = api.cuStreamSynchronize(stream_);
        if (result == CUDA_SUCCESS)
          result = pinnedOk ? api.cuMemcpyHtoDAsync(weights_ + offset, data, bytes, stream_)
                            : api.cuMemcpyHtoD(weights_ + offset, data, bytes);
        return result == CUDA_SUCCESS
                   ? okStatus()
                   : driverError(api, result, "uploading the weights (cuMemcpyHtoD)");
      });
  if (api.cuStreamSynchronize(stream_) != CUDA_SUCCESS && status.ok())
    status = internalError("uploading the weights: the copy failed");
  release();
  return status;
}

std::vector<std::pair<std::string, double>> CudaBackend::loadPhases() const {
  return {{"context", report_.contextSeconds},
          {"weights", report_.weightSeconds},
          {"kernels", report_.kernelSeconds},
          {"rest", report_.restSeconds}};
}

Status CudaBackend::load() {
  const CudaApi &api = *api_;
  const art::Manifest &manifest = reader_.manifest();
  using Clock = std::chrono::steady_clock;
  Clock::time_point mark = Clock::now();
  auto lap = [&mark](double &seconds) {
    Clock::time_point now = Clock::now();
    seconds += std::chrono::duration<double>(now - mark).count();
    mark = now;
  };
  INFER_CU_CHECK(api, api.cuDeviceGet(&device_, 0));
  char name[256] = {};
  INFER_CU_CHECK(api, api.cuDeviceGetName(name, sizeof(name), device_));
  report_.deviceName = name;
  INFER_CU_CHECK(api, api.cuDevicePrimaryCtxRetain(&context_, device_));
  INFER_CU_CHECK(api, api.cuCtxSetCurrent(context_));
  INFER_CU_CHECK(api, api.cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING));
  // Before the kernels are resolved: they take the shared-memory carveout.
  ASSIGN_OR_RETURN(options_, runtimeOptionsFromEnvironment());
  for (const std::string &warning : options_.warnings)
    std::fprintf(stderr, "warning: %s\n", warning.c_str());
  lap(report_.contextSeconds);

  // Weights: the whole section in one allocation, in the file's layout. The
  // section is read with pread into two pinned staging buffers in turn (the
  // read of one overlaps the copy of the other), never through a mapping: a
  // file truncated meanwhile is a read error, not SIGBUS, and after load()
  // the file is not read again.
  uint64_t section = manifest.weight_section_size();
  if (reader_.numWeights() > 0 && section > 0) {
    size_t freeBytes = 0, totalBytes = 0;
    INFER_CU_CHECK(api, api.cuMemGetInfo(&freeBytes, &totalBytes));
    if (section > freeBytes)
      return resourceExhaustedError("the weights need " + std::to_string(section) +
                                    " bytes of device memory; " + std::to_string(freeBytes) +
                                    " are free");
    INFER_CU_CHECK(api, api.cuMemAlloc(&weights_, section));
    RETURN_IF_ERROR(uploadWeightSection(section));
    report_.weightBytes = section;
  }
  RETURN_IF_ERROR(reader_.checkUnchanged());
  lap(report_.weightSeconds);
  for (size_t i = 0; i < reader_.numWeights(); ++i) {
    const art::Weight &weight = manifest.weights(static_cast<int>(i));
    exec::View view;
    view.type = weight.element_type();
    view.shape.assign(weight.shape().begin(), weight.shape().end());
    uint64_t elementBytes = art::elementSize(view.type);
    view.elements = elementBytes ? static_cast<int64_t>(weight.size() / elementBytes) : 0;
    view.data = pointer(weights_ + weight.offset());
    weightViews_.push_back(std::move(view));
  }
  for (const art::Constant &constant : program_->constants()) {
    CUdeviceptr address = 0;
    size_t bytes = std::max<size_t>(constant.data().size(), 16);
    INFER_CU_CHECK(api, api.cuMemAlloc(&address, bytes));
    if (!constant.data().empty())
      INFER_CU_CHECK(api, api.cuMemcpyHtoD(address, constant.data().data(), constant.data().size()));
    constants_.push_back(address);
    exec::View view;
    view.type = constant.element_type();
    view.shape.assign(constant.shape().begin(), constant.shape().end());
    uint64_t elementBytes = art::elementSize(view.type);
    view.elements = elementBytes ? static_cast<int64_t>(constant.data().size() / elementBytes) : 0;
    view.data = pointer(address);
    constantViews_.push_back(std::move(view));
  }

  lap(report_.restSeconds);
  // Kernels: the cubins (one per NVRTC program), or the PTX (every kernel)
  // where they are not for this GPU.
  CUmodule first = nullptr;
  CUresult loaded = api.cuModuleLoadData(&first, module_->cubin().data());
  if (loaded == CUDA_ERROR_NO_BINARY_FOR_GPU || loaded == CUDA_ERROR_INVALID_IMAGE) {
    if (module_->ptx().empty())
      return failedPreconditionError(
          reader_.path() + ": its GPU code is an " + module_->arch() +
          " cubin, which this GPU cannot run, and it carries no PTX to JIT-compile; recompile "
          "with `infer-compile --ptx`");
    std::string ptx = module_->ptx();
    loaded = api.cuModuleLoadData(&first, ptx.c_str());
    report_.usedPtx = true;
  }
  if (loaded != CUDA_SUCCESS)
    return driverError(api, loaded, "cuModuleLoadData (the artifact's kernels)");
  cuModules_.push_back(first);
  if (!report_.usedPtx) // the PTX holds every kernel
    for (const art::CudaCubin &cubin : module_->extra_cubins()) {
      CUmodule extra = nullptr;
      loaded = api.cuModuleLoadData(&extra, cubin.cubin().data());
      if (loaded != CUDA_SUCCESS)
        return driverError(api, loaded, "cuModuleLoadData (the artifact's kernels)");
      for (const std::string &function : cubin.functions())
        moduleOfFunction_[function] = cuModules_.size();
      cuModules_.push_back(extra);
    }
  std::map<std::string, CUfunction> byName;
  RETURN_IF_ERROR(resolveFunctions(forward_, byName));
  if (step_.program)
    RETURN_IF_ERROR(resolveFunctions(step_, byName));
  if (step_.program && !module_->sample_function().empty()) {
    ASSIGN_OR_RETURN(sampleFunction_, findFunction(module_->sample_function()));
    embeddingFeedsTokens_ = module_->embedding_feeds_tokens() && options_.uploadStream;
  }

  lap(report_.kernelSeconds);
  // The arena, once, at the artifact's bound (offsets are planned there).
  RETURN_IF_ERROR(allocateArena(forward_));
  report_.arenaBytes = uint64_t(affineAt(program_->arena().size(), program_->arena().bound_tokens()));
  int multiprocessors = 0;
  INFER_CU_CHECK(api, api.cuDeviceGetAttribute(&multiprocessors,
                                               CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device_));
  // The compile's tuning records for this GPU and cuBLASLt; records made
  // elsewhere are not used (their algorithms were timed on another chip).
  const std::string device = tuningDeviceKey(report_.deviceName, multiprocessors);
  const art::TuningRecords *records =
      tuningRecordsFor(manifest, device, int64_t(api.cublasLtGetVersion()));
  if (!records && manifest.tuning_size() > 0)
    std::fprintf(stderr,
                 "warning: %s has GEMM tuning records for %s (cuBLASLt %lld), not for this %s "
                 "(cuBLASLt %lld): cuBLASLt's heuristic algorithms run (recompile with --tune "
                 "on this GPU)\n",
                 reader_.path().c_str(), manifest.tuning(0).device().c_str(),
                 static_cast<long long>(manifest.tuning(0).cublaslt_version()), device.c_str(),
                 static_cast<long long>(api.cublasLtGetVersion()));
  report_.tuningRecords = records ? records->gemm_size() : 0;
  ASSIGN_OR_RETURN(gemm_, GemmRunner::create(api, records));
  RETURN_IF_ERROR(allocateGemvWorkspace());
  RETURN_IF_ERROR(allocateQkvExchange());
  lap(report_.restSeconds);
  return okStatus();
}

StatusOr<CUfunction> CudaBackend::findFunction(const std::string &name) const {
  // One lookup in the module that holds it (probing each would leave failed
  // driver calls, which compute-sanitizer reports).
  auto listed = moduleOfFunction_.find(name);
  CUmodule module = cuModules_[listed == moduleOfFunction_.end() ? 0 : listed->second];
  CUfunction function = nullptr;
  CUresult result = api_->cuModuleGetFunction(&function, module, name.c_str());
  if (result != CUDA_SUCCESS)
    return driverError(*api_, result, ("cuModuleGetFunction " + name).c_str());
  return function;
}

Status CudaBackend::resolveFunctions(LoadedProgram &loaded,
                                     std::map<std::string, CUfunction> &byName) {
  const CudaApi &api = *api_;
  auto resolve = [&](const art::CudaLaunch &launch, int index) -> StatusOr<CUfunction> {
    if (launch.runner() == art::CudaLaunch::CUBLASLT)
      return CUfunction(nullptr);
    if (launch.runner() != art::CudaLaunch::KERNEL)
      return dataLossError(reader_.path() + ": launch " + std::to_string(index) +
                           " has no GPU runner");
    CUfunction function = nullptr;
    if (auto found = byName.find(launch.function()); found != byName.end()) {
      function = found->second;
    } else {
      ASSIGN_OR_RETURN(function, findFunction(launch.function()));
      byName[launch.function()] = function;
      if (options_.sharedCarveout >= 0)
        INFER_CU_CHECK(api, api.cuFuncSetAttribute(
                                function, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
                                options_.sharedCarveout));
    }
    // A kernel that several launches run (one GEMV kernel for matrices of
    // different k) may use the most dynamic shared memory any of them asks;
    // set only by the first launch, a later, larger one failed to launch.
    // The default limit is 48 KiB less the kernel's static shared memory, so
    // a launch of a little under 48 KiB can need it raised too
    // (infer_gemv_rows_mma has 4 KiB of static shared memory).
    if (launch.shared_bytes() > 0) {
      int allowed = 0;
      INFER_CU_CHECK(api, api.cuFuncGetAttribute(
                              &allowed, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, function));
      if (int(launch.shared_bytes()) > allowed)
        INFER_CU_CHECK(api, api.cuFuncSetAttribute(function,
                                                   CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                                   int(launch.shared_bytes())));
    }
    return function;
  };
  for (int i = 0; i < loaded.launches->size(); ++i) {
    const art::CudaLaunch &launch = loaded.launches->Get(i);
    ASSIGN_OR_RETURN(CUfunction function, resolve(launch, i));
    loaded.functions.push_back(function);
    CUfunction prologue = nullptr, prefill = nullptr, gemv = nullptr, rows = nullptr,
               multiRows = nullptr, mma = nullptr, fused = nullptr, decode = nullptr,
               qkvDecode = nullptr;
    if (launch.has_prologue()) {
      ASSIGN_OR_RETURN(prologue, resolve(launch.prologue(), i));
    }
    if (launch.has_fused_prologue()) {
      ASSIGN_OR_RETURN(fused, resolve(launch.fused_prologue(), i));
    }
    if (launch.has_prefill()) {
      ASSIGN_OR_RETURN(prefill, resolve(launch.prefill(), i));
    }
    if (launch.has_decode()) {
      ASSIGN_OR_RETURN(decode, resolve(launch.decode(), i));
    }
    if (launch.has_qkv_decode()) {
      ASSIGN_OR_RETURN(qkvDecode, resolve(launch.qkv_decode(), i));
    }
    if (launch.has_gemv()) {
      ASSIGN_OR_RETURN(gemv, resolve(launch.gemv(), i));
    }
    if (launch.has_gemv_single_row()) {
      ASSIGN_OR_RETURN(rows, resolve(launch.gemv_single_row(), i));
    }
    if (launch.has_gemv_multi_row()) {
      ASSIGN_OR_RETURN(multiRows, resolve(launch.gemv_multi_row(), i));
    }
    if (launch.has_gemv_mma()) {
      ASSIGN_OR_RETURN(mma, resolve(launch.gemv_mma(), i));
    }
    CUfunction dequantize = nullptr, roundInputs = nullptr;
    if (launch.has_dequantize()) {
      ASSIGN_OR_RETURN(dequantize, resolve(launch.dequantize(), i));
      if (launch.dequantize().has_prologue()) {
        ASSIGN_OR_RETURN(roundInputs, resolve(launch.dequantize().prologue(), i));
      }
    }
    CUfunction fp8Inputs = nullptr;
    if (launch.has_fp8_gemm()) {
      ASSIGN_OR_RETURN(fp8Inputs, resolve(launch.fp8_gemm(), i));
    }
    loaded.dequantizes.push_back(dequantize);
    loaded.roundInputs.push_back(roundInputs);
    loaded.fp8Inputs.push_back(fp8Inputs);
    std::vector<CUfunction> stages;
    for (const art::CudaLaunch &stage : launch.stages()) {
      if (stage.runner() != art::CudaLaunch::KERNEL)
        return dataLossError(reader_.path() + ": a stage of launch " + std::to_string(i) +
                             " is not a kernel");
      ASSIGN_OR_RETURN(CUfunction function, resolve(stage, i));
      stages.push_back(function);
    }
    loaded.stages.push_back(std::move(stages));
    loaded.prologues.push_back(prologue);
    loaded.prefills.push_back(prefill);
    loaded.gemvs.push_back(gemv);
    loaded.gemvRows.push_back(rows);
    loaded.gemvMultiRows.push_back(multiRows);
    loaded.gemvMmas.push_back(mma);
    loaded.fusedPrologues.push_back(fused);
    loaded.decodes.push_back(decode);
    loaded.qkvDecodes.push_back(qkvDecode);
  }
  ASSIGN_OR_RETURN(loaded.folded,
                   foldedLaunches(*loaded.program, *loaded.launches, reader_.path()));
  return okStatus();
}

Status CudaBackend::allocateArena(LoadedProgram &loaded) {
  const art::ExecProgram &program = *loaded.program;
  int64_t bound = program.arena().bound_tokens();
  int64_t arenaBytes = affineAt(program.arena().size(), bound);
  for (const art::Buffer &buffer : program.buffers())
    arenaBytes = std::max(arenaBytes, affineAt(buffer.offset(), bound) + affineAt(buffer.size(), bound));
  size_t freeBytes = 0, totalBytes = 0;
  INFER_CU_CHECK(*api_, api_->cuMemGetInfo(&freeBytes, &totalBytes));
  if (uint64_t(arenaBytes) > freeBytes)
    return resourceExhaustedError("the activations need " + std::to_string(arenaBytes) +
                                  " bytes at the artifact's bound of " + std::to_string(bound) +
                                  " batch tokens; " + std::to_string(freeBytes) +
                                  " are free (recompile with a smaller --max-batch-tokens)");
  INFER_CU_CHECK(*api_, api_->cuMemAlloc(&loaded.arena, std::max<int64_t>(arenaBytes, 256)));
  const int64_t scratchBytes = art::quantizationScratchBytes(program, *loaded.launches, bound);
  if (scratchBytes > 0) {
    INFER_CU_CHECK(*api_, api_->cuMemGetInfo(&freeBytes, &totalBytes));
    if (uint64_t(scratchBytes) > freeBytes)
      return resourceExhaustedError("the quantized GEMMs' scratch needs " +
                                    std::to_string(scratchBytes) + " bytes; " +
                                    std::to_string(freeBytes) + " are free");
    INFER_CU_CHECK(*api_, api_->cuMemAlloc(&loaded.quantScratch, scratchBytes));
  }
  return okStatus();
}

Status CudaBackend::run(const exec::BoundInputs &step) {
  if (!options_.graphs)
    return enqueue(step);
  return replayOrCapture(graphs_[{step.batch, step.seq}], [&] { return enqueue(step); });
}

Status CudaBackend::replayOrCapture(Captured &captured, const std::function<Status()> &enqueue) {
  if (captured.exec) {
    INFER_CU_CHECK(*api_, api_->cuGraphLaunch(captured.exec, stream_));
    return okStatus();
  }
  if (captured.runs++ == 0)
    return enqueue(); // first time: GEMM tuning, which synchronizes
  INFER_CU_CHECK(*api_, api_->cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
  Status enqueued = enqueue();
  CUgraph graph = nullptr;
  CUresult ended = api_->cuStreamEndCapture(stream_, &graph);
  RETURN_IF_ERROR(enqueued);
  if (ended != CUDA_SUCCESS)
    return driverError(*api_, ended, "cuStreamEndCapture");
  CUresult instantiated = api_->cuGraphInstantiate(&captured.exec, graph, 0);
  if (instantiated != CUDA_SUCCESS) {
    api_->cuGraphDestroy(graph);
    captured.exec = nullptr;
    return driverError(*api_, instantiated, "cuGraphInstantiate");
  }
  captured.graph = graph;
  INFER_CU_CHECK(*api_, api_->cuGraphLaunch(captured.exec, stream_));
  return okStatus();
}

void CudaBackend::release(Captured &captured) {
  if (captured.exec)
    api_->cuGraphExecDestroy(captured.exec);
  if (captured.graph)
    api_->cuGraphDestroy(captured.graph);
  captured = Captured();
}

CudaBackend::CudaBackend(const art::ArtifactReader &reader) : reader_(reader) {}

CudaBackend::~CudaBackend() {
  if (!api_)
    return;
  if (stream_)
    api_->cuStreamSynchronize(stream_);
  if (uploadStream_)
    api_->cuStreamSynchronize(uploadStream_);
  for (auto &entry : graphs_)
    release(entry.second);
  releaseStepGraphs();
  if (gemvWorkspace_)
    api_->cuMemFree(gemvWorkspace_);
  if (gemvCounters_)
    api_->cuMemFree(gemvCounters_);
  for (int area = 0; area < 2; ++area) {
    if (stagingHost_[area])
      api_->cuMemFreeHost(stagingHost_[area]);
    if (sampledTokensHost_[area])
      api_->cuMemFreeHost(sampledTokensHost_[area]);
    if (sampledReady_[area])
      api_->cuEventDestroy(sampledReady_[area]);
    if (uploaded_[area])
      api_->cuEventDestroy(uploaded_[area]);
  }
  if (staging_)
    api_->cuMemFree(staging_);
  if (sampledTokens_)
    api_->cuMemFree(sampledTokens_);
  gemm_.reset();
  for (CUdeviceptr staging : inputStaging_)
    if (staging)
      api_->cuMemFree(staging);
  for (CUdeviceptr constant : constants_)
    api_->cuMemFree(constant);
  for (LoadedProgram *loaded : {&forward_, &step_})
    if (loaded->arena)
      api_->cuMemFree(loaded->arena);
  for (CUdeviceptr layer : kvLayers_)
    api_->cuMemFree(layer);
  if (kvDecodeWorkspace_)
    api_->cuMemFree(kvDecodeWorkspace_);
  if (kvDecodeCounters_)
    api_->cuMemFree(kvDecodeCounters_);
  if (qkvExchange_)
    api_->cuMemFree(qkvExchange_);
  if (argmaxSlot_)
    api_->cuMemFree(argmaxSlot_);
  if (weights_)
    api_->cuMemFree(weights_);
  for (CUmodule module : cuModules_)
    api_->cuModuleUnload(module);
  if (stream_)
    api_->cuStreamDestroy(stream_);
  if (uploadStream_)
    api_->cuStreamDestroy(uploadStream_);
  if (context_)
    api_->cuDevicePrimaryCtxRelease(device_);
}

exec::View CudaBackend::bufferView(const LoadedProgram &loaded, uint32_t id,
                                   const exec::BoundInputs &step) const {
  // An elided identity gather's rows are its input's (same type, row width
  // and, with tokens == logit rows, row count: identityGatherSource).
  if (int64_t(id) == elidedGatherOutput_)
    id = gatherSource_;
  const art::Buffer &buffer = loaded.program->buffers(static_cast<int>(id));
  exec::View view;
  view.isBuffer = true;
  view.type = buffer.element_type();
  CUdeviceptr redirected = id < loaded.redirected.size() ? loaded.redirected[id] : 0;
  view.data = pointer(redirected ? redirected
                                 : loaded.arena + affineAt(buffer.offset(), step.tokens));
  view.elements = exec::bufferElements(buffer, step.tokens, step.logitRows);
  return view;
}

exec::LaunchArgs CudaBackend::resolve(const LoadedProgram &loaded, int index,
                                      const exec::BoundInputs &step) const {
  const art::Launch &launch = loaded.program->launches(index);
  exec::LaunchArgs args;
  args.launch = &launch;
  args.index = index;
  args.batch = step.batch;
  args.seq = step.seq;
  args.tokens = exec::runsPerLogitRow(*loaded.program, launch) ? step.logitRows : step.tokens;
  args.sequences = step.sequences;
  args.maxNewTokens = step.maxNewTokens;
  args.logitRows = step.logitRows;
  for (const art::Operand &operand : launch.operands()) {
    args.roles.push_back(operand.role());
    const art::Ref &ref = operand.ref();
    if (ref.target_case() == art::Ref::kBuffer)
      args.operands.push_back(bufferView(loaded, ref.buffer(), step));
    else if (ref.target_case() == art::Ref::kWeight)
      args.operands.push_back(weightViews_[ref.weight()]);
    else
      args.operands.push_back(constantViews_[ref.constant()]);
  }
  for (uint32_t output : launch.outputs())
    args.outputs.push_back(bufferView(loaded, output, step));
  return args;
}

StatusOr<exec::BoundInputs> CudaBackend::upload(const std::vector<NamedArray> &inputs) {
  ASSIGN_OR_RETURN(exec::BoundInputs step, exec::bindInputs(*program_, inputs));
  INFER_CU_CHECK(*api_, api_->cuCtxSetCurrent(context_));
  inputStaging_.resize(size_t(program_->inputs_size()), 0);
  inputBytes_.resize(size_t(program_->inputs_size()), 0);
  for (int i = 0; i < program_->inputs_size(); ++i) {
    uint32_t buffer = program_->inputs(i).buffer();
    exec::View view = bufferView(forward_, buffer, step);
    if (view.type != art::ELEMENT_TYPE_I64 || view.elements != step.tokens)
      return failedPreconditionError("input '" + program_->inputs(i).name() +
                                     "' has a buffer the cuda backend cannot fill");
    std::vector<int64_t> ids = exec::tokenIds(*step.arrays[static_cast<size_t>(i)]);
    // Ids index tables on the device, where a bad one would read out of
    // bounds: check them against every embedding that reads this input.
    for (int index = 0; index < program_->launches_size(); ++index) {
      const art::Launch &launch = program_->launches(index);
      if (launch.kind() != art::Launch::EMBEDDING)
        continue;
      exec::LaunchArgs args = resolve(forward_, index, step);
      const art::Operand *idsOperand = nullptr, *tableOperand = nullptr;
      for (const art::Operand &operand : launch.operands()) {
        if (operand.role() == art::ROLE_IDS)
          idsOperand = &operand;
        if (operand.role() == art::ROLE_TABLE)
          tableOperand = &operand;
      }
      if (!idsOperand || !tableOperand || idsOperand->ref().target_case() != art::Ref::kBuffer ||
          idsOperand->ref().buffer() != buffer)
        continue;
      ASSIGN_OR_RETURN(int64_t hidden, args.intAttr("hidden"));
      const exec::View *table = args.operand(art::ROLE_TABLE);
      int64_t vocab = hidden > 0 ? table->elements / hidden : 0;
      for (int64_t t = 0; t < step.tokens; ++t)
        if (ids[t] < 0 || ids[t] >= vocab)
          return invalidArgumentError("token id " + std::to_string(ids[t]) + " at (batch " +
                                      std::to_string(t / step.seq) + ", position " +
                                      std::to_string(t % step.seq) +
                                      ") is outside the vocabulary [0, " + std::to_string(vocab) +
                                      ")");
      if (const exec::View *positions = args.operand(art::ROLE_POSITION_TABLE)) {
        int64_t rows = positions->elements / hidden, offset = args.intAttr("position_offset", 0);
        if (offset + step.seq > rows)
          return invalidArgumentError("position " + std::to_string(step.seq - 1) +
                                      " is beyond the model's " + std::to_string(rows - offset) +
                                      " learned positions");
      }
    }
    size_t bytes = sizeof(int64_t) * ids.size();
    if (inputBytes_[size_t(i)] < bytes) {
      if (inputStaging_[size_t(i)])
        INFER_CU_CHECK(*api_, api_->cuMemFree(inputStaging_[size_t(i)]));
      inputStaging_[size_t(i)] = 0;
      INFER_CU_CHECK(*api_, api_->cuMemAlloc(&inputStaging_[size_t(i)], bytes));
      inputBytes_[size_t(i)] = bytes;
    }
    INFER_CU_CHECK(*api_,
                   api_->cuMemcpyHtoDAsync(inputStaging_[size_t(i)], ids.data(), bytes, stream_));
    // ids is a local: the copy must finish before it goes away.
    INFER_CU_CHECK(*api_, api_->cuStreamSynchronize(stream_));
  }
  return step;
}

Status CudaBackend::launchKernel(const art::CudaLaunch &cuda, CUfunction function,
                                 const exec::LaunchArgs &args, const PackedParams &params) {
  unsigned grid[3] = {1, 1, 1};
  for (int d = 0; d < cuda.grid_size() && d < 3; ++d) {
    const art::GridDim &dim = cuda.grid(d);
    int64_t symbol = 1;
    switch (dim.symbol()) {
    case art::GridDim::TOKENS:
      symbol = args.tokens;
      break;
    case art::GridDim::BATCH:
      symbol = args.batch;
      break;
    case art::GridDim::SEQ:
      symbol = args.seq;
      break;
    case art::GridDim::SEQUENCES:
      symbol = args.sequences;
      break;
    case art::GridDim::MAX_NEW_TOKENS:
      symbol = args.maxNewTokens;
      break;
    case art::GridDim::LOGIT_ROWS:
      symbol = args.logitRows;
      break;
    case art::GridDim::KV_DECODE_SPLITS:
      symbol = kernels::kvDecodeSplits(args.tokens, args.intAttr("num_heads", 1),
                                       args.intAttr("num_kv_heads", 1));
      break;
    default:
      break;
    }
    int64_t divisor = std::max<int64_t>(dim.divisor(), 1);
    int64_t value = (dim.multiplier() * symbol + divisor - 1) / divisor;
    if (value <= 0)
      return okStatus(); // nothing to do at this size
    if (value > (d == 0 ? 0x7fffffffLL : 65535LL))
      return args.error("needs a grid of " + std::to_string(value) + " blocks in dimension " +
                        std::to_string(d));
    grid[d] = unsigned(value);
  }
  void *kernelArgs[] = {const_cast<unsigned char *>(params.bytes.data())};
  return launchOurKernel(function, grid, cuda.block_x(), cuda.shared_bytes(), kernelArgs);
}

Status CudaBackend::launchOurKernel(CUfunction function, const unsigned (&grid)[3],
                                    unsigned blockX, unsigned sharedBytes, void **kernelArgs) {
  CUlaunchAttribute programmatic{};
  programmatic.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
  programmatic.value.programmaticStreamSerializationAllowed = 1;
  CUlaunchConfig config{};
  config.gridDimX = grid[0], config.gridDimY = grid[1], config.gridDimZ = grid[2];
  config.blockDimX = blockX, config.blockDimY = 1, config.blockDimZ = 1;
  config.sharedMemBytes = sharedBytes;
  config.hStream = stream_;
  // Every kernel of ours waits for its predecessor first (Common.cuh,
  // waitForPreviousKernel), so it may start while that one finishes.
  if (programmaticNext())
    config.attrs = &programmatic, config.numAttrs = 1;
  INFER_CU_CHECK(*api_, api_->cuLaunchKernelEx(&config, function, kernelArgs, nullptr));
  lastLaunchWasKernel_ = true;
  return okStatus();
}

Status CudaBackend::allocateGemvWorkspace() {
  // Every split of a GEMV stores its partial sums in a slice of its own
  // (GemvGeometry.h): the workspace holds the widest n times the most splits.
  int64_t widest = 0, splits = 1;
  for (const LoadedProgram *loaded : {&forward_, &step_}) {
    if (!loaded->program)
      continue;
    for (int i = 0; i < loaded->launches->size(); ++i) {
      const art::CudaLaunch &cuda = loaded->launches->Get(i);
      if (!cuda.has_gemv())
        continue;
      if (const art::Attribute *n = art::findAttribute(loaded->program->launches(i), "n"))
        widest = std::max<int64_t>(widest, n->int_value());
      // The reader checked that the grid is constant (checkCudaModule).
      if (cuda.gemv().grid_size() > 1)
        splits = std::max<int64_t>(splits, cuda.gemv().grid(1).multiplier());
    }
  }
  if (widest == 0)
    return okStatus();
  size_t floats = size_t(kernels::gemvWorkspaceFloats(widest, splits));
  size_t counters = size_t(kernels::gemvCounters(widest));
  INFER_CU_CHECK(*api_, api_->cuMemAlloc(&gemvWorkspace_, std::max<size_t>(4 * floats, 16)));
  INFER_CU_CHECK(*api_, api_->cuMemAlloc(&gemvCounters_, std::max<size_t>(4 * counters, 16)));
  // Artifacts compiled before the per-split slices add into a zeroed
  // workspace; the memset keeps them running.
  INFER_CU_CHECK(*api_, api_->cuMemsetD8Async(gemvWorkspace_, 0, std::max<size_t>(4 * floats, 16), stream_));
  INFER_CU_CHECK(*api_, api_->cuMemsetD8Async(gemvCounters_, 0, std::max<size_t>(4 * counters, 16), stream_));
  INFER_CU_CHECK(*api_, api_->cuStreamSynchronize(stream_));
  return okStatus();
}

const art::CudaLaunch *CudaBackend::gemvFor(const LoadedProgram &loaded, int index,
                                            int64_t tokens, CUfunction *function) const {
  const art::CudaLaunch &cuda = loaded.launches->Get(index);
  CUfunction found = nullptr;
  const art::CudaLaunch *record = nullptr;
  if (tokens == 1 && cuda.has_gemv_single_row() && loaded.gemvRows[size_t(index)])
    record = &cuda.gemv_single_row(), found = loaded.gemvRows[size_t(index)];
  else if (cuda.has_gemv_mma() && tokens >= kernels::gemvMmaMinRows(cuda.gemv_mma().min_rows()) &&
           tokens <= int64_t(cuda.gemv_mma().max_rows()) && loaded.gemvMmas[size_t(index)])
    record = &cuda.gemv_mma(), found = loaded.gemvMmas[size_t(index)];
  else if (tokens > 1 && tokens <= kernels::kGemvRowsMultiRowsRun && cuda.has_gemv_multi_row() &&
           loaded.gemvMultiRows[size_t(index)])
    record = &cuda.gemv_multi_row(), found = loaded.gemvMultiRows[size_t(index)];
  else if (tokens <= kernels::kGemvMaxRows && cuda.has_gemv() && loaded.gemvs[size_t(index)])
    record = &cuda.gemv(), found = loaded.gemvs[size_t(index)];
  if (function)
    *function = found;
  return record;
}

bool CudaBackend::foldsNextActivation(const LoadedProgram &loaded, int index,
                                      int64_t tokens) const {
  const art::CudaLaunch *gemv = gemvFor(loaded, index, tokens);
  const int activation = loaded.folded.epilogue[size_t(index)];
  if (!gemv || !gemv->fuses_next() || activation < 0)
    return false;
  // Not when the GEMM that reads the activation computes it itself.
  const int reader = loaded.folded.prologueOf[size_t(activation)];
  const art::CudaLaunch *after = reader >= 0 ? gemvFor(loaded, reader, tokens) : nullptr;
  return !(after && after->fuses_previous());
}

bool CudaBackend::runByAnother(const LoadedProgram &loaded, int index,
                               const exec::BoundInputs &step) const {
  const art::ExecProgram &program = *loaded.program;
  const bool perLogitRow = exec::runsPerLogitRow(program, program.launches(index));
  // A GEMM's prologue, when the GEMV that runs the GEMM over the same rows
  // folds it; a paged attention's rotary, when its decode or KV write does.
  if (const int folder = loaded.folded.prologueOf[size_t(index)]; folder >= 0) {
    if (program.launches(folder).kind() == art::Launch::GEMM) {
      const bool gemmPerLogitRow = exec::runsPerLogitRow(program, program.launches(folder));
      if (gemmPerLogitRow == perLogitRow)
        if (const art::CudaLaunch *gemv =
                gemvFor(loaded, folder, perLogitRow ? step.logitRows : step.tokens);
            gemv && gemv->fuses_previous())
          return true;
    } else if (runsDecode(loaded, folder, step) || fusesRotary(loaded, folder)) {
      return true;
    }
  }
  // A gated activation the GEMV before it writes.
  if (const int writer = loaded.folded.epilogueOf[size_t(index)]; writer >= 0)
    return !exec::runsPerLogitRow(program, program.launches(writer)) &&
           foldsNextActivation(loaded, writer, step.tokens);
  return false;
}

Status CudaBackend::launchDequantizedGemm(const LoadedProgram &loaded, int index,
                                          const exec::LaunchArgs &args) {
  const art::CudaLaunch &cuda = loaded.launches->Get(index);
  const exec::View &out = args.outputs[0];
  ASSIGN_OR_RETURN(int64_t n, args.intAttr("n"));
  ASSIGN_OR_RETURN(int64_t k, args.intAttr("k"));
  const int64_t element = int64_t(art::elementSize(out.type));
  const CUdeviceptr weight = loaded.quantScratch;
  const CUdeviceptr inputs =
      weight + CUdeviceptr(art::quantizationScratchInputsOffset(n, k, element));
  if (!weight)
    return args.error("has no quantization scratch");
  exec::LaunchArgs gemm = args;
  if (loaded.roundInputs[size_t(index)]) {
    ASSIGN_OR_RETURN(PackedParams round,
                     packQuantizedGemmParams(args, reinterpret_cast<void *>(inputs)));
    RETURN_IF_ERROR(
        launchKernel(cuda.dequantize().prologue(), loaded.roundInputs[size_t(index)], args, round));
    for (size_t i = 0; i < gemm.roles.size(); ++i)
      if (gemm.roles[i] == art::ROLE_INPUT)
        gemm.operands[i].data = reinterpret_cast<void *>(inputs);
  }
  ASSIGN_OR_RETURN(PackedParams dequantize,
                   packQuantizedGemmParams(args, reinterpret_cast<void *>(weight)));
  RETURN_IF_ERROR(
      launchKernel(cuda.dequantize(), loaded.dequantizes[size_t(index)], args, dequantize));
  exec::View dequantized;
  dequantized.data = reinterpret_cast<void *>(weight);
  dequantized.type = out.type;
  dequantized.elements = n * k;
  dequantized.shape = {n, k};
  gemm.roles.push_back(art::ROLE_WEIGHT);
  gemm.operands.push_back(dequantized);
  lastLaunchWasKernel_ = false;
  return gemm_->run(gemm, stream_, /*transposed=*/true);
}

Status CudaBackend::launchFp8Gemm(const LoadedProgram &loaded, int index,
                                  const exec::LaunchArgs &args) {
  const art::CudaLaunch &cuda = loaded.launches->Get(index);
  ASSIGN_OR_RETURN(int64_t k, args.intAttr("k"));
  const CUdeviceptr inputs = loaded.quantScratch;
  if (!inputs)
    return args.error("has no quantization scratch");
  ASSIGN_OR_RETURN(PackedParams params,
                   packQuantizedGemmParams(args, reinterpret_cast<void *>(inputs)));
  RETURN_IF_ERROR(launchKernel(cuda.fp8_gemm(), loaded.fp8Inputs[size_t(index)], args, params));
  const CUdeviceptr scales =
      inputs + CUdeviceptr(kernels::quantizedFp8ScalesOffset(args.tokens, k));
  lastLaunchWasKernel_ = false;
  return gemm_->runFp8(args, stream_, reinterpret_cast<const void *>(inputs),
                       reinterpret_cast<const float *>(scales));
}

Status CudaBackend::launch(const LoadedProgram &loaded, int index, const exec::LaunchArgs &args,
                           const StepContext *step) {
  const art::CudaLaunch &cuda = loaded.launches->Get(index);
  if (cuda.has_fp8_gemm() && args.tokens > int64_t(cuda.max_rows()) &&
      loaded.fp8Inputs[size_t(index)])
    return launchFp8Gemm(loaded, index, args);
  if (cuda.has_dequantize() && args.tokens > int64_t(cuda.max_rows()) &&
      loaded.dequantizes[size_t(index)])
    return launchDequantizedGemm(loaded, index, args);
  if (cuda.runner() == art::CudaLaunch::CUBLASLT) {
    CUfunction function = nullptr;
    if (const art::CudaLaunch *gemv = gemvFor(loaded, index, args.tokens, &function)) {
      exec::LaunchArgs folded, gated;
      bool fuses = gemv->fuses_previous();
      if (fuses) {
        const int prologue = loaded.folded.prologue[size_t(index)];
        if (prologue < 0)
          return args.error("has a GEMV that folds a prologue but records no prologue_launch");
        folded = resolve(loaded, prologue, sizesOf(args));
      }
      bool foldsNext = foldsNextActivation(loaded, index, args.tokens);
      if (foldsNext)
        gated = resolve(loaded, loaded.folded.epilogue[size_t(index)], sizesOf(args));
      // infer_gemv_rows loads its first weights before it waits by itself.
      bool prefetch = gemv == &cuda.gemv() && programmaticNext();
      // The sampler after it reads the argmax instead of the logits.
      const bool foldsArgmax = gemv->folds_argmax() && argmaxWanted_ && argmaxSlot_;
      auto *argmax = foldsArgmax ? reinterpret_cast<unsigned long long *>(argmaxSlot_) : nullptr;
      ASSIGN_OR_RETURN(PackedParams params,
                       packGemvParams(args, reinterpret_cast<float *>(gemvWorkspace_),
                                      reinterpret_cast<unsigned int *>(gemvCounters_),
                                      fuses ? &folded : nullptr,
                                      prefetch ? kGemvPrefetchBytes : 0,
                                      foldsNext ? &gated : nullptr, argmax));
      if (foldsArgmax)
        argmaxFolded_ = true;
      return launchKernel(*gemv, function, args, params);
    }
    lastLaunchWasKernel_ = false;
    return gemm_->run(args, stream_);
  }
  ASSIGN_OR_RETURN(PackedParams params, packKernelParams(args, step));
  // A quantized GEMM of one token (batch-1 decode): its one-token instance.
  if (loaded.program->launches(index).kind() == art::Launch::QUANTIZED_GEMM && args.tokens == 1 &&
      cuda.has_gemv_single_row() && loaded.gemvRows[size_t(index)])
    return launchKernel(cuda.gemv_single_row(), loaded.gemvRows[size_t(index)], args, params);
  const bool decodeKernel = runsDecode(loaded, index, sizesOf(args));
  const int rotaryIndex = loaded.folded.prologue[size_t(index)];
  if ((decodeKernel || fusesRotary(loaded, index)) && rotaryIndex < 0)
    return args.error("has fused rotary kernels but records no prologue_launch");
  if (decodeKernel) {
    // The rotary launch was skipped (launchAll): this kernel rotates what it
    // reads, writes the cache and attends.
    exec::LaunchArgs rotary = resolve(loaded, rotaryIndex, sizesOf(args));
    StatusOr<PackedParams> fused = packKvDecodeParams(rotary, params);
    if (fused.ok())
      return launchKernel(cuda.decode(), loaded.decodes[size_t(index)], args, *fused);
    // Rows or a cache the kernel cannot take: the rotary, then as below.
    RETURN_IF_ERROR(launch(loaded, rotaryIndex, rotary, step));
  }
  if (fusesRotary(loaded, index) && !decodeKernel) {
    // The rotary launch was skipped (launchAll): run it here, with the KV
    // write.
    exec::LaunchArgs rotary = resolve(loaded, rotaryIndex, sizesOf(args));
    ASSIGN_OR_RETURN(PackedParams fused, packRotaryKvWriteParams(rotary, params));
    RETURN_IF_ERROR(launchKernel(cuda.fused_prologue(), loaded.fusedPrologues[size_t(index)],
                                 args, fused));
  } else if (cuda.has_prologue()) {
    RETURN_IF_ERROR(launchKernel(cuda.prologue(), loaded.prologues[size_t(index)], args, params));
  }
  // Prefill chunks of a step: the tensor-core tiles; decode tokens: one
  // block per token (docs/kv-cache.md, "Kernels").
  if (cuda.has_prefill() && loaded.prefills[size_t(index)] &&
      args.maxNewTokens >= kPrefillMinNewTokens)
    return launchKernel(cuda.prefill(), loaded.prefills[size_t(index)], args, params);
  RETURN_IF_ERROR(launchKernel(cuda, loaded.functions[size_t(index)], args, params));
  for (int s = 0; s < cuda.stages_size(); ++s)
    RETURN_IF_ERROR(
        launchKernel(cuda.stages(s), loaded.stages[size_t(index)][size_t(s)], args, params));
  return okStatus();
}

std::optional<uint32_t> CudaBackend::identityGatherSource(const LoadedProgram &loaded, int index,
                                                          const exec::BoundInputs &step) const {
  const art::Launch &launch = loaded.program->launches(index);
  if (launch.kind() != art::Launch::GATHER_ROWS || launch.outputs_size() != 1 ||
      !art::boolAttribute(launch, "elidable") || step.sequences <= 0 ||
      step.tokens != step.sequences || step.logitRows != step.tokens)
    return std::nullopt;
  // One token a sequence, packed in order, and one logit row each: logit row
  // i is the last (only) token of sequence i, row i.
  return art::operandBuffer(launch, art::ROLE_INPUT);
}

Status CudaBackend::launchAll(const LoadedProgram &loaded, const exec::BoundInputs &step,
                              const StepContext *context, KindTimes *perKind) {
  CUevent before = nullptr, after = nullptr;
  if (perKind) {
    INFER_CU_CHECK(*api_, api_->cuEventCreate(&before, CU_EVENT_DEFAULT));
    INFER_CU_CHECK(*api_, api_->cuEventCreate(&after, CU_EVENT_DEFAULT));
  }
  Status status = okStatus();
  lastLaunchWasKernel_ = false; // the step's upload came last
  programmaticStep_ = options_.programmaticLaunch == ProgrammaticLaunch::All ||
                      (options_.programmaticLaunch == ProgrammaticLaunch::Decode &&
                       step.tokens <= kernels::kGemvMaxRows);
  int count = loaded.program->launches_size();
  qkvDecodeLaunches_ = 0;
  elidedGatherOutput_ = -1;
  int fusedAttention = -1; // a KV_ATTENTION run by infer_qkv_decode
  for (int i = 0; i < count && status.ok(); ++i) {
    if (i == fusedAttention)
      continue;
    // Not in a profiled step: its table times the GEMM and the attention apart.
    if (!perKind && runsQkvDecode(loaded, i, step)) {
      bool fused = false;
      status = launchQkvDecode(loaded, i, step, context, fused);
      if (fused)
        fusedAttention = loaded.folded.qkvAttentionOf[size_t(i)];
      if (fused || !status.ok())
        continue;
    }
    // Done by the kernels of the launch that folds it (CudaLaunch's
    // prologue_launch / epilogue_launch).
    if (runByAnother(loaded, i, step))
      continue;
    // A decode step's logits are of every row in order: the launches after
    // the gather read its input (bufferView), one copy kernel fewer.
    if (!perKind)
      if (std::optional<uint32_t> source = identityGatherSource(loaded, i, step)) {
        gatherSource_ = *source;
        elidedGatherOutput_ = loaded.program->launches(i).outputs(0);
        continue;
      }
    exec::LaunchArgs args = resolve(loaded, i, step);
    if (perKind)
      api_->cuEventRecord(before, stream_);
    status = launch(loaded, i, args, context);
    if (perKind)
      lastLaunchWasKernel_ = false; // an event comes between
    if (perKind && status.ok()) {
      api_->cuEventRecord(after, stream_);
      api_->cuEventSynchronize(after);
      float ms = 0;
      api_->cuEventElapsedTime(&ms, before, after);
      (*perKind)[art::launchKindName(loaded.program->launches(i).kind())] += ms;
    }
  }
  elidedGatherOutput_ = -1;
  if (perKind) {
    api_->cuEventDestroy(before);
    api_->cuEventDestroy(after);
  }
  return status;
}

Status CudaBackend::enqueue(const exec::BoundInputs &step, KindTimes *perKind) {
  for (int i = 0; i < program_->inputs_size(); ++i) {
    exec::View view = bufferView(forward_, program_->inputs(i).buffer(), step);
    INFER_CU_CHECK(*api_, api_->cuMemcpyDtoDAsync(reinterpret_cast<CUdeviceptr>(view.data),
                                                  inputStaging_[size_t(i)],
                                                  sizeof(int64_t) * size_t(step.tokens), stream_));
  }
  return launchAll(forward_, step, nullptr, perKind);
}

StatusOr<std::vector<NamedArray>> CudaBackend::forward(const std::vector<NamedArray> &inputs) {
  ASSIGN_OR_RETURN(exec::BoundInputs step, upload(inputs));
  RETURN_IF_ERROR(run(step));
  std::vector<NamedArray> outputs;
  std::vector<std::vector<unsigned char>> raw;
  for (const art::Binding &binding : program_->outputs()) {
    exec::View view = bufferView(forward_, binding.buffer(), step);
    raw.emplace_back(static_cast<size_t>(view.elements) * art::elementSize(view.type));
    INFER_CU_CHECK(*api_, api_->cuMemcpyDtoHAsync(raw.back().data(),
                                                  reinterpret_cast<CUdeviceptr>(view.data),
                                                  raw.back().size(), stream_));
  }
  INFER_CU_CHECK(*api_, api_->cuStreamSynchronize(stream_));
  for (int i = 0; i < program_->outputs_size(); ++i) {
    const art::Binding &binding = program_->outputs(i);
    exec::View view = bufferView(forward_, binding.buffer(), step);
    HostArray array;
    array.shape = exec::outputShape(reader_.manifest().model(), binding.name(), step.batch,
                                    step.seq, view.elements);
    const std::vector<unsigned char> &bytes = raw[size_t(i)];
    if (view.type == art::ELEMENT_TYPE_BF16 || view.type == art::ELEMENT_TYPE_F16) {
      // 16-bit outputs come back as float32 (every value exactly representable).
      array.type = art::ELEMENT_TYPE_F32;
      array.bytes.resize(static_cast<size_t>(view.elements) * 4);
      for (int64_t e = 0; e < view.elements; ++e) {
        uint16_t bits;
        std::memcpy(&bits, bytes.data() + 2 * e, 2);
        float value = view.type == art::ELEMENT_TYPE_BF16 ? lowp::floatFromBF16(bits)
                                                          : lowp::floatFromF16(bits);
        std::memcpy(array.bytes.data() + 4 * e, &value, 4);
      }
    } else {
      array.type = view.type;
      array.bytes = bytes;
    }
    outputs.emplace_back(binding.name(), std::move(array));
  }
  return outputs;
}

StatusOr<double> CudaBackend::timeSteps(const exec::BoundInputs &step, int iterations,
                                        bool graphs) {
  CUevent start = nullptr, stop = nullptr;
  INFER_CU_CHECK(*api_, api_->cuEventCreate(&start, CU_EVENT_DEFAULT));
  INFER_CU_CHECK(*api_, api_->cuEventCreate(&stop, CU_EVENT_DEFAULT));
  INFER_CU_CHECK(*api_, api_->cuEventRecord(start, stream_));
  Status status = okStatus();
  for (int i = 0; i < iterations && status.ok(); ++i)
    status = graphs ? run(step) : enqueue(step);
  api_->cuEventRecord(stop, stream_);
  api_->cuEventSynchronize(stop);
  float ms = 0;
  api_->cuEventElapsedTime(&ms, start, stop);
  api_->cuEventDestroy(start);
  api_->cuEventDestroy(stop);
  RETURN_IF_ERROR(status);
  INFER_CU_CHECK(*api_, api_->cuStreamSynchronize(stream_));
  return double(ms) / std::max(iterations, 1);
}

StatusOr<double> CudaBackend::timeForward(const std::vector<NamedArray> &inputs, int warmup,
                                          int iterations, KindTimes *perKind) {
  ASSIGN_OR_RETURN(exec::BoundInputs step, upload(inputs));
  for (int i = 0; i < std::max(warmup, 2); ++i) // the second run captures the graph
    RETURN_IF_ERROR(run(step));
  ASSIGN_OR_RETURN(double ms, timeSteps(step, iterations, /*graphs=*/true));
  if (perKind) {
    RETURN_IF_ERROR(enqueue(step, perKind));
    INFER_CU_CHECK(*api_, api_->cuStreamSynchronize(stream_));
  }
  return ms;
}

StatusOr<double> CudaBackend::timeForwardWithoutGraph(const std::vector<NamedArray> &inputs,
                                                      int iterations) {
  ASSIGN_OR_RETURN(exec::BoundInputs step, upload(inputs));
  RETURN_IF_ERROR(enqueue(step));
  return timeSteps(step, iterations, /*graphs=*/false);
}

} // namespace infer::cuda
