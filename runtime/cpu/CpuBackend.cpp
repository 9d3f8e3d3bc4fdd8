//===- CpuBackend.cpp - runs an artifact's exec program on the host -------===//

#include "runtime/cpu/CpuBackend.h"

#include "runtime/artifact/ArtifactFormat.h"
#include "runtime/base/LowPrecision.h"
#include "runtime/exec/ProgramIO.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

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
  for (size_t i = 0; i < reader.numWeights(); ++i) {
    art::WeightView weight = reader.weight(i);
    View view;
    view.type = weight.entry->element_type();
    view.shape.assign(weight.entry->shape().begin(), weight.entry->shape().end());
    view.elements = static_cast<int64_t>(weight.size / art::elementSize(view.type));
    view.data = const_cast<void *>(weight.data);
    if (isHalf(view.type) || view.type == art::ELEMENT_TYPE_F64) {
      backend->converted_.push_back(toF32(weight.data, view.type, view.elements));
      view.data = backend->converted_.back().data();
      view.type = art::ELEMENT_TYPE_F32;
    }
    backend->weights_.push_back(std::move(view));
  }
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

StatusOr<std::vector<NamedArray>> CpuBackend::forward(const std::vector<NamedArray> &inputs) {
  const art::ExecProgram &program = *program_;
  const art::ModelInfo &model = reader_.manifest().model();
  ASSIGN_OR_RETURN(exec::BoundInputs bound, exec::bindInputs(program, inputs));
  int64_t batch = bound.batch, seq = bound.seq, tokens = bound.tokens;

  // The arena at T: at least its recorded size, and every buffer's slot
  // (offsets are planned at the bound and stay valid below it). bf16/f16
  // buffers hold f32 values rounded to their type ("compute in fp32, store
  // rounded", as the reference interpreter does): when there are any, every
  // offset and size is scaled by 2 so that each 16-bit slot fits its f32
  // values, which keeps the planner's non-overlap.
  int64_t scale = 1;
  for (const art::Buffer &buffer : program.buffers())
    if (isHalf(buffer.element_type()))
      scale = 2;
  int64_t arenaBytes = scale * affineAt(program.arena().size(), tokens);
  for (const art::Buffer &buffer : program.buffers())
    arenaBytes = std::max(arenaBytes, scale * (affineAt(buffer.offset(), tokens) +
                                               affineAt(buffer.size(), tokens)));
  size_t allocation = (static_cast<size_t>(arenaBytes) + 255) / 256 * 256 + 256;
  std::unique_ptr<void, FreeDeleter> arena(std::aligned_alloc(256, allocation));
  if (!arena)
    return resourceExhaustedError("cannot allocate the " + std::to_string(arenaBytes) +
                                  "-byte arena");
  std::memset(arena.get(), 0, allocation);
  auto bufferView = [&](uint32_t id) {
    const art::Buffer &buffer = program.buffers(static_cast<int>(id));
    View view;
    view.isBuffer = true;
    view.type = buffer.element_type();
    view.data = static_cast<char *>(arena.get()) + scale * affineAt(buffer.offset(), tokens);
    view.elements = affineAt(buffer.size(), tokens) / static_cast<int64_t>(art::elementSize(view.type));
    if (isHalf(view.type))
      view.type = art::ELEMENT_TYPE_F32;
    return view;
  };
  // Rounds a bf16/f16 buffer's f32 values to its type (RNE), as stored.
  auto roundBuffer = [&](uint32_t id) {
    art::ElementType type = program.buffers(static_cast<int>(id)).element_type();
    if (!isHalf(type))
      return;
    View view = bufferView(id);
    float *values = view.mutableF32();
    for (int64_t e = 0; e < view.elements; ++e)
      values[e] = type == art::ELEMENT_TYPE_BF16 ? lowp::roundToBF16(values[e])
                                                 : lowp::roundToF16(values[e]);
  };

  for (int i = 0; i < program.inputs_size(); ++i) {
    View view = bufferView(program.inputs(i).buffer());
    if (view.type != art::ELEMENT_TYPE_I64 || view.elements != tokens)
      return failedPreconditionError("input '" + program.inputs(i).name() +
                                     "' has a buffer the cpu backend cannot fill");
    std::vector<int64_t> ids = exec::tokenIds(*bound.arrays[static_cast<size_t>(i)]);
    std::memcpy(view.data, ids.data(), sizeof(int64_t) * ids.size());
  }

  for (int i = 0; i < program.launches_size(); ++i) {
    const art::Launch &launch = program.launches(i);
    Kernel kernel = kernelFor(launch.kind());
    if (!kernel)
      return unimplementedError("launch " + std::to_string(i) + ": kind " +
                                std::to_string(launch.kind()) + " has no cpu kernel");
    LaunchArgs args;
    args.launch = &launch;
    args.index = i;
    args.batch = batch;
    args.seq = seq;
    args.tokens = tokens;
    for (const art::Operand &operand : launch.operands()) {
      args.roles.push_back(operand.role());
      const art::Ref &ref = operand.ref();
      if (ref.target_case() == art::Ref::kBuffer)
        args.operands.push_back(bufferView(ref.buffer()));
      else if (ref.target_case() == art::Ref::kWeight)
        args.operands.push_back(weights_[ref.weight()]);
      else
        args.operands.push_back(constants_[ref.constant()]);
    }
    for (uint32_t output : launch.outputs())
      args.outputs.push_back(bufferView(output));
    RETURN_IF_ERROR(kernel(args));
    for (uint32_t output : launch.outputs())
      roundBuffer(output);
  }

  std::vector<NamedArray> outputs;
  for (const art::Binding &binding : program.outputs()) {
    View view = bufferView(binding.buffer());
    HostArray array;
    array.type = view.type;
    array.shape = exec::outputShape(model, binding.name(), batch, seq, view.elements);
    array.bytes.resize(static_cast<size_t>(view.elements) * art::elementSize(view.type));
    std::memcpy(array.bytes.data(), view.data, array.bytes.size());
    outputs.emplace_back(binding.name(), std::move(array));
  }
  return outputs;
}

} // namespace infer::cpu
