//===- CpuBackend.cpp - runs an artifact's exec program on the host -------===//

#include "runtime/cpu/CpuBackend.h"

#include "runtime/artifact/ArtifactFormat.h"
#include "runtime/base/LowPrecision.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

namespace infer::cpu {
namespace art = artifact;
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

int64_t affineAt(const art::Affine &value, int64_t tokens) { return value.a() * tokens + value.b(); }

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

StatusOr<std::vector<NamedArray>> CpuBackend::forward(const std::vector<NamedArray> &inputs) const {
  const art::ExecProgram &program = *program_;
  const art::ModelInfo &model = reader_.manifest().model();
  std::string known;
  for (const art::Binding &binding : program.inputs())
    known += (known.empty() ? "" : ", ") + binding.name();
  // Every input named, every name known, each [batch, seq] of one batch and seq.
  std::vector<const HostArray *> bound(static_cast<size_t>(program.inputs_size()), nullptr);
  for (const NamedArray &input : inputs) {
    int found = -1;
    for (int i = 0; i < program.inputs_size(); ++i)
      if (program.inputs(i).name() == input.first)
        found = i;
    if (found < 0)
      return notFoundError("the model has no input named '" + input.first + "' (its inputs: " +
                           known + ")");
    bound[static_cast<size_t>(found)] = &input.second;
  }
  int64_t batch = -1, seq = -1;
  for (int i = 0; i < program.inputs_size(); ++i) {
    const std::string &name = program.inputs(i).name();
    const HostArray *array = bound[static_cast<size_t>(i)];
    if (!array)
      return invalidArgumentError("input '" + name + "' is not given (the model's inputs: " +
                                  known + ")");
    if (array->shape.size() != 2)
      return invalidArgumentError("input '" + name + "' must be [batch, seq], got rank " +
                                  std::to_string(array->shape.size()));
    if (array->type != art::ELEMENT_TYPE_I64 && array->type != art::ELEMENT_TYPE_I32)
      return invalidArgumentError("input '" + name + "' must hold int64 token ids, got " +
                                  art::elementTypeName(array->type));
    if (batch >= 0 && (array->shape[0] != batch || array->shape[1] != seq))
      return invalidArgumentError("inputs disagree on [batch, seq]");
    batch = array->shape[0];
    seq = array->shape[1];
  }
  int64_t tokens = batch * seq;
  int64_t bound_tokens = program.arena().bound_tokens();
  if (batch <= 0 || seq <= 0)
    return invalidArgumentError("the input is empty (batch " + std::to_string(batch) + ", seq " +
                                std::to_string(seq) + ")");
  if (tokens > bound_tokens)
    return invalidArgumentError(
        std::to_string(tokens) + " tokens (batch " + std::to_string(batch) + " x seq " +
        std::to_string(seq) + ") exceed the artifact's bound of " + std::to_string(bound_tokens) +
        " batch tokens; recompile with --max-batch-tokens " + std::to_string(tokens) + " or more");

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
    const HostArray &array = *bound[static_cast<size_t>(i)];
    View view = bufferView(program.inputs(i).buffer());
    if (view.type != art::ELEMENT_TYPE_I64 || view.elements != tokens)
      return failedPreconditionError("input '" + program.inputs(i).name() +
                                     "' has a buffer the cpu backend cannot fill");
    int64_t *dst = static_cast<int64_t *>(view.data);
    for (int64_t t = 0; t < tokens; ++t) {
      if (array.type == art::ELEMENT_TYPE_I64) {
        std::memcpy(&dst[t], array.bytes.data() + 8 * t, 8);
      } else {
        int32_t value;
        std::memcpy(&value, array.bytes.data() + 4 * t, 4);
        dst[t] = value;
      }
    }
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
    const art::TensorSpec *spec = nullptr;
    for (const art::TensorSpec &candidate : model.outputs())
      if (candidate.name() == binding.name())
        spec = &candidate;
    if (spec) {
      for (int d = 0; d < spec->dims_size(); ++d) {
        const art::Dim &dim = spec->dims(d);
        if (dim.kind_case() == art::Dim::kSize)
          array.shape.push_back(dim.size());
        else if (d == 0)
          array.shape.push_back(batch);
        else if (d == 1)
          array.shape.push_back(seq);
        else
          array.shape.push_back(-1);
      }
    }
    int64_t known = 1, unknown = 0;
    for (int64_t dim : array.shape)
      dim < 0 ? ++unknown : known *= dim;
    if (!spec || unknown > 1 || (unknown == 0 && known != view.elements)) {
      array.shape = {batch, seq, view.elements / tokens};
    } else if (unknown == 1) {
      for (int64_t &dim : array.shape)
        if (dim < 0)
          dim = view.elements / known;
    }
    array.bytes.resize(static_cast<size_t>(view.elements) * art::elementSize(view.type));
    std::memcpy(array.bytes.data(), view.data, array.bytes.size());
    outputs.emplace_back(binding.name(), std::move(array));
  }
  return outputs;
}

} // namespace infer::cpu
