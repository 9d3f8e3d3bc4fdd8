//===- ManifestChecks.cpp - every manifest field checked before use --------===//

#include "runtime/artifact/ManifestChecks.h"
#include "runtime/artifact/TuningRecords.h"

#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <string>

namespace infer::artifact {
namespace {

std::string num(uint64_t value) { return std::to_string(value); }

/// An integer field in [lo, hi], or DataLoss "<what> is V, outside [lo, hi]".
Status checkRange(const std::string &what, int64_t value, int64_t lo, int64_t hi) {
  if (value >= lo && value <= hi)
    return okStatus();
  return dataLossError(what + " is " + std::to_string(value) + ", outside [" + std::to_string(lo) +
                       ", " + std::to_string(hi) + "]");
}

/// The integer attributes the backends read, with the range each must lie in
/// (an attribute left out takes the kernel's default or is an error there).
struct IntAttributeRange {
  const char *name;
  int64_t lo, hi;
};
constexpr IntAttributeRange kIntAttributes[] = {
    {"hidden", 1, kMaxFeatures},    {"features", 1, kMaxFeatures},      {"k", 1, kMaxFeatures},
    {"n", 1, kMaxFeatures},         {"in_features", 1, kMaxFeatures},   {"length", 1, kMaxFeatures},
    {"offset", 0, kMaxFeatures},    {"position_offset", 0, kMaxTokens}, {"num_heads", 1, kMaxHeads},
    {"num_kv_heads", 1, kMaxHeads}, {"rotated_heads", 0, kMaxHeads},    {"head_dim", 1, kMaxHeads},
    {"rotary_dim", 0, kMaxHeads},   {"block_size", 1, kMaxHeads},       {"layer", 0, kMaxHeads},
};

/// The attributes of a launch other than ELEMENTWISE (whose region the
/// elementwise kernels check op by op): known integers within their range,
/// every float finite.
Status checkLaunchAttributes(const std::string &what, const Launch &launch) {
  for (const Attribute &attribute : launch.attributes()) {
    const std::string name = what + " attribute '" + attribute.name() + "'";
    if (attribute.value_case() == Attribute::kFloatValue && !std::isfinite(attribute.float_value()))
      return dataLossError(name + " is not a finite number");
    for (const IntAttributeRange &range : kIntAttributes) {
      if (attribute.name() != range.name)
        continue;
      if (attribute.value_case() != Attribute::kIntValue)
        return dataLossError(name + " is not an integer");
      RETURN_IF_ERROR(checkRange(name, attribute.int_value(), range.lo, range.hi));
    }
  }
  return okStatus();
}

/// Checks one weight entry against the weight section (`sectionSize` bytes).
Status checkWeight(int index, const Weight &weight, uint64_t sectionSize) {
  std::string what = "weight " + num(index) + " '" + weight.name() + "'";
  uint64_t elementBytes = elementSize(weight.element_type());
  if (elementBytes == 0 || weight.element_type() == ELEMENT_TYPE_F8E4M3)
    return dataLossError(what + " has an unknown element type (" +
                         num(static_cast<uint64_t>(weight.element_type())) + ")");
  uint64_t elements = 1;
  for (int64_t dim : weight.shape()) {
    if (dim < 0)
      return dataLossError(what + " has a negative dimension");
    if (dim != 0 &&
        elements > std::numeric_limits<uint64_t>::max() / 16 / static_cast<uint64_t>(dim))
      return dataLossError(what + " has an impossibly large shape");
    elements *= static_cast<uint64_t>(dim);
  }
  if (weight.size() != elements * elementBytes)
    return dataLossError(what + " is " + num(weight.size()) + " bytes, its shape and type need " +
                         num(elements * elementBytes));
  if (weight.offset() % kWeightAlignment != 0)
    return dataLossError(what + " at offset " + num(weight.offset()) + " is not " +
                         num(kWeightAlignment) + "-byte aligned");
  if (weight.offset() > sectionSize || weight.size() > sectionSize - weight.offset())
    return dataLossError(what + " [" + num(weight.offset()) + ", +" + num(weight.size()) +
                         ") lies outside the weight section (" + num(sectionSize) +
                         " bytes) or past the end of the file");
  return okStatus();
}

/// `value` at `tokens` tokens, or nullopt on a negative term or overflow.
std::optional<uint64_t> affineAt(const Affine &value, int64_t tokens) {
  int64_t product = 0, sum = 0;
  if (value.a() < 0 || value.b() < 0 || tokens < 0 ||
      __builtin_mul_overflow(value.a(), tokens, &product) ||
      __builtin_add_overflow(product, value.b(), &sum))
    return std::nullopt;
  return static_cast<uint64_t>(sum);
}

Status checkConstant(const std::string &what, const Constant &constant) {
  uint64_t elements = 1;
  for (int64_t dim : constant.shape())
    if (dim < 0 || __builtin_mul_overflow(elements, static_cast<uint64_t>(dim), &elements))
      return dataLossError(what + " has an invalid shape");
  uint64_t elementBytes = elementSize(constant.element_type());
  uint64_t bytes = 0;
  if (elementBytes == 0 || constant.element_type() == ELEMENT_TYPE_F8E4M3 ||
      __builtin_mul_overflow(elements, elementBytes, &bytes) || bytes != constant.data().size())
    return dataLossError(what + " holds " + num(constant.data().size()) +
                         " bytes, its shape and type need " + num(bytes));
  return okStatus();
}

/// Checks the GPU code against the program: one record per launch, a kernel
/// name for every kernel launch, a grid of at most three dimensions, code.
Status checkCudaModule(const CudaModule &module, const ExecProgram &program) {
  const std::string prefix = "GPU code: ";
  if (module.cubin().empty() && module.ptx().empty())
    return dataLossError(prefix + "no cubin and no PTX");
  for (int i = 0; i < module.extra_cubins_size(); ++i)
    if (module.extra_cubins(i).cubin().empty() || module.extra_cubins(i).functions().empty())
      return dataLossError(prefix + "extra cubin " + num(i) + " is empty or names no kernel");
  if (module.launches_size() != program.launches_size())
    return dataLossError(prefix + num(module.launches_size()) + " launch records for " +
                         num(program.launches_size()) + " launches");
  for (int i = 0; i < module.launches_size(); ++i) {
    const CudaLaunch &launch = module.launches(i);
    std::string what = prefix + "launch " + num(i);
    if (launch.runner() == CudaLaunch::KERNEL &&
        (launch.function().empty() || launch.grid_size() == 0 || launch.grid_size() > 3 ||
         launch.block_x() == 0 || launch.block_x() > 1024))
      return dataLossError(what + " has no kernel name, grid or block");
    if (launch.runner() == CudaLaunch::CUBLASLT && program.launches(i).kind() != Launch::GEMM)
      return dataLossError(what + " runs cuBLASLt for a launch that is not a GEMM");
    if (launch.runner() == CudaLaunch::RUNNER_UNSPECIFIED)
      return dataLossError(what + " has no runner");
    // The runtime sizes the GEMV's split-k workspace from this grid.
    if (launch.has_gemv()) {
      const CudaLaunch &gemv = launch.gemv();
      for (int d = 0; d < gemv.grid_size(); ++d) {
        const GridDim &dim = gemv.grid(d);
        if (dim.symbol() != GridDim::ONE || dim.divisor() > 1 || dim.multiplier() < 1 ||
            dim.multiplier() > (d == 0 ? 0x7fffffffLL : 65535LL))
          return dataLossError(what + "'s GEMV grid is not a constant size");
      }
    }
  }
  return okStatus();
}

/// Checks the exec program's structure: every id in range, every buffer
/// inside the arena at the bound, constants sized by their shape and type.
Status checkExecProgram(const ExecProgram &program, int numWeights,
                        const std::string &prefix = "exec program: ") {
  int64_t bound = program.arena().bound_tokens();
  std::optional<uint64_t> arenaBytes = affineAt(program.arena().size(), bound);
  if (bound <= 0 || bound > kMaxTokens || !arenaBytes || *arenaBytes > kMaxArenaBytes)
    return dataLossError(prefix + "the arena has no valid size at its bound of " +
                         std::to_string(bound) + " tokens");
  for (int i = 0; i < program.buffers_size(); ++i) {
    const Buffer &buffer = program.buffers(i);
    std::string what = prefix + "buffer " + num(i);
    if (buffer.id() != static_cast<uint32_t>(i))
      return dataLossError(what + " has id " + num(buffer.id()));
    // f8e4m3 is a KV cache element only (KvCacheLayout), no buffer's.
    if (elementSize(buffer.element_type()) == 0 || buffer.element_type() == ELEMENT_TYPE_F8E4M3)
      return dataLossError(what + " has an unknown element type");
    std::optional<uint64_t> offset = affineAt(buffer.offset(), bound);
    std::optional<uint64_t> size = affineAt(buffer.size(), bound);
    uint64_t end = 0;
    if (!offset || !size || __builtin_add_overflow(*offset, *size, &end) || end > *arenaBytes)
      return dataLossError(what + " lies outside the arena (" + num(*arenaBytes) + " bytes at " +
                           std::to_string(bound) + " tokens)");
  }
  auto numBuffers = static_cast<uint32_t>(program.buffers_size());
  for (int i = 0; i < program.constants_size(); ++i) {
    if (program.constants(i).id() != static_cast<uint32_t>(i))
      return dataLossError(prefix + "constant " + num(i) + " has id " +
                           num(program.constants(i).id()));
    RETURN_IF_ERROR(checkConstant(prefix + "constant " + num(i), program.constants(i)));
  }
  for (const auto *bindings : {&program.inputs(), &program.outputs()})
    for (const Binding &binding : *bindings)
      if (binding.buffer() >= numBuffers)
        return dataLossError(prefix + "'" + binding.name() + "' is bound to buffer " +
                             num(binding.buffer()) + " of " + num(numBuffers));
  for (int i = 0; i < program.launches_size(); ++i) {
    const Launch &launch = program.launches(i);
    std::string what = prefix + "launch " + num(i);
    if (launch.kind() == Launch::KIND_UNSPECIFIED || !Launch::Kind_IsValid(launch.kind()))
      return dataLossError(what + " has an unknown kind " + std::to_string(launch.kind()));
    if (launch.kind() != Launch::ELEMENTWISE)
      RETURN_IF_ERROR(checkLaunchAttributes(what, launch));
    for (const Operand &operand : launch.operands()) {
      if (operand.role() == ROLE_UNSPECIFIED || !OperandRole_IsValid(operand.role()))
        return dataLossError(what + " has an operand of unknown role " +
                             std::to_string(operand.role()));
      const Ref &ref = operand.ref();
      bool inRange =
          (ref.target_case() == Ref::kBuffer && ref.buffer() < numBuffers) ||
          (ref.target_case() == Ref::kWeight && ref.weight() < static_cast<uint32_t>(numWeights)) ||
          (ref.target_case() == Ref::kConstant &&
           ref.constant() < static_cast<uint32_t>(program.constants_size()));
      if (!inRange)
        return dataLossError(what + " operand '" + operandRoleName(operand.role()) +
                             "' refers to no buffer, weight or constant of the artifact");
    }
    if (launch.outputs_size() == 0)
      return dataLossError(what + " writes no buffer");
    for (uint32_t output : launch.outputs())
      if (output >= numBuffers)
        return dataLossError(what + " writes buffer " + num(output) + " of " + num(numBuffers));
    if (launch.kind() == Launch::COPY &&
        ((launch.operands_size() != 1 && launch.operands_size() != 2) ||
         launch.outputs_size() != 1 ||
         (launch.operands_size() == 2 && launch.operands(1).role() != artifact::ROLE_MAP)))
      return dataLossError(what + " (copy) must read its input (and a map) and write one buffer");
    if (launch.kind() == Launch::ELEMENTWISE) {
      const Region &region = launch.region();
      uint64_t defined = static_cast<uint64_t>(region.arguments_size());
      if (defined != static_cast<uint64_t>(launch.operands_size()) ||
          static_cast<int>(region.yields_size()) != launch.outputs_size())
        return dataLossError(what + "'s region does not match its inputs and outputs");
      for (const TensorType &type : region.arguments())
        for (int64_t dim : type.shape())
          RETURN_IF_ERROR(checkRange(what + ": a region argument dim", dim, -1, kMaxFeatures));
      for (const RegionOp &op : region.ops()) {
        for (const TensorType &type : op.results())
          for (int64_t dim : type.shape())
            RETURN_IF_ERROR(
                checkRange(what + ": a dim of '" + op.name() + "'", dim, -1, kMaxFeatures));
        for (uint32_t operand : op.operands())
          if (operand >= defined)
            return dataLossError(what + ": '" + op.name() + "' uses value " + num(operand) +
                                 " before it is defined");
        defined += static_cast<uint64_t>(op.results_size());
      }
      for (uint32_t value : region.yields())
        if (value >= defined)
          return dataLossError(what + " yields undefined value " + num(value));
    }
  }
  return okStatus();
}

/// The KV cache layout against itself and against the step program's
/// KV_ATTENTION launches: each layer 0..num_layers-1 read by exactly one
/// launch, with the layout's block size, KV heads and head dim.
Status checkKvCache(const KvCacheLayout &kv, const ExecProgram &step) {
  const std::string prefix = "kv cache: ";
  // A step program without attention (infer-compile writes an empty layout
  // for it): nothing is cached, nothing else to check.
  bool attends = false;
  for (const Launch &launch : step.launches())
    attends |= launch.kind() == Launch::KV_ATTENTION;
  if (!attends && kv.num_layers() == 0)
    return checkRange(prefix + "max_seq_len", kv.max_seq_len(), 0, kMaxTokens);
  RETURN_IF_ERROR(checkRange(prefix + "block_size", kv.block_size(), 1, kMaxHeads));
  RETURN_IF_ERROR(checkRange(prefix + "num_layers", kv.num_layers(), 1, kMaxHeads));
  RETURN_IF_ERROR(checkRange(prefix + "num_kv_heads", kv.num_kv_heads(), 1, kMaxHeads));
  RETURN_IF_ERROR(checkRange(prefix + "head_dim", kv.head_dim(), 1, kMaxHeads));
  RETURN_IF_ERROR(checkRange(prefix + "max_seq_len", kv.max_seq_len(), 1, kMaxTokens));
  uint64_t elementBytes = elementSize(kv.element_type());
  if (elementBytes == 0)
    return dataLossError(prefix + "unknown element type " + std::to_string(kv.element_type()));
  int64_t perToken =
      2 * kv.num_layers() * kv.num_kv_heads() * kv.head_dim() * static_cast<int64_t>(elementBytes);
  if (kv.bytes_per_token() != perToken)
    return dataLossError(prefix + "bytes_per_token is " + std::to_string(kv.bytes_per_token()) +
                         ", its layout needs " + std::to_string(perToken));
  int64_t blocks = (kv.max_seq_len() + kv.block_size() - 1) / kv.block_size();
  if (kv.max_blocks_per_sequence() != blocks)
    return dataLossError(prefix + "max_blocks_per_sequence is " +
                         std::to_string(kv.max_blocks_per_sequence()) + ", max_seq_len " +
                         std::to_string(kv.max_seq_len()) + " in blocks of " +
                         std::to_string(kv.block_size()) + " needs " + std::to_string(blocks));
  std::set<int64_t> layers;
  for (int i = 0; i < step.launches_size(); ++i) {
    const Launch &launch = step.launches(i);
    if (launch.kind() != Launch::KV_ATTENTION)
      continue;
    std::string what = "step program: launch " + num(i) + " (kv_attention) ";
    int64_t layer = intAttribute(launch, "layer", -1);
    if (layer < 0 || layer >= kv.num_layers() || !layers.insert(layer).second)
      return dataLossError(what + "names KV layer " + std::to_string(layer) + " of " +
                           std::to_string(kv.num_layers()) + " (or one another launch names)");
    for (auto [name, value] : {std::pair<const char *, int64_t>{"block_size", kv.block_size()},
                               {"num_kv_heads", kv.num_kv_heads()},
                               {"head_dim", kv.head_dim()}})
      if (intAttribute(launch, name, -1) != value)
        return dataLossError(what + "has " + name + " " +
                             std::to_string(intAttribute(launch, name, -1)) +
                             ", the KV cache layout " + std::to_string(value));
  }
  if (static_cast<int64_t>(layers.size()) != kv.num_layers())
    return dataLossError(prefix + "num_layers is " + std::to_string(kv.num_layers()) +
                         " but the step program's attention reads " +
                         std::to_string(layers.size()) + " layers");
  return okStatus();
}

/// The model's input and output specs: sizes within bounds.
Status checkSpecs(const ModelInfo &model) {
  for (const auto *specs : {&model.inputs(), &model.outputs()})
    for (const TensorSpec &spec : *specs) {
      if (spec.dims_size() > 8)
        return dataLossError("model: '" + spec.name() + "' has " + num(spec.dims_size()) + " dims");
      for (const Dim &dim : spec.dims())
        if (dim.kind_case() == Dim::kSize)
          RETURN_IF_ERROR(
              checkRange("model: a dim of '" + spec.name() + "'", dim.size(), 0, kMaxFeatures));
    }
  return okStatus();
}

/// The text info: sizes as infer-compile bounds them, stop ids non-negative
/// (TextModel checks them against the tokenizer when it parses it).
Status checkText(const TextInfo &text) {
  if (text.tokenizer_json().empty() || text.tokenizer_json().size() > kMaxTokenizerJsonBytes)
    return dataLossError("text: the tokenizer is " + num(text.tokenizer_json().size()) +
                         " bytes, outside [1, " + num(kMaxTokenizerJsonBytes) + "]");
  if (text.chat_template().size() > kMaxTemplateBytes)
    return dataLossError("text: the chat template is " + num(text.chat_template().size()) +
                         " bytes, more than " + num(kMaxTemplateBytes));
  if (text.bos_token().size() > 65536 || text.eos_token().size() > 65536)
    return dataLossError("text: the bos or eos token is longer than 65536 bytes");
  for (int32_t id : text.stop_token_ids())
    if (id < 0)
      return dataLossError("text: stop token id " + std::to_string(id) + " is negative");
  return okStatus();
}

/// Grid records of a GPU launch and of every record nested in it.
Status checkGrids(const std::string &what, const CudaLaunch &launch, int depth = 0) {
  if (depth > 4)
    return dataLossError(what + " nests launch records too deeply");
  for (const GridDim &dim : launch.grid())
    if (dim.multiplier() < 0 || dim.multiplier() > 0x7fffffffLL || dim.divisor() < 0 ||
        dim.divisor() > 0x7fffffffLL)
      return dataLossError(what + " has a grid dimension outside [0, 2^31)");
  const google::protobuf::Reflection *reflection = launch.GetReflection();
  std::vector<const google::protobuf::FieldDescriptor *> fields;
  reflection->ListFields(launch, &fields);
  for (const google::protobuf::FieldDescriptor *field : fields) {
    if (field->message_type() != CudaLaunch::descriptor())
      continue;
    if (!field->is_repeated()) {
      RETURN_IF_ERROR(checkGrids(
          what, static_cast<const CudaLaunch &>(reflection->GetMessage(launch, field)), depth + 1));
      continue;
    }
    if (reflection->FieldSize(launch, field) > 8)
      return dataLossError(what + " has more than 8 stages");
    for (int i = 0; i < reflection->FieldSize(launch, field); ++i)
      RETURN_IF_ERROR(checkGrids(
          what, static_cast<const CudaLaunch &>(reflection->GetRepeatedMessage(launch, field, i)),
          depth + 1));
  }
  return okStatus();
}

} // namespace

Status checkManifest(const Manifest &manifest, uint64_t weightSectionSize) {
  if (manifest.weight_section_size() != weightSectionSize)
    return dataLossError("the manifest's weight section is " + num(manifest.weight_section_size()) +
                         " bytes, the header's " + num(weightSectionSize));
  RETURN_IF_ERROR(checkSpecs(manifest.model()));
  const CompileOptions &options = manifest.options();
  RETURN_IF_ERROR(
      checkRange("options: max_batch_tokens", options.max_batch_tokens(), 0, kMaxTokens));
  RETURN_IF_ERROR(checkRange("options: max_seq_len", options.max_seq_len(), 0, kMaxTokens));
  RETURN_IF_ERROR(checkRange("options: kv_block_size", options.kv_block_size(), 0, kMaxHeads));
  std::set<std::string> names;
  for (int i = 0; i < manifest.weights_size(); ++i) {
    const Weight &weight = manifest.weights(i);
    RETURN_IF_ERROR(checkWeight(i, weight, weightSectionSize));
    if (!names.insert(weight.name()).second)
      return dataLossError("weight name '" + weight.name() + "' appears twice");
  }
  if (manifest.has_exec())
    RETURN_IF_ERROR(checkExecProgram(manifest.exec(), manifest.weights_size()));
  if (manifest.has_step() != manifest.has_kv_cache())
    return dataLossError(manifest.has_step() ? "a step program without a KV cache layout"
                                             : "a KV cache layout without a step program");
  if (manifest.has_step()) {
    RETURN_IF_ERROR(checkExecProgram(manifest.step(), manifest.weights_size(), "step program: "));
    RETURN_IF_ERROR(checkKvCache(manifest.kv_cache(), manifest.step()));
  }
  if (manifest.has_cuda()) {
    RETURN_IF_ERROR(checkCudaModule(manifest.cuda(), manifest.exec()));
    if (manifest.cuda().step_launches_size() > 0 &&
        manifest.cuda().step_launches_size() != manifest.step().launches_size())
      return dataLossError("GPU code: " + num(manifest.cuda().step_launches_size()) +
                           " step launch records for " + num(manifest.step().launches_size()) +
                           " step launches");
    for (int i = 0; i < manifest.cuda().launches_size(); ++i)
      RETURN_IF_ERROR(checkGrids("GPU code: launch " + num(i), manifest.cuda().launches(i)));
    for (int i = 0; i < manifest.cuda().step_launches_size(); ++i)
      RETURN_IF_ERROR(
          checkGrids("GPU code: step launch " + num(i), manifest.cuda().step_launches(i)));
  }
  if (manifest.has_text())
    RETURN_IF_ERROR(checkText(manifest.text()));
  for (const TuningRecords &records : manifest.tuning())
    RETURN_IF_ERROR(checkTuningRecords(records));
  return okStatus();
}

} // namespace infer::artifact
