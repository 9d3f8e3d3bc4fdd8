

// Tests that graph.range round-trips over scalars.
// CHECK-LABEL: func.func @range
// CHECK-SAME: (%[[S:.+]]: tensor<i64>, %[[L:.+]]: tensor<i64>, %[[D:.+]]: tensor<i64>)
// CHECK: graph.range %[[S]], %[[L]], %[[D]] : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
func.func @range(%s: tensor<i64>, %l: tensor<i64>, %d: tensor<i64>) -> tensor<?xi64> {
  %0 = graph.range %s, %l, %d : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  return %0 : tensor<?xi64>
}
