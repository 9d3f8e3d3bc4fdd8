

// Tests that a comparison must produce i1.
func.func @less_not_bool(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.less' op result element type must be 'i1', got 'f32'}}
  %0 = graph.less %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
