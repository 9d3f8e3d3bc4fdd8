

// Tests that graph.gather and graph.gather_nd round-trip.
// CHECK-LABEL: func.func @gather
// CHECK-SAME: (%[[T:.+]]: tensor<512x64xf32>, %[[IDS:.+]]: tensor<?x?xi64>, %[[X:.+]]: tensor<?x?xf32>, %[[IDX:.+]]: tensor<?x1xi64>)
// CHECK: graph.gather %[[T]], %[[IDS]] {axis = 0 : i64} : (tensor<512x64xf32>, tensor<?x?xi64>) -> tensor<?x?x64xf32>
// CHECK: graph.gather_nd %[[X]], %[[IDX]] : (tensor<?x?xf32>, tensor<?x1xi64>) -> tensor<?x?xf32>
// CHECK: graph.gather_nd %[[X]], %[[IDX]] {batch_dims = 1 : i64} : (tensor<?x?xf32>, tensor<?x1xi64>) -> tensor<?xf32>
func.func @gather(%t: tensor<512x64xf32>, %ids: tensor<?x?xi64>, %x: tensor<?x?xf32>, %idx: tensor<?x1xi64>)
    -> (tensor<?x?x64xf32>, tensor<?x?xf32>, tensor<?xf32>) {
  %0 = graph.gather %t, %ids {axis = 0 : i64} : (tensor<512x64xf32>, tensor<?x?xi64>) -> tensor<?x?x64xf32>
  %1 = graph.gather_nd %x, %idx {batch_dims = 0 : i64} : (tensor<?x?xf32>, tensor<?x1xi64>) -> tensor<?x?xf32>
  %2 = graph.gather_nd %x, %idx {batch_dims = 1 : i64} : (tensor<?x?xf32>, tensor<?x1xi64>) -> tensor<?xf32>
  return %0, %1, %2 : tensor<?x?x64xf32>, tensor<?x?xf32>, tensor<?xf32>
}
