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
/// unpadded: T tokens of S sequences, block tables [S, B], and the R packed
/// rows whose logits are wanted (logitIndices).
struct StepArrays {
  std::vector<int64_t> tokenIds, positions, seqStarts, contextLens, blockTables, slotIds;
  std::vector<int64_t> logitIndices;
};

/// How each logit row's token is drawn (runtime/sampling's semantics):
/// temperature 0 is greedy; `uniform` is the row's draw in [0, 1).
struct RowSampling {
  double temperature = 0.0, topP = 1.0, uniform = 0.0;
  int32_t topK = 0;
};

class Backend {
public:
  virtual ~Backend() = default;
  /// Runs the entry over `inputs` ([batch, seq] each, by binding name) and
  /// returns every output ([batch, seq, …] by the model's output spec).
  virtual StatusOr<std::vector<NamedArray>> forward(const std::vector<NamedArray> &inputs) = 0;

  /// Bytes the KV cache may take on this backend's device beyond what the
  /// step program itself needs (its arena at the token bound), or 0 when the
  /// backend has no such limit to report (cpu).
  virtual uint64_t kvCacheBudgetBytes() { return 0; }

  /// What a KV cache block costs on this backend and how much memory the
  /// cache may take there: the serving session sizes --kv-blocks against it
  /// before allocating. blockBytes 0: the backend has no KV cache.
  struct KvCacheCapacity {
    uint64_t blockBytes = 0;     ///< one block of every layer, as this backend stores it
    uint64_t availableBytes = 0; ///< free memory the cache may take
    const char *memory = "host"; ///< "host" or "device", for messages
  };
  virtual KvCacheCapacity kvCacheCapacity() { return {}; }

  /// Whether this backend can run the artifact's step program.
  virtual bool hasStep() const { return false; }
  /// Wall seconds of each phase of loading the artifact, in order (cuda:
  /// context, weights, kernels, rest), for the cold start's breakdown.
  virtual std::vector<std::pair<std::string, double>> loadPhases() const { return {}; }
  /// (Re)allocates the paged KV cache: `numBlocks` blocks (block 0 the null
  /// block) of every layer, zeroed.
  virtual Status allocateKvCache(int64_t numBlocks) {
    return unimplementedError("this backend has no step program");
  }
  /// Runs the step program (writes the new tokens' K/V into the cache) and
  /// returns the logits of the packed rows arrays.logitIndices
  /// ([R, vocab] row-major float; `vocab` set).
  virtual StatusOr<std::vector<float>> step(const StepArrays &arrays, int64_t &vocab) {
    return unimplementedError("this backend has no step program");
  }
  /// Whether stepAndSample() draws the tokens where the logits are (no logit
  /// copy to the host).
  virtual bool samplesOnDevice() const { return false; }
  /// Runs the step and draws one token per logit row (`sampling` parallel
  /// to arrays.logitIndices). Only when samplesOnDevice().
  virtual StatusOr<std::vector<int32_t>> stepAndSample(const StepArrays &arrays,
                                                       const std::vector<RowSampling> &sampling) {
    return unimplementedError("this backend does not sample on the device");
  }

  /// Whether enqueueStep() and waitStep() exist: steps with device sampling
  /// that return before the device has run them, so the host can queue the
  /// next decode step while this one runs (serving/StepRunner.h).
  virtual bool queuesSteps() const { return false; }
  /// Enqueues the step and its sampler (as stepAndSample) and returns a
  /// ticket for waitStep() at once. With `tokensFromPrevious`, token i of the
  /// step (every one; arrays.tokenIds are placeholders then) is the token the
  /// previously enqueued step draws for its logit row i, which the host does
  /// not know yet. At most two steps are outstanding.
  virtual StatusOr<uint64_t> enqueueStep(const StepArrays &arrays,
                                         const std::vector<RowSampling> &sampling,
                                         bool tokensFromPrevious) {
    return unimplementedError("this backend does not queue steps");
  }
  /// Waits for an enqueued step and returns its tokens, one per logit row.
  /// Tickets are waited for in the order they were given.
  virtual StatusOr<std::vector<int32_t>> waitStep(uint64_t ticket) {
    return unimplementedError("this backend does not queue steps");
  }
};

} // namespace infer

#endif // INFER_RUNTIME_EXEC_BACKEND_H
