//===- onnx_import_fuzzer.cpp - libFuzzer target for the ONNX importer ----===//
//
// Feeds arbitrary bytes to the importer as a binary ONNX model; anything but a
// clean diagnostic (a crash, an assert, a sanitizer report) is a bug. Imported
// modules are also verified and printed, since printing walks every attribute
// and resource the importer made.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/onnx/OnnxImporter.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlir::MLIRContext context;
  context.getDiagEngine().registerHandler([](mlir::Diagnostic &) { return mlir::success(); });
  auto module = infer::import::importOnnxBuffer(
      context, llvm::StringRef(reinterpret_cast<const char *>(data), size), "fuzz.onnx");
  if (module && mlir::succeeded(mlir::verify(*module))) {
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os);
  }
  return 0;
}
