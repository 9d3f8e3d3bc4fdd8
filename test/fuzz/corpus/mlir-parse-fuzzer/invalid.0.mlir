
// Tests that an arithmetic binary op rejects operands of different element types.
func.func @add_mixed_operands(%x: tensor<4xf32>, %y: tensor<4xi64>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.add' op operands must have the same element type, got 'f32' and 'i64'}}
  %0 = graph.add %x, %y : (tensor<4xf32>, tensor<4xi64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
