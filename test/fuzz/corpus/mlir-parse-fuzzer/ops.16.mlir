

// Tests that graph.transpose round-trips its permutation.
// CHECK-LABEL: func.func @transpose
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>)
// CHECK: graph.transpose %[[X]] {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
func.func @transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = graph.transpose %x {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  return %0 : tensor<4x2x3xf32>
}
