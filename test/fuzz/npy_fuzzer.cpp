//===- npy_fuzzer.cpp - libFuzzer target for the .npy reader --------------===//
//
// Each input is read as a .npy file (runtime/npy: magic, version, the header
// dictionary parsed strictly, data bounded by the header and by memory).
//
//===----------------------------------------------------------------------===//

#include "runtime/npy/Npy.h"
#include "test/fuzz/TempFile.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto array = infer::readNpy(infer::fuzz::writeTempFile(data, size, ".npy"));
  if (array.ok())
    (void)array->numElements();
  return 0;
}
