//===- Backend.h - what infer-run runs an artifact with ---------*- C++ -*-===//
//
// The cpu backend (runtime/cpu) and the cuda backend (runtime/cuda) run the
// same exec program; infer-run picks one by --device.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_EXEC_BACKEND_H
#define INFER_RUNTIME_EXEC_BACKEND_H

#include "runtime/base/Status.h"
#include "runtime/npy/Npy.h"

#include <string>
#include <utility>
#include <vector>

namespace infer {

using NamedArray = std::pair<std::string, HostArray>;

class Backend {
public:
  virtual ~Backend() = default;
  /// Runs the entry over `inputs` ([batch, seq] each, by binding name) and
  /// returns every output ([batch, seq, …] by the model's output spec).
  virtual StatusOr<std::vector<NamedArray>> forward(const std::vector<NamedArray> &inputs) = 0;
};

} // namespace infer

#endif // INFER_RUNTIME_EXEC_BACKEND_H
