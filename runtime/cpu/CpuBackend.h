//===- CpuBackend.h - runs an artifact's exec program on the host -*- C++ -*-===//
//
// The cpu backend of issue 4: binds the weights (pointers into the artifact's
// mapping; bf16/f16/f64 weights converted to f32 once, at create), and for
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

private:
  explicit CpuBackend(const artifact::ArtifactReader &reader) : reader_(reader) {}

  const artifact::ArtifactReader &reader_;
  const artifact::ExecProgram *program_ = nullptr;
  std::vector<View> weights_;   ///< by weight index
  std::vector<View> constants_; ///< by constant index
  std::vector<std::vector<float>> converted_;
  std::vector<std::vector<uint64_t>> constantData_;
};

} // namespace infer::cpu

#endif // INFER_RUNTIME_CPU_CPUBACKEND_H
