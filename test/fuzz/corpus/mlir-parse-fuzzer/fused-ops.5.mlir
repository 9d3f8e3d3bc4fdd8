

// Tests that graph.gated_activation round-trips packed and split, with each activation.
// CHECK-LABEL: func.func @gated_activation
// CHECK-SAME: (%[[GU:.+]]: tensor<?x?x320xf32>, %[[G:.+]]: tensor<?x?x160xf32>, %[[U:.+]]: tensor<?x?x160xf32>)
// CHECK: graph.gated_activation %[[GU]] {activation = "silu"} : (tensor<?x?x320xf32>) -> tensor<?x?x160xf32>
// CHECK: graph.gated_activation %[[G]], %[[U]] {activation = "gelu"} : (tensor<?x?x160xf32>, tensor<?x?x160xf32>) -> tensor<?x?x160xf32>
// CHECK: graph.gated_activation %[[GU]] {activation = "gelu_tanh"} : (tensor<?x?x320xf32>) -> tensor<?x?x160xf32>
func.func @gated_activation(%gu: tensor<?x?x320xf32>, %g: tensor<?x?x160xf32>, %u: tensor<?x?x160xf32>)
    -> (tensor<?x?x160xf32>, tensor<?x?x160xf32>, tensor<?x?x160xf32>) {
  %0 = graph.gated_activation %gu {activation = "silu"} : (tensor<?x?x320xf32>) -> tensor<?x?x160xf32>
  %1 = graph.gated_activation %g, %u {activation = "gelu"}
      : (tensor<?x?x160xf32>, tensor<?x?x160xf32>) -> tensor<?x?x160xf32>
  %2 = graph.gated_activation %gu {activation = "gelu_tanh"} : (tensor<?x?x320xf32>) -> tensor<?x?x160xf32>
  return %0, %1, %2 : tensor<?x?x160xf32>, tensor<?x?x160xf32>, tensor<?x?x160xf32>
}
