

// Tests that the reductions round-trip without axes, with default and non-default flags.
// CHECK-LABEL: func.func @reduce
// CHECK-SAME: (%[[X:.+]]: tensor<?x64xf32>)
// CHECK: graph.reduce_mean %[[X]] : (tensor<?x64xf32>) -> tensor<1x1xf32>
// CHECK: graph.reduce_sum %[[X]] {keepdims = false} : (tensor<?x64xf32>) -> tensor<f32>
// CHECK: graph.reduce_max %[[X]] {noop_with_empty_axes = true} : (tensor<?x64xf32>) -> tensor<?x64xf32>
func.func @reduce(%x: tensor<?x64xf32>) -> (tensor<1x1xf32>, tensor<f32>, tensor<?x64xf32>) {
  %0 = graph.reduce_mean %x {keepdims = true} : (tensor<?x64xf32>) -> tensor<1x1xf32>
  %1 = graph.reduce_sum %x {keepdims = false} : (tensor<?x64xf32>) -> tensor<f32>
  %2 = graph.reduce_max %x {noop_with_empty_axes = true} : (tensor<?x64xf32>) -> tensor<?x64xf32>
  return %0, %1, %2 : tensor<1x1xf32>, tensor<f32>, tensor<?x64xf32>
}
