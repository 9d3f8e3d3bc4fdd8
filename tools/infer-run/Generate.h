//===- Generate.h - infer-run generate: greedy decoding over the step entry -===//
#ifndef INFER_TOOLS_INFER_RUN_GENERATE_H
#define INFER_TOOLS_INFER_RUN_GENERATE_H

#include "runtime/base/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace infer::tools {

struct GenerateOptions {
  /// One "1,2,3" list per request.
  std::vector<std::string> prompts;
  int32_t maxNewTokens = 16;
  std::string device; ///< "" picks cuda when the artifact has GPU step code and a GPU is there
  /// KV pool blocks, counting the null block (0: 4 sequences at max-seq-len + 1).
  int64_t kvBlocks = 0;
  /// Tokens per step (0: the artifact's bound).
  int64_t maxBatchTokens = 0;
  /// Sequences per step (0: min(T, 256)).
  int64_t maxSequences = 0;
  bool prefixCaching = true;
};

/// Serves every prompt through the scheduler, greedy (argmax, lowest id on
/// ties), and prints one line per request and a JSON line.
Status runGenerate(const std::string &artifactPath, const GenerateOptions &options);

} // namespace infer::tools

#endif // INFER_TOOLS_INFER_RUN_GENERATE_H
