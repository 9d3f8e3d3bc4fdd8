//===- CudaQkvDecode.cpp - a batch-1 layer's qkv GEMV and attention -------===//
//
// CudaLaunch.qkv_decode (kernels/QkvDecode.cuh): in a batch-1 decode step the
// rms_norm + qkv GEMV and the infer_kv_decode two launches after it run as one
// grid, whose attention blocks start with the GEMV and poll its tagged
// outputs instead of waiting for the kernel boundary. The exchange holds one
// tagged word per qkv output; the tag is the step's serial (in the step's
// staging area, so that a captured graph reads each replay's) and the
// launch's number in the step.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/CudaBackend.h"

#include "runtime/artifact/ArtifactFormat.h"
#include "runtime/cuda/abi/KernelParams.h"
#include "runtime/cuda/abi/KvDecodeGeometry.h"

#include <algorithm>
#include <cstring>

namespace infer::cuda {
namespace art = artifact;

Status CudaBackend::allocateQkvExchange() {
  if (!step_.program)
    return okStatus();
  int64_t widest = 0;
  for (int i = 0; i < step_.launches->size(); ++i)
    if (const int gemm = step_.folded.qkvGemm[size_t(i)];
        gemm >= 0 && step_.launches->Get(i).has_qkv_decode())
      widest = std::max<int64_t>(widest, art::intAttribute(step_.program->launches(gemm), "n", 0));
  if (widest == 0)
    return okStatus();
  size_t bytes = size_t(widest) * sizeof(unsigned);
  INFER_CU_CHECK(*api_, api_->cuMemAlloc(&qkvExchange_, bytes));
  // Zero words carry tag 0; the first step's serial is 1.
  INFER_CU_CHECK(*api_, api_->cuMemsetD8Async(qkvExchange_, 0, bytes, stream_));
  INFER_CU_CHECK(*api_, api_->cuStreamSynchronize(stream_));
  return okStatus();
}

void CudaBackend::advanceStepSerial() {
  // A poll accepts a word whose tag is its own: the exchange holds the words
  // of at most the last two infer_qkv_decode launches before this step's
  // (each launch writes them all; the launch before the previous one
  // finished before the previous one's GEMV wrote). Within a run of steps
  // the layer byte and the serial byte keep consecutive tags apart; after
  // steps without the kernel (prefill, batches) the serial byte must still
  // differ from that last step's.
  do
    ++stepSerial_;
  while ((stepSerial_ & 0xff) == (lastQkvDecodeSerial_ & 0xff));
}

bool CudaBackend::runsQkvDecode(const LoadedProgram &loaded, int index,
                                const exec::BoundInputs &step) const {
  const int attentionIndex = loaded.folded.qkvAttentionOf[size_t(index)];
  if (!qkvDecodeStep(step) || attentionIndex < 0)
    return false;
  const art::CudaLaunch &attention = loaded.launches->Get(attentionIndex);
  if (!attention.has_qkv_decode() || !loaded.qkvDecodes[size_t(attentionIndex)] ||
      !runsDecode(loaded, attentionIndex, step))
    return false;
  const art::CudaLaunch &gemm = loaded.launches->Get(index);
  const art::CudaLaunch *gemv = gemvFor(loaded, index, step.tokens);
  return gemv && gemv == &gemm.gemv_single_row() && gemv->fuses_previous();
}

Status CudaBackend::launchQkvDecode(const LoadedProgram &loaded, int index,
                                    const exec::BoundInputs &step, const StepContext *context,
                                    bool &fused) {
  fused = false;
  // runsQkvDecode found the attention; its rotary and the GEMM's norm are
  // what they record (FoldedLaunches checked the kinds at load).
  const int attentionIndex = loaded.folded.qkvAttentionOf[size_t(index)];
  const int normIndex = loaded.folded.prologue[size_t(index)];
  const int rotaryIndex = loaded.folded.prologue[size_t(attentionIndex)];
  if (normIndex < 0 || rotaryIndex < 0)
    return okStatus(); // the two kernels as before
  exec::LaunchArgs gemm = resolve(loaded, index, step);
  exec::LaunchArgs norm = resolve(loaded, normIndex, step);
  exec::LaunchArgs rotary = resolve(loaded, rotaryIndex, step);
  exec::LaunchArgs attention = resolve(loaded, attentionIndex, step);
  ASSIGN_OR_RETURN(PackedParams gemv,
                   packGemvParams(gemm, reinterpret_cast<float *>(gemvWorkspace_),
                                  reinterpret_cast<unsigned int *>(gemvCounters_), &norm));
  ASSIGN_OR_RETURN(PackedParams attend, packKernelParams(attention, context));
  StatusOr<PackedParams> decode = packKvDecodeParams(rotary, attend);
  if (!decode.ok())
    return okStatus(); // the two kernels as before (launch() falls back likewise)
  kernels::QkvDecodeParams p{};
  if (gemv.bytes.size() != sizeof(p.gemv) || decode->bytes.size() != sizeof(p.decode))
    return internalError("infer_qkv_decode: parameter blocks of unexpected sizes");
  std::memcpy(&p.gemv, gemv.bytes.data(), sizeof(p.gemv));
  std::memcpy(&p.decode, decode->bytes.data(), sizeof(p.decode));
  // The attention reads the GEMV's output row as its rotary's input.
  if (p.gemv.output != p.decode.rotary.input || p.gemv.rows != 1 ||
      p.gemv.n != p.decode.rotary.numHeads * p.decode.rotary.headDim)
    return okStatus();
  p.exchange = reinterpret_cast<unsigned *>(qkvExchange_);
  p.stepSerial = reinterpret_cast<const unsigned long long *>(stepSerialDevice_);
  p.layer = qkvDecodeLaunches_++;
  p.attentionY = unsigned(kernels::kvDecodeGridY(attention.intAttr("num_heads", 1),
                                                 attention.intAttr("num_kv_heads", 1)));
  p.attentionZ = unsigned(kernels::kQkvDecodeSplits);
  PackedParams packed;
  packed.bytes.resize(sizeof(p));
  std::memcpy(packed.bytes.data(), &p, sizeof(p));
  const art::CudaLaunch &record = loaded.launches->Get(attentionIndex).qkv_decode();
  RETURN_IF_ERROR(launchKernel(record, loaded.qkvDecodes[size_t(attentionIndex)], gemm, packed));
  fused = true;
  return okStatus();
}

} // namespace infer::cuda
