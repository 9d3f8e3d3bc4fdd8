

// Tests that graph.not and graph.is_nan round-trip with their i1 types.
// CHECK-LABEL: func.func @bool_unary
// CHECK-SAME: (%[[B:.+]]: tensor<4xi1>, %[[X:.+]]: tensor<?xf32>)
// CHECK: graph.not %[[B]] : (tensor<4xi1>) -> tensor<4xi1>
// CHECK: graph.is_nan %[[X]] : (tensor<?xf32>) -> tensor<?xi1>
func.func @bool_unary(%b: tensor<4xi1>, %x: tensor<?xf32>) -> (tensor<4xi1>, tensor<?xi1>) {
  %0 = graph.not %b : (tensor<4xi1>) -> tensor<4xi1>
  %1 = graph.is_nan %x : (tensor<?xf32>) -> tensor<?xi1>
  return %0, %1 : tensor<4xi1>, tensor<?xi1>
}
