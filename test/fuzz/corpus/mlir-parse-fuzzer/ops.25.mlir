

// Tests that graph.layer_normalization round-trips with and without a bias.
// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x64xf32>, %[[S:.+]]: tensor<64xf32>, %[[B:.+]]: tensor<64xf32>)
// CHECK: graph.layer_normalization %[[X]], %[[S]] bias(%[[B]]) {axis = 2 : i64} : (tensor<?x?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
// CHECK: graph.layer_normalization %[[X]], %[[S]] {axis = 2 : i64, epsilon = 9.99999997E-7 : f32} : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
func.func @layer_norm(%x: tensor<?x?x64xf32>, %s: tensor<64xf32>, %b: tensor<64xf32>)
    -> (tensor<?x?x64xf32>, tensor<?x?x64xf32>) {
  %0 = graph.layer_normalization %x, %s bias(%b) {axis = 2 : i64}
      : (tensor<?x?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  %1 = graph.layer_normalization %x, %s {axis = 2 : i64, epsilon = 1.0e-6 : f32}
      : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  return %0, %1 : tensor<?x?x64xf32>, tensor<?x?x64xf32>
}
