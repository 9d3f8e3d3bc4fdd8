//===- onnx_import_fuzzer.cpp - libFuzzer target for the ONNX importer ----===//
//
// Feeds bytes to the importer as a binary ONNX model and, when it imports,
// runs the optimization pipeline infer-compile runs (shape analysis, the
// raising passes with their numeric validation, fusion); anything but a clean
// diagnostic (a crash, an assert, a sanitizer report, a timeout) is a bug.
//
// Built twice: onnx-import-fuzzer mutates raw bytes (the protobuf parser and
// whatever survives it); onnx-proto-fuzzer (INFER_FUZZ_PROTO_MUTATOR) parses
// each input as an onnx.ModelProto and mutates its fields (ProtoMutator.h),
// so mutations reach the importer's checks and the passes instead of the
// wire format.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/onnx/OnnxImporter.h"
#include "compiler/pipeline/Pipeline.h"
#include "test/fuzz/ProtoMutator.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>

#ifdef INFER_FUZZ_PROTO_MUTATOR
#include "onnx/onnx_pb.h"

#include <cstring>

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t maxSize,
                                          unsigned int seed) {
  onnx::ModelProto model;
  if (!model.ParseFromArray(data, static_cast<int>(size)) || seed % 16 == 0)
    return LLVMFuzzerMutate(data, size, maxSize);
  std::mt19937_64 random(seed);
  infer::fuzz::mutateMessage(model, random, 256, 1 + static_cast<int>(seed % 3));
  std::string bytes;
  if (!model.SerializeToString(&bytes) || bytes.size() > maxSize)
    return LLVMFuzzerMutate(data, size, maxSize);
  std::memcpy(data, bytes.data(), bytes.size());
  return bytes.size();
}
#endif

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  infer::fuzz::silenceProtobufLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  context.getDiagEngine().registerHandler([](mlir::Diagnostic &) { return mlir::success(); });
  auto module = infer::import::importOnnxBuffer(
      context, llvm::StringRef(reinterpret_cast<const char *>(data), size), "fuzz.onnx");
  if (!module || mlir::failed(mlir::verify(*module)))
    return 0;
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  mlir::PassManager pm(&context);
  infer::pipeline::buildOptimizationPipeline(pm, infer::pipeline::PipelineOptions());
  (void)pm.run(*module);
  return 0;
}
