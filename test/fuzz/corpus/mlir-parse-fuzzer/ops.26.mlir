

// Tests that graph.cumsum round-trips with its flags.
// CHECK-LABEL: func.func @cumsum
// CHECK-SAME: (%[[X:.+]]: tensor<?x?xi64>, %[[A:.+]]: tensor<i64>)
// CHECK: graph.cumsum %[[X]], %[[A]] : (tensor<?x?xi64>, tensor<i64>) -> tensor<?x?xi64>
// CHECK: graph.cumsum %[[X]], %[[A]] {exclusive = true, reverse = true} : (tensor<?x?xi64>, tensor<i64>) -> tensor<?x?xi64>
func.func @cumsum(%x: tensor<?x?xi64>, %a: tensor<i64>) -> (tensor<?x?xi64>, tensor<?x?xi64>) {
  %0 = graph.cumsum %x, %a {exclusive = false, reverse = false} : (tensor<?x?xi64>, tensor<i64>) -> tensor<?x?xi64>
  %1 = graph.cumsum %x, %a {exclusive = true, reverse = true} : (tensor<?x?xi64>, tensor<i64>) -> tensor<?x?xi64>
  return %0, %1 : tensor<?x?xi64>, tensor<?x?xi64>
}
