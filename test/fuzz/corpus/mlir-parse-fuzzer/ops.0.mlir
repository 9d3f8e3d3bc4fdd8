
// Tests that graph.constant round-trips with integer, float and bool values.
// CHECK-LABEL: func.func @constant
// CHECK: graph.constant dense<[0, -1]> : tensor<2xi64>
// CHECK: graph.constant dense<1.500000e+00> : tensor<f32>
// CHECK: graph.constant dense<[true, false]> : tensor<2xi1>
func.func @constant() -> (tensor<2xi64>, tensor<f32>, tensor<2xi1>) {
  %0 = graph.constant dense<[0, -1]> : tensor<2xi64>
  %1 = graph.constant dense<1.5> : tensor<f32>
  %2 = graph.constant dense<[true, false]> : tensor<2xi1>
  return %0, %1, %2 : tensor<2xi64>, tensor<f32>, tensor<2xi1>
}
