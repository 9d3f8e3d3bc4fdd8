

// Tests that graph.concat rejects inputs of different element types.
func.func @concat_mixed_types(%a: tensor<2xi64>, %b: tensor<2xi32>) -> tensor<4xi64> {
  // expected-error @+1 {{'graph.concat' op inputs must share one element type}}
  %0 = graph.concat %a, %b {axis = 0 : i64} : (tensor<2xi64>, tensor<2xi32>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}
