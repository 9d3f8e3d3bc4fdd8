//===- BufferChecks.h - may one kernel do two launches' work? -------------===//
//
// Questions codegen asks of the exec program's buffers before one kernel
// takes over the launch before it (a GEMV's rms_norm or gated-activation
// prologue, infer_kv_decode's rotary): that launch's output is then never
// written, so nothing else may read it, and the kernel reads that launch's
// inputs while it writes its own output, so the memory planner must not
// have put them in the same bytes at any step size. Plain functions over the
// artifact protobuf (no NVRTC), so they are unit-tested on small programs
// (test/unit/BufferChecksTest.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef INFER_CODEGEN_CUDA_BUFFERCHECKS_H
#define INFER_CODEGEN_CUDA_BUFFERCHECKS_H

#include "runtime/artifact/artifact.pb.h"

#include <cstdint>

namespace infer::codegen {

/// Whether buffers a and b occupy disjoint bytes for every T in [1, last]
/// (offsets and sizes are affine in T, so comparing both ends suffices).
/// False for an id that names no buffer.
bool buffersApartForEveryT(const artifact::ExecProgram &program, uint32_t a, uint32_t b,
                           int64_t last);

/// Whether no launch other than `readerA` and `readerB` has `buffer` as an
/// operand and no program input or output is bound to it.
bool readOnlyBy(const artifact::ExecProgram &program, uint32_t buffer, int readerA, int readerB);

/// Whether no launch after `index` has `buffer` as an operand and no program
/// output is bound to it: what `index` does to it in place is seen by no one.
bool unreadAfter(const artifact::ExecProgram &program, uint32_t buffer, int index);

/// Whether infer_kv_decode may stand in for the KV_ATTENTION launch `index`
/// and the ROTARY launch before it (CudaLaunch.decode): no launch but those
/// two reads the rotary's output and it is no program output, the attention
/// has one output, and every rotary input is a buffer that is the rotary's
/// output itself (in place) or apart from the attention's output for every
/// T up to the arena's bound.
bool decodeMayReplaceRotary(const artifact::ExecProgram &program, int index);

} // namespace infer::codegen

#endif // INFER_CODEGEN_CUDA_BUFFERCHECKS_H
