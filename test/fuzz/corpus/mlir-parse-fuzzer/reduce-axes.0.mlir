
// Tests that the reductions round-trip with an axes operand on float data.
// CHECK-LABEL: func.func @reduce_axes
// CHECK-SAME: (%[[X:.+]]: tensor<?x64xf32>, %[[A:.+]]: tensor<1xi64>)
// CHECK: graph.reduce_mean %[[X]] axes(%[[A]]) : (tensor<?x64xf32>, tensor<1xi64>) -> tensor<?x1xf32>
// CHECK: graph.reduce_sum %[[X]] axes(%[[A]]) {keepdims = false} : (tensor<?x64xf32>, tensor<1xi64>) -> tensor<?xf32>
// CHECK: graph.reduce_max %[[X]] axes(%[[A]]) {keepdims = false, noop_with_empty_axes = true} : (tensor<?x64xf32>, tensor<1xi64>) -> tensor<?xf32>
func.func @reduce_axes(%x: tensor<?x64xf32>, %a: tensor<1xi64>) -> (tensor<?x1xf32>, tensor<?xf32>, tensor<?xf32>) {
  %0 = graph.reduce_mean %x axes(%a) {keepdims = true} : (tensor<?x64xf32>, tensor<1xi64>) -> tensor<?x1xf32>
  %1 = graph.reduce_sum %x axes(%a) {keepdims = false} : (tensor<?x64xf32>, tensor<1xi64>) -> tensor<?xf32>
  %2 = graph.reduce_max %x axes(%a) {keepdims = false, noop_with_empty_axes = true}
      : (tensor<?x64xf32>, tensor<1xi64>) -> tensor<?xf32>
  return %0, %1, %2 : tensor<?x1xf32>, tensor<?xf32>, tensor<?xf32>
}
