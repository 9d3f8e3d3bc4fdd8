

// Tests that graph.reshape round-trips with and without allowzero.
// CHECK-LABEL: func.func @reshape
// CHECK-SAME: (%[[X:.+]]: tensor<?x64xf32>, %[[S:.+]]: tensor<3xi64>)
// CHECK: graph.reshape %[[X]], %[[S]] : (tensor<?x64xf32>, tensor<3xi64>) -> tensor<?x4x16xf32>
// CHECK: graph.reshape %[[X]], %[[S]] {allowzero = true} : (tensor<?x64xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
func.func @reshape(%x: tensor<?x64xf32>, %s: tensor<3xi64>) -> (tensor<?x4x16xf32>, tensor<?x?x?xf32>) {
  %0 = graph.reshape %x, %s : (tensor<?x64xf32>, tensor<3xi64>) -> tensor<?x4x16xf32>
  %1 = graph.reshape %x, %s {allowzero = true} : (tensor<?x64xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
  return %0, %1 : tensor<?x4x16xf32>, tensor<?x?x?xf32>
}
