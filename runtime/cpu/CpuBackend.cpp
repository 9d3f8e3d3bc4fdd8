//===- CpuBackend.cpp - runs an artifact's exec program on the host -------===//

#include "runtime/cpu/CpuBackend.h"

#include "runtime/artifact/ArtifactFormat.h"
#include "runtime/base/HostMemory.h"
#include "runtime/base/LowPrecision.h"
#include "runtime/exec/ProgramIO.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <algorithm>

namespace infer::cpu {
namespace art = artifact;
using exec::affineAt;
namespace {

bool isHalf(art::ElementType type) {
  return type == art::ELEMENT_TYPE_BF16 || type == art::ELEMENT_TYPE_F16;
}

/// `elements` values of `type` at `data` (bf16, f16 or f64) as f32.
std::vector<float> toF32(const void *data, art::ElementType type, int64_t elements) {
  std::vector<float> values(static_cast<size_t>(elements));
  for (int64_t e = 0; e < elements; ++e) {
    if (type == art::ELEMENT_TYPE_F64) {
      double x;
      std::memcpy(&x, static_cast<const char *>(data) + 8 * e, 8);
      values[e] = float(x);
    } else {
      uint16_t bits;
      std::memcpy(&bits, static_cast<const char *>(data) + 2 * e, 2);
      values[e] = type == art::ELEMENT_TYPE_BF16 ? lowp::floatFromBF16(bits)
                                                 : lowp::floatFromF16(bits);
    }
  }
  return values;
}

struct FreeDeleter {
  void operator()(void *pointer) const { std::free(pointer); }
};

using Kernel = Status (*)(const LaunchArgs &);

Kernel kernelFor(art::Launch::Kind kind) {
  switch (kind) {
  case art::Launch::EMBEDDING:
    return runEmbedding;
  case art::Launch::RMS_NORM:
    return runRmsNorm;
  case art::Launch::LAYER_NORM:
    return runLayerNorm;
  case art::Launch::GEMM:
    return runGemm;
  case art::Launch::QUANTIZED_GEMM:
    return runQuantizedGemm;
  case art::Launch::ROTARY:
    return runRotary;
  case art::Launch::ATTENTION:
    return runAttention;
  case art::Launch::GATED_ACTIVATION:
    return runGatedActivation;
  case art::Launch::ELEMENTWISE:
    return runElementwise;
  case art::Launch::COPY:
    return runCopy;
  case art::Launch::GATHER_ROWS:
    return runGatherRows;
  case art::Launch::MOE:
    return runMoe;
  default:
    return nullptr;
  }
}

} // namespace

StatusOr<std::unique_ptr<CpuBackend>> CpuBackend::create(const art::ArtifactReader &reader) {
  const art::Manifest &manifest = reader.manifest();
  if (!manifest.has_exec())
    return failedPreconditionError(reader.path() +
                                   ": the artifact has no exec program (it can be inspected, "
                                   "not run); recompile it with infer-compile -o");
  std::unique_ptr<CpuBackend> backend(new CpuBackend(reader));
  backend->program_ = &manifest.exec();
  // The weights are copied out of the file (pread) into memory the backend
  // owns: nothing reads the artifact after create(), so truncating or
  // rewriting it during a run cannot fault (SIGBUS) or change what runs.
  uint64_t weightBytes = 0;
  for (const art::Weight &weight : manifest.weights()) {
    bool converted =
        isHalf(weight.element_type()) || weight.element_type() == art::ELEMENT_TYPE_F64;
    // A converted weight is read, then widened: both copies live a moment.
    weightBytes += weight.size() +
                   (converted ? weight.size() / art::elementSize(weight.element_type()) * 4 : 0);
  }
  RETURN_IF_ERROR(checkHostMemory(reader.path() + ": the weights on the cpu backend", weightBytes,
                                  availableHostMemoryBytes()));
  for (size_t i = 0; i < reader.numWeights(); ++i) {
    const art::Weight &entry = manifest.weights(static_cast<int>(i));
    View view;
    view.type = entry.element_type();
    view.shape.assign(entry.shape().begin(), entry.shape().end());
    view.elements = static_cast<int64_t>(entry.size() / art::elementSize(view.type));
    std::vector<uint64_t> raw((entry.size() + 7) / 8);
    RETURN_IF_ERROR(reader.readWeight(i, raw.data()));
    if (isHalf(view.type) || view.type == art::ELEMENT_TYPE_F64) {
      backend->converted_.push_back(toF32(raw.data(), view.type, view.elements));
      view.data = backend->converted_.back().data();
      view.type = art::ELEMENT_TYPE_F32;
    } else {
      backend->weightData_.push_back(std::move(raw));
      view.data = backend->weightData_.back().data();
    }
    backend->weights_.push_back(std::move(view));
  }
  RETURN_IF_ERROR(reader.checkUnchanged());
  for (const art::Constant &constant : backend->program_->constants()) {
    std::vector<uint64_t> storage((constant.data().size() + 7) / 8);
    std::memcpy(storage.data(), constant.data().data(), constant.data().size());
    backend->constantData_.push_back(std::move(storage));
    View view;
    view.type = constant.element_type();
    view.shape.assign(constant.shape().begin(), constant.shape().end());
    view.elements = static_cast<int64_t>(constant.data().size() / art::elementSize(view.type));
    view.data = backend->constantData_.back().data();
    if (isHalf(view.type)) { // held as f32, like bf16/f16 buffers
      backend->converted_.push_back(toF32(view.data, view.type, view.elements));
      view.data = backend->converted_.back().data();
      view.type = art::ELEMENT_TYPE_F32;
    }
    backend->constants_.push_back(std::move(view));
  }
  return backend;
}

namespace {

/// The arena of one run of `program` at T = tokens (see forward()).
struct ArenaRun {
  const art::ExecProgram *program = nullptr;
  int64_t tokens = 0, scale = 1;
  int64_t logitRows = 0; ///< R of the step program's per_logit_row buffers
  std::unique_ptr<void, FreeDeleter> memory;

