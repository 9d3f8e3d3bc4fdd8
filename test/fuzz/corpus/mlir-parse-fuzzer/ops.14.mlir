

// Tests that graph.flatten elides its default axis and keeps another one.
// CHECK-LABEL: func.func @flatten
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>)
// CHECK: graph.flatten %[[X]] : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
// CHECK: graph.flatten %[[X]] {axis = 2 : i64} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
func.func @flatten(%x: tensor<2x3x4xf32>) -> (tensor<2x12xf32>, tensor<6x4xf32>) {
  %0 = graph.flatten %x {axis = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
  %1 = graph.flatten %x {axis = 2 : i64} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  return %0, %1 : tensor<2x12xf32>, tensor<6x4xf32>
}
