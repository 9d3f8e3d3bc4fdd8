//===- LaunchArgs.h - one launch's operands, outputs and attributes -*- C++ -*-===//
//
// What a backend resolves for each launch of the exec program before running
// it: every operand as a View (host memory for the cpu backend, device
// addresses for the cuda backend), the output buffers, typed attribute access
// and the step's batch and seq. Errors name the launch.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_EXEC_LAUNCHARGS_H
#define INFER_RUNTIME_EXEC_LAUNCHARGS_H

#include "runtime/artifact/artifact.pb.h"
#include "runtime/base/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace infer::exec {

/// An operand or output: `elements` values of `type` at `data`. Weights and
/// constants carry their shape; arena buffers only their element count at T.
struct View {
  void *data = nullptr;
  artifact::ElementType type = artifact::ELEMENT_TYPE_UNSPECIFIED;
  int64_t elements = 0;
  bool isBuffer = false;
  std::vector<int64_t> shape; ///< empty for buffers

  const float *f32() const { return static_cast<const float *>(data); }
  float *mutableF32() const { return static_cast<float *>(data); }
  const int64_t *i64() const { return static_cast<const int64_t *>(data); }
};

struct LaunchArgs {
  const artifact::Launch *launch = nullptr;
  int index = 0; ///< the launch's position in the program
  std::vector<artifact::OperandRole> roles;
  std::vector<View> operands; ///< parallel to roles
  std::vector<View> outputs;
  int64_t batch = 0, seq = 0, tokens = 0;
  /// Step programs: sequences, the most new tokens of one, the logit rows.
  int64_t sequences = 0, maxNewTokens = 0, logitRows = 0;

  /// The first operand with `role`, or nullptr.
  const View *operand(artifact::OperandRole role) const;
  /// Every operand with `role`, in order.
  std::vector<const View *> all(artifact::OperandRole role) const;
  /// The operand with `role`, or an error naming it.
  StatusOr<const View *> required(artifact::OperandRole role) const;

  StatusOr<int64_t> intAttr(const std::string &name) const;
  int64_t intAttr(const std::string &name, int64_t fallback) const;
  StatusOr<double> floatAttr(const std::string &name) const;
  double floatAttr(const std::string &name, double fallback) const;
  bool boolAttr(const std::string &name, bool fallback) const;
  StatusOr<std::string> stringAttr(const std::string &name) const;

  /// An InvalidArgument/Internal-style error prefixed with the launch.
  Status error(const std::string &message) const;
  /// Checks that `view` is f32 with `elements` values.
  Status expectF32(const View &view, int64_t elements, const std::string &what) const;
};

} // namespace infer::exec

#endif // INFER_RUNTIME_EXEC_LAUNCHARGS_H
