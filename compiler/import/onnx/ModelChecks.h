//===- ModelChecks.h - ONNX's validity rules, checked before import -*- C++ -*-===//
//
// A model is untrusted input (docs/trust-model.md). Before any node is
// imported the model must be valid ONNX in the ways the importer relies on:
// a known IR version, a graph with outputs, unique names, every value written
// once, and tensor types with dims in [0, kMaxDimension] and at most
// kMaxElements elements. onnx::checker::check_model cannot be used whole:
// libonnx 1.12 knows opsets up to 17 only, the shared models use 17-20 and 23,
// and it insists on topologically sorted nodes, which the importer does not.
// Its node check (schema arity, attribute types) runs per node where libonnx's
// schemas cover the model's opset (onnxCheckerError).
//
//===----------------------------------------------------------------------===//
#ifndef INFER_COMPILER_IMPORT_ONNX_MODELCHECKS_H
#define INFER_COMPILER_IMPORT_ONNX_MODELCHECKS_H

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/StringRef.h"

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <optional>
#include <string>

namespace infer::import {

/// The largest static dimension of any tensor a model may declare or hold.
constexpr int64_t kMaxDimension = (int64_t(1) << 31) - 1;
/// The most dims a tensor may have. ONNX sets no limit; a shape input's length
/// becomes a result's rank, and a rank from a declared dim of 2^31 - 1 was a
/// bad_alloc. Real models stay under 10.
constexpr int64_t kMaxRank = 64;
/// The most elements a tensor with static dims may have (4 TiB of f32): past
/// this a model is refused rather than planned (products of dims stay far
/// from int64 overflow, and nothing is allocated from a model's word alone).
constexpr int64_t kMaxElements = int64_t(1) << 40;

/// The IR versions the importer reads: opset_import exists from 3; 14 is
/// what ONNX 1.23 writes (the newest onnx package the tests use). The IR
/// versions since 8 added element types and function features, which the
/// importer refuses by name where it meets them.
constexpr int64_t kMinIrVersion = 3;
constexpr int64_t kMaxIrVersion = 14;

/// Reports (one error each, at `path`) every violation of ONNX's rules on the
/// model and its main graph that the importer checks itself; failure if any.
mlir::LogicalResult checkModelStructure(mlir::MLIRContext &context, llvm::StringRef path,
                                        const onnx::ModelProto &model);

/// What onnx::checker::check_node says against `node` (its schema's arity,
/// attribute names and types, required attributes), when libonnx's schemas
/// cover `opset` of the default domain; nullopt when it passes or does not
/// apply.
std::optional<std::string> onnxCheckerError(const onnx::NodeProto &node,
                                            const onnx::ModelProto &model, int64_t opset);

} // namespace infer::import

#endif // INFER_COMPILER_IMPORT_ONNX_MODELCHECKS_H
