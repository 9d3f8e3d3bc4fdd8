

// Tests that graph.trilu round-trips with and without k, upper and lower.
// CHECK-LABEL: func.func @trilu
// CHECK-SAME: (%[[X:.+]]: tensor<?x?xf32>, %[[K:.+]]: tensor<i64>)
// CHECK: graph.trilu %[[X]] k(%[[K]]) : (tensor<?x?xf32>, tensor<i64>) -> tensor<?x?xf32>
// CHECK: graph.trilu %[[X]] {upper = false} : (tensor<?x?xf32>) -> tensor<?x?xf32>
func.func @trilu(%x: tensor<?x?xf32>, %k: tensor<i64>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %0 = graph.trilu %x k(%k) {upper = true} : (tensor<?x?xf32>, tensor<i64>) -> tensor<?x?xf32>
  %1 = graph.trilu %x {upper = false} : (tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0, %1 : tensor<?x?xf32>, tensor<?x?xf32>
}
