//===- MoeGeometry.h - launch geometry of the mixture-of-experts kernels --===//
//
// For the kernels (kernels/Moe.cuh; NVRTC, nvcc) and codegen (plain g++): the
// limits the kernels hold and how many weight rows a block of
// infer_moe_gate_up / infer_moe_down stages in shared memory (each expert's
// rows are read from global memory once a step, then reused for every token
// routed to it).
//
//   route, combine: grid.x = tokens,                 block kMoeThreads
//   sort:           grid.x = 1,                      block kMoeSortThreads
//   gate_up:        grid = (ceil(inter / R), experts), block kMoeThreads,
//                   R = moeGateUpRows(hidden, W bytes); 2R rows of hidden staged
//   down:           grid = (ceil(hidden / R), experts), block kMoeThreads,
//                   R = moeDownRows(inter, W bytes); R rows of inter staged
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_CUDA_ABI_MOEGEOMETRY_H
#define INFER_RUNTIME_CUDA_ABI_MOEGEOMETRY_H

#include "runtime/cuda/abi/KernelParams.h"

namespace infer {
namespace kernels {

constexpr int kMoeThreads = 256;
constexpr int kMoeSortThreads = 1024;
/// Router logits and per-expert counts live in shared memory.
constexpr long long kMoeMaxExperts = 1024;
constexpr long long kMoeMaxTopK = 64;
/// Shared memory a block stages weights in (below the 227 KiB an H100/H200
/// block may have; 64 KiB leaves room for three blocks an SM).
constexpr long long kMoeStageBytes = 64 * 1024;
constexpr long long kMoeMaxStageBytes = 227 * 1024;
constexpr int kMoeMaxRows = 8;

/// Rows (of 1, 2, 4, 8) of `length` elements of `elementBytes` that fit
/// `groups` x rows in kMoeStageBytes; 1 if even one group does not (then
/// moeStageFits says whether one row of each group fits at all).
INFER_ABI_FN constexpr int moeRowsFor(long long length, int elementBytes, int groups) {
  long long rowBytes = length * elementBytes * groups;
  int rows = kMoeMaxRows;
  while (rows > 1 && rows * rowBytes > kMoeStageBytes)
    rows /= 2;
  return rows;
}
INFER_ABI_FN constexpr int moeGateUpRows(long long hidden, int elementBytes) {
  return moeRowsFor(hidden, elementBytes, 2);
}
INFER_ABI_FN constexpr int moeDownRows(long long inter, int elementBytes) {
  return moeRowsFor(inter, elementBytes, 1);
}
INFER_ABI_FN constexpr long long moeGateUpSharedBytes(long long hidden, int elementBytes) {
  return 2LL * moeGateUpRows(hidden, elementBytes) * hidden * elementBytes;
}
INFER_ABI_FN constexpr long long moeDownSharedBytes(long long inter, int elementBytes) {
  return (long long)moeDownRows(inter, elementBytes) * inter * elementBytes;
}

} // namespace kernels
} // namespace infer

#endif // INFER_RUNTIME_CUDA_ABI_MOEGEOMETRY_H
