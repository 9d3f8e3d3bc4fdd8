

// Tests that graph.pow accepts an exponent of another element type.
// CHECK-LABEL: func.func @pow_mixed
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>, %[[E:.+]]: tensor<i64>)
// CHECK: graph.pow %[[X]], %[[E]] : (tensor<4xf32>, tensor<i64>) -> tensor<4xf32>
func.func @pow_mixed(%x: tensor<4xf32>, %e: tensor<i64>) -> tensor<4xf32> {
  %0 = graph.pow %x, %e : (tensor<4xf32>, tensor<i64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
