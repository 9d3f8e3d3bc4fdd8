

// Tests that graph.constant_of_shape round-trips with its fill value.
// CHECK-LABEL: func.func @constant_of_shape
// CHECK-SAME: (%[[SHAPE:.+]]: tensor<2xi64>)
// CHECK: graph.constant_of_shape %[[SHAPE]] {value = dense<0.000000e+00> : tensor<1xf32>} : (tensor<2xi64>) -> tensor<?x?xf32>
// CHECK: graph.constant_of_shape %[[SHAPE]] {value = dense<true> : tensor<1xi1>} : (tensor<2xi64>) -> tensor<*xi1>
func.func @constant_of_shape(%shape: tensor<2xi64>) -> (tensor<?x?xf32>, tensor<*xi1>) {
  %0 = graph.constant_of_shape %shape {value = dense<0.0> : tensor<1xf32>} : (tensor<2xi64>) -> tensor<?x?xf32>
  %1 = graph.constant_of_shape %shape {value = dense<true> : tensor<1xi1>} : (tensor<2xi64>) -> tensor<*xi1>
  return %0, %1 : tensor<?x?xf32>, tensor<*xi1>
}
