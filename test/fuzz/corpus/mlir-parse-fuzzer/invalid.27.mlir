

// Tests that graph.not rejects a non-bool input (ODS constraint).
func.func @not_on_float(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.not' op operand #0 must be tensor of 1-bit signless integer values}}
  %0 = graph.not %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
