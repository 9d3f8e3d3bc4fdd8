//===- ArtifactReader.cpp - opens and verifies model.infer ----------------===//

#include "runtime/artifact/ArtifactReader.h"

#include <cerrno>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <limits>
#include <optional>

namespace infer::artifact {
namespace {

std::string num(uint64_t value) { return std::to_string(value); }

std::string hex(uint64_t value) {
  char text[19];
  std::snprintf(text, sizeof(text), "0x%016llx", static_cast<unsigned long long>(value));
  return text;
}

/// Checks one weight entry against the weight section (`sectionSize` bytes).
Status checkWeight(int index, const Weight &weight, uint64_t sectionSize) {
  std::string what = "weight " + num(index) + " '" + weight.name() + "'";
  uint64_t elementBytes = elementSize(weight.element_type());
  if (elementBytes == 0)
    return dataLossError(what + " has an unknown element type (" +
                         num(static_cast<uint64_t>(weight.element_type())) + ")");
  uint64_t elements = 1;
  for (int64_t dim : weight.shape()) {
    if (dim < 0)
      return dataLossError(what + " has a negative dimension");
    if (dim != 0 && elements > std::numeric_limits<uint64_t>::max() / 16 / static_cast<uint64_t>(dim))
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
  if (elementBytes == 0 || __builtin_mul_overflow(elements, elementBytes, &bytes) ||
      bytes != constant.data().size())
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
  if (bound <= 0 || !arenaBytes)
    return dataLossError(prefix + "the arena has no valid size at its bound of " +
                         std::to_string(bound) + " tokens");
  for (int i = 0; i < program.buffers_size(); ++i) {
    const Buffer &buffer = program.buffers(i);
    std::string what = prefix + "buffer " + num(i);
    if (buffer.id() != static_cast<uint32_t>(i))
      return dataLossError(what + " has id " + num(buffer.id()));
    if (elementSize(buffer.element_type()) == 0)
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
    for (const Operand &operand : launch.operands()) {
      const Ref &ref = operand.ref();
      bool inRange = (ref.target_case() == Ref::kBuffer && ref.buffer() < numBuffers) ||
                     (ref.target_case() == Ref::kWeight &&
                      ref.weight() < static_cast<uint32_t>(numWeights)) ||
                     (ref.target_case() == Ref::kConstant &&
                      ref.constant() < static_cast<uint32_t>(program.constants_size()));
      if (!inRange)
        return dataLossError(what + " operand '" + operand.role() +
                             "' refers to no buffer, weight or constant of the artifact");
    }
    if (launch.outputs_size() == 0)
      return dataLossError(what + " writes no buffer");
    for (uint32_t output : launch.outputs())
      if (output >= numBuffers)
        return dataLossError(what + " writes buffer " + num(output) + " of " + num(numBuffers));
    if (launch.kind() == Launch::COPY &&
        (launch.operands_size() != 1 || launch.outputs_size() != 1))
      return dataLossError(what + " (copy) must read one operand and write one buffer");
    if (launch.kind() == Launch::ELEMENTWISE) {
      const Region &region = launch.region();
      uint64_t defined = static_cast<uint64_t>(region.arguments_size());
      if (defined != static_cast<uint64_t>(launch.operands_size()) ||
          static_cast<int>(region.yields_size()) != launch.outputs_size())
        return dataLossError(what + "'s region does not match its inputs and outputs");
      for (const RegionOp &op : region.ops()) {
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

} // namespace

StatusOr<std::unique_ptr<ArtifactReader>> ArtifactReader::open(const std::string &path,
                                                               Options options) {
  std::unique_ptr<ArtifactReader> reader(new ArtifactReader());
  reader->path_ = path;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return errnoError(errno, "cannot open '" + path + "'");
  struct stat info;
  if (::fstat(fd, &info) != 0) {
    Status status = errnoError(errno, "cannot stat '" + path + "'");
    ::close(fd);
    return status;
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd);
    return invalidArgumentError("'" + path + "' is not a regular file");
  }
  reader->size_ = static_cast<uint64_t>(info.st_size);
  if (reader->size_ > 0) {
    void *mapping = ::mmap(nullptr, reader->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (mapping == MAP_FAILED) {
      Status status = errnoError(errno, "cannot mmap '" + path + "'");
      ::close(fd);
      return status;
    }
    reader->base_ = static_cast<const unsigned char *>(mapping);
  }
  // The mapping stays valid without the descriptor.
  ::close(fd);
  if (Status status = reader->verify(options); !status.ok())
    return status.withPrefix(path);
  return reader;
}

ArtifactReader::~ArtifactReader() {
  if (base_) {
    // Nothing useful to do if unmapping fails at teardown.
    (void)::munmap(const_cast<unsigned char *>(base_), size_);
  }
}

Status ArtifactReader::verify(Options options) {
  static const unsigned char empty[1] = {0};
  ASSIGN_OR_RETURN(header_, decodeHeader(base_ ? base_ : empty, size_));
  if (options.verifyChecksum) {
    uint64_t actual = hash64(base_ + header_.headerSize, size_ - header_.headerSize);
    if (actual != header_.payloadHash)
      return dataLossError("checksum mismatch: the file is corrupted (xxh64 of the payload is " +
                           hex(actual) + ", the header says " + hex(header_.payloadHash) + ")");
  }
  if (header_.manifestSize > static_cast<uint64_t>(std::numeric_limits<int>::max()) ||
      !manifest_.ParseFromArray(base_ + header_.manifestOffset,
                                static_cast<int>(header_.manifestSize)))
    return dataLossError("the manifest (" + num(header_.manifestSize) +
                         " bytes) is not a valid protobuf Manifest");
  if (manifest_.weight_section_size() != header_.weightsSize)
    return dataLossError("the manifest's weight section is " +
                         num(manifest_.weight_section_size()) + " bytes, the header's " +
                         num(header_.weightsSize));
  for (int i = 0; i < manifest_.weights_size(); ++i) {
    const Weight &weight = manifest_.weights(i);
    RETURN_IF_ERROR(checkWeight(i, weight, header_.weightsSize));
    if (!byName_.emplace(weight.name(), static_cast<size_t>(i)).second)
      return dataLossError("weight name '" + weight.name() + "' appears twice");
  }
  if (manifest_.has_exec())
    RETURN_IF_ERROR(checkExecProgram(manifest_.exec(), manifest_.weights_size()));
  if (manifest_.has_cuda()) {
    RETURN_IF_ERROR(checkCudaModule(manifest_.cuda(), manifest_.exec()));
    if (manifest_.cuda().step_launches_size() > 0 &&
        manifest_.cuda().step_launches_size() != manifest_.step().launches_size())
      return dataLossError("GPU code: " + num(manifest_.cuda().step_launches_size()) +
                           " step launch records for " + num(manifest_.step().launches_size()) +
                           " step launches");
  }
  if (manifest_.has_step())
    RETURN_IF_ERROR(checkExecProgram(manifest_.step(), manifest_.weights_size(), "step program: "));
  return okStatus();
}

WeightView ArtifactReader::weight(size_t index) const {
  const Weight &entry = manifest_.weights(static_cast<int>(index));
  WeightView view;
  view.entry = &entry;
  view.data = base_ + header_.weightsOffset + entry.offset();
  view.size = static_cast<size_t>(entry.size());
  return view;
}

StatusOr<WeightView> ArtifactReader::weight(std::string_view name) const {
  auto found = byName_.find(std::string(name));
  if (found == byName_.end())
    return notFoundError("no weight named '" + std::string(name) + "' in " + path_);
  return weight(found->second);
}

} // namespace infer::artifact
