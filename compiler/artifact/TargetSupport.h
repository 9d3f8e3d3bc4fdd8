//===- TargetSupport.h - what each backend can run, checked at compile time -*- C++ -*-===//
//
// A compile for a target refuses what that target's backend cannot run,
// instead of writing an artifact that fails at its first forward. The cpu
// backend's elementwise ops are runtime/cpu/ElementwiseOps.h's, the list its
// kernel dispatches on, so compiler and backend cannot drift apart. The cuda
// target's check is its code generation (codegen/cuda), which refuses a
// region op it cannot generate when it generates the kernels.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_COMPILER_ARTIFACT_TARGETSUPPORT_H
#define INFER_COMPILER_ARTIFACT_TARGETSUPPORT_H

#include "runtime/artifact/artifact.pb.h"

#include "mlir/IR/Location.h"
#include "mlir/Support/LogicalResult.h"

namespace infer::compiler {

/// Checks that the cpu backend runs every launch of `manifest`'s exec and
/// step programs: a known kernel kind, and in elementwise regions only ops
/// the cpu kernel interprets with attributes it can read (no attribute left
/// as MLIR text). The error, at `loc`, names the program, launch and op.
mlir::LogicalResult checkCpuTargetSupport(mlir::Location loc, const artifact::Manifest &manifest);

} // namespace infer::compiler

#endif // INFER_COMPILER_ARTIFACT_TARGETSUPPORT_H
