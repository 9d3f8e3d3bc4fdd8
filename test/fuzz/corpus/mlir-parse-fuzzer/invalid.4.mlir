

// Tests that graph.and rejects non-bool operands.
func.func @and_not_bool(%x: tensor<4xi64>, %y: tensor<4xi64>) -> tensor<4xi1> {
  // expected-error @+1 {{'graph.and' op operands must be i1 tensors, got 'i64'}}
  %0 = graph.and %x, %y : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}
