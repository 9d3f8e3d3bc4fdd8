

// Tests that graph.where's condition must be a bool tensor (ODS constraint).
func.func @where_condition_not_bool(%c: tensor<4xf32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.where' op operand #0 must be tensor of 1-bit signless integer values}}
  %0 = graph.where %c, %x, %x : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
