//===- BufferChecks.h - what codegen asks of the program's buffers --------===//
//
// Questions codegen asks of the exec program before a kernel changes a buffer
// another launch might see (the FP8 KV cache's in-place rounding of K and V).
// Which launches one kernel may fuse is decided in the IR
// (dialects/exec/Transforms: --infer-fold-gemm-prologue / -epilogue,
// --infer-fold-kv-rotary). Plain functions over the artifact protobuf, unit
// tested on small programs (test/unit/BufferChecksTest.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef INFER_CODEGEN_CUDA_BUFFERCHECKS_H
#define INFER_CODEGEN_CUDA_BUFFERCHECKS_H

#include "runtime/artifact/artifact.pb.h"

#include <cstdint>

namespace infer::codegen {

/// Whether no launch after `index` has `buffer` as an operand and no program
/// output is bound to it: what `index` does to it in place is seen by no one.
bool unreadAfter(const artifact::ExecProgram &program, uint32_t buffer, int index);

} // namespace infer::codegen

#endif // INFER_CODEGEN_CUDA_BUFFERCHECKS_H
