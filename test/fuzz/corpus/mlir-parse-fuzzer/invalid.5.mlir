

// Tests that graph.or rejects non-bool operands.
func.func @or_not_bool(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xi1> {
  // expected-error @+1 {{'graph.or' op operands must be i1 tensors, got 'f32'}}
  %0 = graph.or %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}
