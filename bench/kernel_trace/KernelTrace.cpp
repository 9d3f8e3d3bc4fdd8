//===- KernelTrace.cpp - every kernel's start and end, CUDA graphs included ===//
//
// A CUPTI injection library (CUDA_INJECTION64_PATH): the driver loads it at
// cuInit and calls InitializeInjection, which asks CUPTI for concurrent-kernel
// activity records. Unlike Nsight Compute (which serializes kernels) these
// are the kernels as they ran: inside CUDA graphs, overlapped under
// programmatic dependent launch. At exit every record is written to the CSV
// file named by INFER_KERNEL_TRACE:
//
//   start_ns,end_ns,graph_id,graph_node_id,correlation_id,grid_x,grid_y,grid_z,name
//
// The name is demangled and its commas become semicolons. Built and run by
// bench/kernel-trace.sh; a development tool, not part of the product build.
//
//===----------------------------------------------------------------------===//
#include <cupti.h>

#include <cxxabi.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

namespace {

std::FILE *traceFile = nullptr;
std::mutex traceMutex;

constexpr size_t kBufferBytes = 16 << 20;

void CUPTIAPI bufferRequested(uint8_t **buffer, size_t *size, size_t *maxRecords) {
  *size = kBufferBytes;
  *buffer = static_cast<uint8_t *>(std::aligned_alloc(8, kBufferBytes));
  *maxRecords = 0;
}

std::string readableName(const char *mangled) {
  int status = 0;
  char *demangled = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string name = status == 0 && demangled ? demangled : (mangled ? mangled : "?");
  std::free(demangled);
  for (char &c : name)
    if (c == ',')
      c = ';';
  return name;
}

void CUPTIAPI bufferCompleted(CUcontext, uint32_t, uint8_t *buffer, size_t, size_t valid) {
  std::lock_guard<std::mutex> lock(traceMutex);
  CUpti_Activity *record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (!traceFile)
      continue;
    if (record->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
      // Copies as rows of their own (grid 0), named by direction and size:
      // what runs between two replays of the step's graph.
      const auto *copy = reinterpret_cast<const CUpti_ActivityMemcpy6 *>(record);
      static const char *const kinds[] = {"?", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                          "AtoD", "DtoA", "DtoD", "HtoH", "PtoP"};
      unsigned kind = copy->copyKind < 11 ? copy->copyKind : 0;
      std::fprintf(traceFile, "%llu,%llu,%u,%llu,%u,0,0,0,memcpy %s %llu B\n",
                   (unsigned long long)copy->start, (unsigned long long)copy->end, copy->graphId,
                   (unsigned long long)copy->graphNodeId, copy->correlationId, kinds[kind],
                   (unsigned long long)copy->bytes);
      continue;
    }
    if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
      continue;
    const auto *kernel = reinterpret_cast<const CUpti_ActivityKernel10 *>(record);
    std::fprintf(traceFile, "%llu,%llu,%u,%llu,%u,%d,%d,%d,%s\n",
                 (unsigned long long)kernel->start, (unsigned long long)kernel->end,
                 kernel->graphId, (unsigned long long)kernel->graphNodeId, kernel->correlationId,
                 kernel->gridX, kernel->gridY, kernel->gridZ, readableName(kernel->name).c_str());
  }
  std::free(buffer);
}

void flushAtExit() {
  cuptiActivityFlushAll(1);
  std::lock_guard<std::mutex> lock(traceMutex);
  if (traceFile)
    std::fclose(traceFile), traceFile = nullptr;
}

} // namespace

extern "C" int InitializeInjection() {
  const char *path = std::getenv("INFER_KERNEL_TRACE");
  traceFile = std::fopen(path && *path ? path : "kernel-trace.csv", "w");
  if (!traceFile) {
    std::fprintf(stderr, "kernel-trace: cannot write %s\n", path ? path : "kernel-trace.csv");
    return 0;
  }
  std::fprintf(traceFile, "start_ns,end_ns,graph_id,graph_node_id,correlation_id,grid_x,grid_y,"
                          "grid_z,name\n");
  if (cuptiActivityRegisterCallbacks(bufferRequested, bufferCompleted) != CUPTI_SUCCESS ||
      cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS ||
      cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY) != CUPTI_SUCCESS) {
    std::fprintf(stderr, "kernel-trace: CUPTI refused the kernel or memcpy activity\n");
    return 0;
  }
  std::atexit(flushAtExit);
  return 1;
}
