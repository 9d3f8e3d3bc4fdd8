//===- CudaTypes.h - artifact element types as CUDA C++ type names -*- C++ -*-===//
#ifndef INFER_CODEGEN_CUDA_CUDATYPES_H
#define INFER_CODEGEN_CUDA_CUDATYPES_H

#include "runtime/artifact/ArtifactFormat.h"
#include "runtime/base/Status.h"

#include <string>

namespace infer::codegen {

/// "float", "__nv_bfloat16" or "__half"; other types are not kernel element types.
inline StatusOr<std::string> cudaTypeName(artifact::ElementType type) {
  switch (type) {
  case artifact::ELEMENT_TYPE_F32:
    return std::string("float");
  case artifact::ELEMENT_TYPE_BF16:
    return std::string("__nv_bfloat16");
  case artifact::ELEMENT_TYPE_F16:
    return std::string("__half");
  default:
    return unimplementedError(std::string("element type ") + artifact::elementTypeName(type) +
                              " (the cuda kernels take f32, bf16 or f16)");
  }
}

} // namespace infer::codegen

#endif // INFER_CODEGEN_CUDA_CUDATYPES_H