  View bufferView(uint32_t id) const {
    const art::Buffer &buffer = program->buffers(static_cast<int>(id));
    View view;
    view.isBuffer = true;
    view.type = buffer.element_type();
    view.data = static_cast<char *>(memory.get()) + scale * affineAt(buffer.offset(), tokens);
    view.elements = exec::bufferElements(buffer, tokens, logitRows);
    if (isHalf(view.type))
      view.type = art::ELEMENT_TYPE_F32;
    return view;
  }
  // Rounds a bf16/f16 buffer's f32 values to its type (RNE), as stored.
  void roundBuffer(uint32_t id) const {
    art::ElementType type = program->buffers(static_cast<int>(id)).element_type();
    if (!isHalf(type))
      return;
    View view = bufferView(id);
    float *values = view.mutableF32();
    for (int64_t e = 0; e < view.elements; ++e)
      values[e] = type == art::ELEMENT_TYPE_BF16 ? lowp::roundToBF16(values[e])
                                                 : lowp::roundToF16(values[e]);
  }
};

/// Allocates the arena at T: at least its recorded size, and every buffer's
/// slot (offsets are planned at the bound and stay valid below it). bf16/f16
/// buffers hold f32 values rounded to their type ("compute in fp32, store
/// rounded", as the reference interpreter does): when there are any, every
/// offset and size is scaled by 2 so that each 16-bit slot fits its f32
/// values, which keeps the planner's non-overlap.
StatusOr<ArenaRun> allocateArena(const art::ExecProgram &program, int64_t tokens) {
  ArenaRun run;
  run.program = &program;
  run.tokens = tokens;
  run.logitRows = tokens;
  for (const art::Buffer &buffer : program.buffers())
    if (isHalf(buffer.element_type()))
      run.scale = 2;
  int64_t arenaBytes = run.scale * affineAt(program.arena().size(), tokens);
  for (const art::Buffer &buffer : program.buffers())
    arenaBytes = std::max(arenaBytes, run.scale * (affineAt(buffer.offset(), tokens) +
                                                   affineAt(buffer.size(), tokens)));
  size_t allocation = (static_cast<size_t>(arenaBytes) + 255) / 256 * 256 + 256;
  // aligned_alloc may succeed on an overcommitting kernel and the memset
  // then meet the OOM killer: ask first.
  if (allocation > (size_t(64) << 20))
    RETURN_IF_ERROR(checkHostMemory("the activations at " + std::to_string(tokens) + " tokens",
                                    allocation, availableHostMemoryBytes()));
  run.memory.reset(std::aligned_alloc(256, allocation));
  if (!run.memory)
    return resourceExhaustedError("cannot allocate the " + std::to_string(arenaBytes) +
                                  "-byte arena");
  std::memset(run.memory.get(), 0, allocation);
  return run;
}

} // namespace

Status CpuBackend::runLaunches(const art::ExecProgram &program, const void *arenaRun,
                               int64_t batch, int64_t seq) {
  const ArenaRun &run = *static_cast<const ArenaRun *>(arenaRun);
  for (int i = 0; i < program.launches_size(); ++i) {
    const art::Launch &launch = program.launches(i);
    Kernel kernel = kernelFor(launch.kind());
    if (!kernel && launch.kind() != art::Launch::KV_ATTENTION)
      return unimplementedError("launch " + std::to_string(i) + ": kind " +
                                std::to_string(launch.kind()) + " has no cpu kernel");
    LaunchArgs args;
    args.launch = &launch;
    args.index = i;
    // A launch after the step program's logit-row gather (the LM head and any row-wise op
    // after it, e.g. a logit scale) runs on the R gathered rows: [1, R] in place of [1, T].
    const bool perLogitRow = exec::runsPerLogitRow(program, launch);
    args.batch = perLogitRow ? 1 : batch;
    args.seq = perLogitRow ? run.logitRows : seq;
    args.tokens = perLogitRow ? run.logitRows : run.tokens;
    for (const art::Operand &operand : launch.operands()) {
      args.roles.push_back(operand.role());
      const art::Ref &ref = operand.ref();
      if (ref.target_case() == art::Ref::kBuffer)
        args.operands.push_back(run.bufferView(ref.buffer()));
      else if (ref.target_case() == art::Ref::kWeight)
        args.operands.push_back(weights_[ref.weight()]);
      else
        args.operands.push_back(constants_[ref.constant()]);
    }
    for (uint32_t output : launch.outputs())
      args.outputs.push_back(run.bufferView(output));
    if (launch.kind() == art::Launch::KV_ATTENTION) {
      int64_t layer = args.intAttr("layer", -1);
      if (layer < 0 || layer >= static_cast<int64_t>(kvLayers_.size()))
        return args.error("names KV layer " + std::to_string(layer) + " of " +
                          std::to_string(kvLayers_.size()) + " (is the KV cache allocated?)");
      KvLayerView cache;
      cache.data = kvLayers_[static_cast<size_t>(layer)].data();
      cache.numBlocks = kvNumBlocks_;
      cache.blockSize = reader_.manifest().kv_cache().block_size();
      cache.kvHeads = reader_.manifest().kv_cache().num_kv_heads();
      cache.headDim = reader_.manifest().kv_cache().head_dim();
      RETURN_IF_ERROR(runKvAttention(args, cache));
    } else {
      RETURN_IF_ERROR(kernel(args));
    }
    for (uint32_t output : launch.outputs())
      run.roundBuffer(output);
  }
  return okStatus();
}

StatusOr<std::vector<NamedArray>> CpuBackend::forward(const std::vector<NamedArray> &inputs) {
  const art::ExecProgram &program = *program_;
  const art::ModelInfo &model = reader_.manifest().model();
  ASSIGN_OR_RETURN(exec::BoundInputs bound, exec::bindInputs(program, inputs));
  int64_t batch = bound.batch, seq = bound.seq, tokens = bound.tokens;
  ASSIGN_OR_RETURN(ArenaRun run, allocateArena(program, tokens));

  for (int i = 0; i < program.inputs_size(); ++i) {
    View view = run.bufferView(program.inputs(i).buffer());
    if (view.type != art::ELEMENT_TYPE_I64 || view.elements != tokens)
      return failedPreconditionError("input '" + program.inputs(i).name() +
                                     "' has a buffer the cpu backend cannot fill");
    std::vector<int64_t> ids = exec::tokenIds(*bound.arrays[static_cast<size_t>(i)]);
    std::memcpy(view.data, ids.data(), sizeof(int64_t) * ids.size());
  }
  RETURN_IF_ERROR(runLaunches(program, &run, batch, seq));

  std::vector<NamedArray> outputs;
  for (const art::Binding &binding : program.outputs()) {
    View view = run.bufferView(binding.buffer());
    HostArray array;
    array.type = view.type;
    array.shape = exec::outputShape(model, binding.name(), batch, seq, view.elements);
    array.bytes.resize(static_cast<size_t>(view.elements) * art::elementSize(view.type));
    std::memcpy(array.bytes.data(), view.data, array.bytes.size());
    outputs.emplace_back(binding.name(), std::move(array));
  }
  return outputs;
}

namespace {

/// The arena of `program` at its bound, as allocateArena sizes it.
uint64_t arenaBytesAtBound(const art::ExecProgram &program) {
  int64_t bound = program.arena().bound_tokens();
  int64_t scale = 1;
  for (const art::Buffer &buffer : program.buffers())
    if (isHalf(buffer.element_type()))
      scale = 2;
  int64_t bytes = affineAt(program.arena().size(), bound);
  for (const art::Buffer &buffer : program.buffers())
    bytes = std::max(bytes, affineAt(buffer.offset(), bound) + affineAt(buffer.size(), bound));
  return uint64_t(scale * bytes);
}

} // namespace

Backend::KvCacheCapacity CpuBackend::kvCacheCapacity() {
  KvCacheCapacity capacity;
  if (!hasStep())
    return capacity;
  const art::KvCacheLayout &layout = reader_.manifest().kv_cache();
  capacity.blockBytes = uint64_t(2 * layout.block_size() * layout.num_kv_heads() *
                                 layout.head_dim() * layout.num_layers()) *
                        4;
  uint64_t available = availableHostMemoryBytes();
  uint64_t arena = arenaBytesAtBound(reader_.manifest().step());
  capacity.availableBytes = available > arena ? available - arena : 0;
  return capacity;
}

bool CpuBackend::hasStep() const {
  return reader_.manifest().has_step() && reader_.manifest().has_kv_cache();
}

Status CpuBackend::allocateKvCache(int64_t numBlocks) {
  if (!hasStep())
    return failedPreconditionError(reader_.path() +
                                   ": the artifact has no step program (recompile it with "
                                   "this infer-compile; its note says why a model has none)");
  const art::KvCacheLayout &layout = reader_.manifest().kv_cache();
  if (numBlocks < 2)
    return invalidArgumentError("the KV cache needs at least 2 blocks (block 0 is the null "
                                "block), got " + std::to_string(numBlocks));
  // The reader bounded the layout (ManifestChecks.cpp), so one block's
  // floats fit easily; the block count is the caller's.
  uint64_t blockFloats =
      uint64_t(2 * layout.block_size() * layout.num_kv_heads() * layout.head_dim());
  uint64_t layerFloats = 0, bytes = 0;
  if (__builtin_mul_overflow(uint64_t(numBlocks), blockFloats, &layerFloats) ||
      __builtin_mul_overflow(layerFloats, uint64_t(4 * layout.num_layers()), &bytes))
    bytes = UINT64_MAX;
  kvLayers_.clear();
  RETURN_IF_ERROR(checkHostMemory("a KV cache of " + std::to_string(numBlocks) + " blocks", bytes,
                                  availableHostMemoryBytes()));
  kvLayers_.assign(static_cast<size_t>(layout.num_layers()),
                   std::vector<float>(static_cast<size_t>(layerFloats), 0.0f));
  kvNumBlocks_ = numBlocks;
  return okStatus();
}

StatusOr<std::vector<float>> CpuBackend::step(const StepArrays &arrays, int64_t &vocab) {
  if (kvLayers_.empty() && reader_.manifest().kv_cache().num_layers() > 0)
    return failedPreconditionError("step: the KV cache is not allocated");
  const art::ExecProgram &program = reader_.manifest().step();
  const art::KvCacheLayout &layout = reader_.manifest().kv_cache();
  RETURN_IF_ERROR(exec::checkStepArrays(program, arrays, layout.max_blocks_per_sequence()));
  int64_t tokens = static_cast<int64_t>(arrays.tokenIds.size());
  const std::vector<int64_t> &rows = arrays.logitIndices;
  for (int64_t row : rows)
    if (row < 0 || row >= tokens)
      return invalidArgumentError("step: logit row " + std::to_string(row) + " is not one of the " +
                                  std::to_string(tokens) + " tokens");
  bool gathered = exec::gathersLogitRows(program);
  ASSIGN_OR_RETURN(ArenaRun run, allocateArena(program, tokens));
  run.logitRows = gathered ? static_cast<int64_t>(rows.size()) : tokens;
  for (const art::Binding &binding : program.inputs()) {
    View view = run.bufferView(binding.buffer());
    const std::string &name = binding.name();
    const std::vector<int64_t> *source = exec::stepInput(arrays, name);
    // Empty sequences after the last; block tables pad with the null block.
    int64_t padding = name == "seq_starts" ? tokens : 0;
    if (!source || view.type != art::ELEMENT_TYPE_I64 ||
        view.elements < static_cast<int64_t>(source->size()))
      return failedPreconditionError("step program input '" + name +
                                     "' has a buffer the cpu backend cannot fill");
    std::memcpy(view.data, source->data(), sizeof(int64_t) * source->size());
    int64_t *values = static_cast<int64_t *>(view.data);
    std::fill(values + source->size(), values + view.elements, padding);
  }
  RETURN_IF_ERROR(runLaunches(program, &run, /*batch=*/1, /*seq=*/tokens));
  if (program.outputs_size() != 1)
    return failedPreconditionError("step program: expected one output (the logits)");
  View logits = run.bufferView(program.outputs(0).buffer());
  if (logits.type != art::ELEMENT_TYPE_F32 || logits.elements % run.logitRows != 0)
    return failedPreconditionError("step program: the logits are not [rows, vocab] floats");
  vocab = logits.elements / run.logitRows;
  if (gathered)
    return std::vector<float>(logits.f32(), logits.f32() + logits.elements);
  std::vector<float> selected;
  selected.reserve(rows.size() * static_cast<size_t>(vocab));
  for (int64_t row : rows)
    selected.insert(selected.end(), logits.f32() + row * vocab, logits.f32() + (row + 1) * vocab);
  return selected;
}

} // namespace infer::cpu
