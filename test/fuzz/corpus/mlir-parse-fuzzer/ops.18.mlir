

// Tests that graph.split round-trips with sizes and several results, and without sizes.
// CHECK-LABEL: func.func @split
// CHECK-SAME: (%[[X:.+]]: tensor<?x8xf32>, %[[S:.+]]: tensor<3xi64>)
// CHECK: %[[P:.+]]:3 = graph.split %[[X]] split(%[[S]]) {axis = 1 : i64} : (tensor<?x8xf32>, tensor<3xi64>) -> (tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x4xf32>)
// CHECK: %[[Q:.+]]:2 = graph.split %[[X]] {axis = 1 : i64} : (tensor<?x8xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>)
// CHECK: return %[[P]]#0, %[[P]]#1, %[[P]]#2, %[[Q]]#0, %[[Q]]#1
func.func @split(%x: tensor<?x8xf32>, %s: tensor<3xi64>)
    -> (tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) {
  %a, %b, %c = graph.split %x split(%s) {axis = 1 : i64}
      : (tensor<?x8xf32>, tensor<3xi64>) -> (tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x4xf32>)
  %d:2 = graph.split %x {axis = 1 : i64} : (tensor<?x8xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>)
  return %a, %b, %c, %d#0, %d#1 : tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>
}
