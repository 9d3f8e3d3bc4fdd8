

// Tests that graph.gather's indices must be i32 or i64 (ODS constraint).
func.func @gather_float_indices(%t: tensor<8x4xf32>, %i: tensor<3xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{'graph.gather' op operand #1 must be tensor of 64-bit signless integer or 32-bit signless integer values}}
  %0 = graph.gather %t, %i {axis = 0 : i64} : (tensor<8x4xf32>, tensor<3xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
