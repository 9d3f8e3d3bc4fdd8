

// Tests that graph.expand and graph.tile round-trip.
// CHECK-LABEL: func.func @expand_tile
// CHECK-SAME: (%[[X:.+]]: tensor<1x?xf32>, %[[S:.+]]: tensor<2xi64>)
// CHECK: graph.expand %[[X]], %[[S]] : (tensor<1x?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
// CHECK: graph.tile %[[X]], %[[S]] : (tensor<1x?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
func.func @expand_tile(%x: tensor<1x?xf32>, %s: tensor<2xi64>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %0 = graph.expand %x, %s : (tensor<1x?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %1 = graph.tile %x, %s : (tensor<1x?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %0, %1 : tensor<?x?xf32>, tensor<?x?xf32>
}
