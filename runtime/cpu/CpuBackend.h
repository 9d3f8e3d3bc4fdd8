//===- CpuBackend.h - runs an artifact's exec program on the host -*- C++ -*-===//
//
// The cpu backend of issue 4: copies the weights out of the artifact at create
// (bf16/f16/f64 weights converted to f32; the file is not read again), and for
// each forward allocates the arena for the step's T = batch * seq, copies the
// inputs into their buffers, walks the launches in program order with the
// reference kernels of CpuKernels.h, and copies the outputs out. bf16/f16
// activation buffers hold f32 values (the arena scaled by 2), rounded to their
// type after each launch that writes them, as the reference interpreter does.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_CPU_CPUBACKEND_H
#define INFER_RUNTIME_CPU_CPUBACKEND_H

#include "runtime/artifact/ArtifactReader.h"
#include "runtime/base/Status.h"
#include "runtime/cpu/CpuKernels.h"
#include "runtime/exec/Backend.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace infer::cpu {

class CpuBackend : public Backend {
public:
  /// Binds `reader`'s weights and constants; `reader` must outlive the backend.
  static StatusOr<std::unique_ptr<CpuBackend>> create(const artifact::ArtifactReader &reader);

  /// Runs the entry over `inputs` ([batch, seq] each, by binding name) and
  /// returns every output ([batch, seq, …] by the model's output spec).
  StatusOr<std::vector<NamedArray>> forward(const std::vector<NamedArray> &inputs) override;

  bool hasStep() const override;
  /// f32 blocks in free host memory, less the step arena at the bound.
  KvCacheCapacity kvCacheCapacity() override;
  /// f32 caches (bf16/f16 activations are held as f32 here).
  Status allocateKvCache(int64_t numBlocks) override;
  int64_t kvNumBlocks() const { return kvNumBlocks_; }
  StatusOr<std::vector<float>> step(const StepArrays &arrays, int64_t &vocab) override;

private:
  explicit CpuBackend(const artifact::ArtifactReader &reader) : reader_(reader) {}
  /// Walks `program`'s launches over an arena run (CpuBackend.cpp's ArenaRun).
  Status runLaunches(const artifact::ExecProgram &program, const void *arenaRun, int64_t batch,
                     int64_t seq);

  const artifact::ArtifactReader &reader_;
  const artifact::ExecProgram *program_ = nullptr;
  std::vector<View> weights_;   ///< by weight index
  std::vector<View> constants_; ///< by constant index
  std::vector<std::vector<float>> converted_;
  std::vector<std::vector<uint64_t>> weightData_; ///< weights kept as stored
  std::vector<std::vector<uint64_t>> constantData_;
  std::vector<std::vector<float>> kvLayers_; ///< one cache per layer
  int64_t kvNumBlocks_ = 0;
};

} // namespace infer::cpu

#endif // INFER_RUNTIME_CPU_CPUBACKEND_H
