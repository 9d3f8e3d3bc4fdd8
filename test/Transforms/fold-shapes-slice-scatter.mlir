// RUN: infer-opt %s --split-input-file --infer-fold-shapes | FileCheck %s

// Tests that torch.onnx's slice_scatter chain (data and update transposed so the axis comes
// first, scatter_nd of a contiguous range, transposed back and forth between the two) that
// overwrites the whole last axis becomes the updates concatenated along it (DeepSeek-V3's
// query and key, each built from its no-rope and rope halves).
// CHECK-LABEL: func.func @ss
// CHECK-SAME: (%[[Q:.+]]: tensor<?x4x?x8xf32>, %[[R:.+]]: tensor<?x4x?x8xf32>
// CHECK-NEXT: %[[Y:.+]] = graph.concat %[[Q]], %[[R]] {axis = 3 : i64} : (tensor<?x4x?x8xf32>, tensor<?x4x?x8xf32>) -> tensor<?x4x?x16xf32>
// CHECK-NEXT: return %[[Y]]
func.func @ss(%q: tensor<?x4x?x8xf32>, %r: tensor<?x4x?x8xf32>, %z: tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32> {
  %c0 = graph.constant dense<0> : tensor<i64>
  %c16 = graph.constant dense<16> : tensor<i64>
  %c1 = graph.constant dense<1> : tensor<i64>
  %s0 = graph.constant dense<0> : tensor<1xi64>
  %s8 = graph.constant dense<8> : tensor<1xi64>
  %s16 = graph.constant dense<16> : tensor<1xi64>
  %one = graph.constant dense<1> : tensor<1xi64>
  %range = graph.range %c0, %c16, %c1 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<16xi64>
  %lo = graph.slice %range, %s0, %s8, %s0, %one : (tensor<16xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<8xi64>
  %ilo = graph.unsqueeze %lo, %one : (tensor<8xi64>, tensor<1xi64>) -> tensor<8x1xi64>
  %hi = graph.slice %range, %s8, %s16, %s0, %one : (tensor<16xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<8xi64>
  %ihi = graph.unsqueeze %hi, %one : (tensor<8xi64>, tensor<1xi64>) -> tensor<8x1xi64>
  %zt = graph.transpose %z {perm = array<i64: 3, 1, 2, 0>} : (tensor<?x4x?x16xf32>) -> tensor<16x4x?x?xf32>
  %qt = graph.transpose %q {perm = array<i64: 3, 1, 2, 0>} : (tensor<?x4x?x8xf32>) -> tensor<8x4x?x?xf32>
  %a = graph.scatter_nd %zt, %ilo, %qt : (tensor<16x4x?x?xf32>, tensor<8x1xi64>, tensor<8x4x?x?xf32>) -> tensor<16x4x?x?xf32>
  %ab = graph.transpose %a {perm = array<i64: 3, 1, 2, 0>} : (tensor<16x4x?x?xf32>) -> tensor<?x4x?x16xf32>
  %at = graph.transpose %ab {perm = array<i64: 3, 1, 2, 0>} : (tensor<?x4x?x16xf32>) -> tensor<16x4x?x?xf32>
  %rt = graph.transpose %r {perm = array<i64: 3, 1, 2, 0>} : (tensor<?x4x?x8xf32>) -> tensor<8x4x?x?xf32>
  %b = graph.scatter_nd %at, %ihi, %rt : (tensor<16x4x?x?xf32>, tensor<8x1xi64>, tensor<8x4x?x?xf32>) -> tensor<16x4x?x?xf32>
  %y = graph.transpose %b {perm = array<i64: 3, 1, 2, 0>} : (tensor<16x4x?x?xf32>) -> tensor<?x4x?x16xf32>
  return %y : tensor<?x4x?x16xf32>
}

// -----

// Tests that a slice_scatter that leaves part of the axis (here [8, 12) of 16) stays.
// CHECK-LABEL: func.func @partial
// CHECK: graph.scatter_nd
func.func @partial(%q: tensor<?x4x?x8xf32>, %z: tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32> {
  %idx = graph.constant dense<[[0], [1], [2], [3], [4], [5], [6], [7]]> : tensor<8x1xi64>
  %zt = graph.transpose %z {perm = array<i64: 3, 1, 2, 0>} : (tensor<?x4x?x16xf32>) -> tensor<16x4x?x?xf32>
  %qt = graph.transpose %q {perm = array<i64: 3, 1, 2, 0>} : (tensor<?x4x?x8xf32>) -> tensor<8x4x?x?xf32>
  %a = graph.scatter_nd %zt, %idx, %qt : (tensor<16x4x?x?xf32>, tensor<8x1xi64>, tensor<8x4x?x?xf32>) -> tensor<16x4x?x?xf32>
  %y = graph.transpose %a {perm = array<i64: 3, 1, 2, 0>} : (tensor<16x4x?x?xf32>) -> tensor<?x4x?x16xf32>
  return %y : tensor<?x4x?x16xf32>
}
