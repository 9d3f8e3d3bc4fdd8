

// Tests that graph.shape round-trips with the default start, a start and an end.
// CHECK-LABEL: func.func @shape
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x8xf32>)
// CHECK: graph.shape %[[X]] : (tensor<?x?x8xf32>) -> tensor<3xi64>
// CHECK: graph.shape %[[X]] {end = -1 : i64, start = 1 : i64} : (tensor<?x?x8xf32>) -> tensor<1xi64>
func.func @shape(%x: tensor<?x?x8xf32>) -> (tensor<3xi64>, tensor<1xi64>) {
  %0 = graph.shape %x {start = 0 : i64} : (tensor<?x?x8xf32>) -> tensor<3xi64>
  %1 = graph.shape %x {start = 1 : i64, end = -1 : i64} : (tensor<?x?x8xf32>) -> tensor<1xi64>
  return %0, %1 : tensor<3xi64>, tensor<1xi64>
}
