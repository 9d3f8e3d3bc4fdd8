//===- KvCacheScales.h - the FP8 KV cache's per-layer scales ----*- C++ -*-===//
//
// `infer-compile --kv-cache-dtype fp8`: K and V are cached as E4M3FN values
// of x / scale, a scale per layer for K and one for V, each max |x| / 448
// over the prompts (the calibration text, or random token ids without
// --calibration) run on the reference interpreter. They become each
// graph.attention's k_cache_scale / v_cache_scale (docs/quantization.md).
//
//===----------------------------------------------------------------------===//
#ifndef INFER_COMPILER_PIPELINE_KVCACHESCALES_H
#define INFER_COMPILER_PIPELINE_KVCACHESCALES_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <vector>

namespace infer::pipeline {

/// Sets the cache scales of every graph.attention of `module`'s entry from
/// the K and V it computes on `prompts` (token ids); prints one line to `log`.
llvm::Error applyKvCacheScales(mlir::ModuleOp module,
                               const std::vector<std::vector<int64_t>> &prompts,
                               llvm::raw_ostream &log);

/// `count` prompts of `length` token ids below `vocab` from `seed`: what the
/// scales are measured on without --calibration.
std::vector<std::vector<int64_t>> randomPrompts(int64_t vocab, int count, int length,
                                                uint64_t seed);

} // namespace infer::pipeline

#endif
