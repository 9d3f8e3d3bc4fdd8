//===- CudaStep.cpp - the step program (paged KV cache) on the GPU --------===//
//
// The cuda backend's half of docs/kv-cache.md "The step program": one cache
// allocation per layer ([num_blocks, 2, block_size, kv_heads, head_dim] of the
// activation type), the step arena allocated on the first step at the
// program's token bound, the metadata arrays copied into their buffers, the
// launches enqueued (kv_attention: the KV write, then paged attention), and
// only the requested logit rows copied back.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/CudaBackend.h"

#include "runtime/artifact/ArtifactFormat.h"
#include "runtime/base/LowPrecision.h"

#include <cstring>

namespace infer::cuda {
namespace art = artifact;

bool CudaBackend::hasStep() const { return step_.program != nullptr; }

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
  kvNumBlocks_ = numBlocks;
  stepContext_.maxBlocksPerSeq = layout.max_blocks_per_sequence();
  INFER_CU_CHECK(*api_, api_->cuStreamSynchronize(stream_));
  return okStatus();
}

StatusOr<std::vector<float>> CudaBackend::step(const StepArrays &arrays,
                                               const std::vector<int32_t> &rows, int64_t &vocab) {
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
  INFER_CU_CHECK(*api_, api_->cuCtxSetCurrent(context_));
  if (!step_.arena)
    RETURN_IF_ERROR(allocateArena(step_));
  exec::BoundInputs shape;
  shape.batch = 1;
  shape.seq = tokens;
  shape.tokens = tokens;
  for (int index = 0; index < program.launches_size(); ++index) {
    const art::Launch &launch = program.launches(index);
    if (launch.kind() != art::Launch::EMBEDDING)
      continue;
    exec::LaunchArgs args = resolve(step_, index, shape);
    ASSIGN_OR_RETURN(int64_t hidden, args.intAttr("hidden"));
    int64_t rowsOfTable = hidden > 0 ? args.operand("table")->elements / hidden : 0;
    for (int64_t id : arrays.tokenIds)
      if (id < 0 || id >= rowsOfTable)
        return invalidArgumentError("token id " + std::to_string(id) +
                                    " is outside the vocabulary [0, " +
                                    std::to_string(rowsOfTable) + ")");
    if (const exec::View *table = args.operand("position_table")) {
      int64_t positionRows = table->elements / hidden - args.intAttr("position_offset", 0);
      for (int64_t position : arrays.positions)
        if (position < 0 || position >= positionRows)
          return invalidArgumentError("position " + std::to_string(position) +
                                      " is beyond the model's " + std::to_string(positionRows) +
                                      " learned positions");
    }
  }
  for (const art::Binding &binding : program.inputs()) {
    const std::string &name = binding.name();
    const std::vector<int64_t> *source = exec::stepInput(arrays, name);
    exec::View view = bufferView(step_, binding.buffer(), tokens);
    if (!source || view.type != art::ELEMENT_TYPE_I64 ||
        view.elements < static_cast<int64_t>(source->size()))
      return failedPreconditionError("step program input '" + name +
                                     "' has a buffer the cuda backend cannot fill");
    INFER_CU_CHECK(*api_, api_->cuMemcpyHtoDAsync(reinterpret_cast<CUdeviceptr>(view.data),
                                                  source->data(),
                                                  sizeof(int64_t) * source->size(), stream_));
  }
  stepContext_.numSeqs = sequences;
  for (int index = 0; index < program.launches_size(); ++index) {
    exec::LaunchArgs args = resolve(step_, index, shape);
    RETURN_IF_ERROR(launch(step_, index, args, &stepContext_));
  }
  if (program.outputs_size() != 1)
    return failedPreconditionError("step program: expected one output (the logits)");
  exec::View logits = bufferView(step_, program.outputs(0).buffer(), tokens);
  uint64_t elementBytes = art::elementSize(logits.type);
  if (logits.elements % tokens != 0 ||
      (logits.type != art::ELEMENT_TYPE_F32 && logits.type != art::ELEMENT_TYPE_BF16 &&
       logits.type != art::ELEMENT_TYPE_F16))
    return failedPreconditionError("step program: the logits are not [T, vocab] floats");
  vocab = logits.elements / tokens;
  std::vector<unsigned char> raw(rows.size() * size_t(vocab) * elementBytes);
  for (size_t r = 0; r < rows.size(); ++r) {
    if (rows[r] < 0 || rows[r] >= tokens)
      return invalidArgumentError("step: logit row " + std::to_string(rows[r]) +
                                  " is not one of the " + std::to_string(tokens) + " tokens");
    CUdeviceptr from = reinterpret_cast<CUdeviceptr>(logits.data) +
                       uint64_t(rows[r]) * uint64_t(vocab) * elementBytes;
    INFER_CU_CHECK(*api_, api_->cuMemcpyDtoHAsync(raw.data() + r * size_t(vocab) * elementBytes,
                                                  from, size_t(vocab) * elementBytes, stream_));
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

} // namespace infer::cuda
