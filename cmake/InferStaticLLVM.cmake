# INFER_STATIC_LLVM: link the static LLVM component libraries instead of
# libLLVM.so (149 MB), so that the tools need no LLVM at run time.
#
# Debian's LLVM is built with LLVM_LINK_LLVM_DYLIB, and its exported MLIR
# targets (static libMLIR*.a) carry the shared `LLVM` target in their
# INTERFACE_LINK_LIBRARIES. Here, after find_package(MLIR):
#  - LLVM_LINK_LLVM_DYLIB is switched off, so llvm_config() (LINK_COMPONENTS
#    of our own add_mlir_library/add_llvm_executable targets) maps components
#    to the static LLVM<Component> targets;
#  - every imported target that names `LLVM` in its link interface gets the
#    interface target InferLLVMStatic (the static components MLIR needs)
#    instead;
#  - LLVMSupport's link interface loses libz3.so, zlib and zstd: z3 is not on
#    a stock Ubuntu, and the tools never use LLVM's compression or z3 (zstd's
#    imported target is not even defined by Debian's LLVMConfig). A missing
#    symbol would fail the link, not the run. --as-needed drops the rest.
set(LLVM_LINK_LLVM_DYLIB OFF)

find_package(Threads REQUIRED)
add_library(InferLLVMStatic INTERFACE)
target_link_libraries(InferLLVMStatic INTERFACE
  LLVMRemarks LLVMBitstreamReader LLVMTargetParser LLVMSupport LLVMDemangle
  rt dl m Threads::Threads)

get_property(_infer_imported DIRECTORY PROPERTY IMPORTED_TARGETS)
set(_infer_rewritten 0)
foreach(_t IN LISTS _infer_imported)
  get_target_property(_type ${_t} TYPE)
  if(_type STREQUAL "INTERFACE_LIBRARY" OR _type STREQUAL "STATIC_LIBRARY"
     OR _type STREQUAL "SHARED_LIBRARY" OR _type STREQUAL "UNKNOWN_LIBRARY")
    get_target_property(_libs ${_t} INTERFACE_LINK_LIBRARIES)
    if(_libs AND (_libs MATCHES "(^|;|:)LLVM(;|>|$)"))
      list(TRANSFORM _libs REPLACE "^LLVM$" "InferLLVMStatic")
      list(TRANSFORM _libs REPLACE "^\\$<LINK_ONLY:LLVM>$" "$<LINK_ONLY:InferLLVMStatic>")
      set_property(TARGET ${_t} PROPERTY INTERFACE_LINK_LIBRARIES "${_libs}")
      math(EXPR _infer_rewritten "${_infer_rewritten} + 1")
    endif()
  endif()
endforeach()

get_target_property(_support_libs LLVMSupport INTERFACE_LINK_LIBRARIES)
list(FILTER _support_libs EXCLUDE REGEX "z3|zstd|ZLIB")
set_property(TARGET LLVMSupport PROPERTY INTERFACE_LINK_LIBRARIES "${_support_libs}")

add_link_options("LINKER:--as-needed")
message(STATUS "INFER_STATIC_LLVM: static LLVM components for ${_infer_rewritten} imported MLIR targets")
