//===- OnnxTensors.h - ONNX test data ↔ interpreter tensors -----*- C++ -*-===//
//
// Reads the `input_N.pb` / `output_N.pb` files of ONNX's node tests into the
// reference interpreter's tensors and compares results the way ONNX's own
// backend runner does (numpy.testing.assert_allclose).
//
//===----------------------------------------------------------------------===//
#ifndef INFER_TEST_CONFORMANCE_ONNXTENSORS_H
#define INFER_TEST_CONFORMANCE_ONNXTENSORS_H

#include "dialects/graph/Interpreter/Tensor.h"

#include "llvm/Support/Error.h"

#include <onnx/onnx_pb.h>

#include <string>

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace infer::conformance {

/// ONNX's default tolerances for float outputs.
constexpr double kRelativeTolerance = 1e-3;
constexpr double kAbsoluteTolerance = 1e-7;

/// Parses a serialized onnx.TensorProto file.
llvm::Expected<onnx::TensorProto> readTensorProto(const std::string &path);

/// Whether the reference interpreter computes with ONNX element type
/// `onnxType`: the importer's MLIR type for it must have an interpreter DType.
bool inInterpreterDomain(mlir::MLIRContext &context, int32_t onnxType);

/// Converts `proto` (float, double, float16, bfloat16, int32, int64 or bool;
/// typed fields or raw_data) to the interpreter's tensor: double narrows to
/// f32, float16 and bfloat16 widen exactly to f32, and int32 widens to i64, as
/// the interpreter holds them.
llvm::Expected<interp::Tensor> tensorFromProto(const onnx::TensorProto &proto);

/// Empty when `got` matches `want`: same dtype and shape, ints and bools equal,
/// floats within |got - want| <= atol + rtol * |want| (NaN equals NaN, an
/// infinity only itself). Otherwise says what differs, with the first
/// mismatching elements.
std::string compareTensors(const interp::Tensor &got, const interp::Tensor &want,
                           double rtol = kRelativeTolerance, double atol = kAbsoluteTolerance);

} // namespace infer::conformance

#endif // INFER_TEST_CONFORMANCE_ONNXTENSORS_H
