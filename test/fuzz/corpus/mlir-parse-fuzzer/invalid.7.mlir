

// Tests that graph.where needs x, y and the result to share an element type.
func.func @where_mixed(%c: tensor<4xi1>, %x: tensor<4xf32>, %y: tensor<4xi64>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.where' op x, y and result must have one element type, got 'f32', 'i64' and 'f32'}}
  %0 = graph.where %c, %x, %y : (tensor<4xi1>, tensor<4xf32>, tensor<4xi64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
