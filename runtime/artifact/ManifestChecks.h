//===- ManifestChecks.h - every manifest field checked before use -*- C++ -*-===//
//
// An artifact is untrusted input (docs/trust-model.md): the checksum only
// proves that the file is what some writer wrote, not that what it says is
// sane. These checks run at open, after the checksum, so that no backend ever
// sizes an allocation, indexes a buffer or loops over a count it has not been
// told is within bounds.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_ARTIFACT_MANIFESTCHECKS_H
#define INFER_RUNTIME_ARTIFACT_MANIFESTCHECKS_H

#include "runtime/artifact/ArtifactFormat.h"
#include "runtime/artifact/artifact.pb.h"
#include "runtime/base/Status.h"

#include <cstdint>

namespace infer::artifact {

/// The largest values a manifest may hold, far above any real model and low
/// enough that products of a few of them stay inside int64.
inline constexpr int64_t kMaxTokens = int64_t(1) << 24;   ///< per step, and context
inline constexpr int64_t kMaxFeatures = int64_t(1) << 24; ///< hidden, k, n, vocab
inline constexpr int64_t kMaxHeads = int64_t(1) << 16;    ///< heads, head dims, layers, block size
inline constexpr uint64_t kMaxArenaBytes = uint64_t(1) << 46;
inline constexpr uint64_t kMaxTokenizerJsonBytes = uint64_t(256) << 20;
inline constexpr uint64_t kMaxTemplateBytes = uint64_t(16) << 20;

/// Checks the manifest of an artifact whose weight section is
/// `weightSectionSize` bytes: the model's input and output specs, the
/// compile bounds, every weight, the exec and step programs (ids, arena,
/// buffers, constants, launch attributes the backends read), the KV cache
/// layout against the step program, the GPU launch records and the text
/// info. DataLoss naming the field.
Status checkManifest(const Manifest &manifest, uint64_t weightSectionSize);

} // namespace infer::artifact

#endif // INFER_RUNTIME_ARTIFACT_MANIFESTCHECKS_H
