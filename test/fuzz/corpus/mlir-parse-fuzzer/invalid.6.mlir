

// Tests that graph.pow's result follows the base's element type.
func.func @pow_bad_result(%x: tensor<4xf32>, %e: tensor<i64>) -> tensor<4xi64> {
  // expected-error @+1 {{'graph.pow' op result element type must match the base's}}
  %0 = graph.pow %x, %e : (tensor<4xf32>, tensor<i64>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}
