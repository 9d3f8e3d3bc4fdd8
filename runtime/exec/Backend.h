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

/// The `step` program's inputs (docs/kv-cache.md, "The step program"),
/// unpadded: T tokens of S sequences, block tables [S, B].
struct StepArrays {
  std::vector<int64_t> tokenIds, positions, seqStarts, contextLens, blockTables, slotIds;
};

class Backend {
public:
  virtual ~Backend() = default;
  /// Runs the entry over `inputs` ([batch, seq] each, by binding name) and
  /// returns every output ([batch, seq, …] by the model's output spec).
  virtual StatusOr<std::vector<NamedArray>> forward(const std::vector<NamedArray> &inputs) = 0;

  /// Whether this backend can run the artifact's step program.
  virtual bool hasStep() const { return false; }
  /// (Re)allocates the paged KV cache: `numBlocks` blocks (block 0 the null
  /// block) of every layer, zeroed.
  virtual Status allocateKvCache(int64_t numBlocks) {
    return unimplementedError("this backend has no step program");
  }
  /// Runs the step program (writes the new tokens' K/V into the cache) and
  /// returns the logits of the packed rows `rows` ([rows.size(), vocab]
  /// row-major float; `vocab` set).
  virtual StatusOr<std::vector<float>> step(const StepArrays &arrays,
                                            const std::vector<int32_t> &rows, int64_t &vocab) {
    return unimplementedError("this backend has no step program");
  }
};

} // namespace infer

#endif // INFER_RUNTIME_EXEC_BACKEND_H
