

// Tests that graph.concat round-trips with one and with three inputs.
// CHECK-LABEL: func.func @concat
// CHECK-SAME: (%[[A:.+]]: tensor<1xi64>, %[[B:.+]]: tensor<2xi64>)
// CHECK: graph.concat %[[A]], %[[B]], %[[A]] {axis = 0 : i64} : (tensor<1xi64>, tensor<2xi64>, tensor<1xi64>) -> tensor<4xi64>
// CHECK: graph.concat %[[B]] {axis = 0 : i64} : (tensor<2xi64>) -> tensor<2xi64>
func.func @concat(%a: tensor<1xi64>, %b: tensor<2xi64>) -> (tensor<4xi64>, tensor<2xi64>) {
  %0 = graph.concat %a, %b, %a {axis = 0 : i64} : (tensor<1xi64>, tensor<2xi64>, tensor<1xi64>) -> tensor<4xi64>
  %1 = graph.concat %b {axis = 0 : i64} : (tensor<2xi64>) -> tensor<2xi64>
  return %0, %1 : tensor<4xi64>, tensor<2xi64>
}
