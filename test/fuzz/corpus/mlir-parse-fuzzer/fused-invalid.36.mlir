

// Tests that graph.pack_weights needs an axis within the result's rank.
func.func @pack_weights_axis(%a: tensor<4x2xf32>, %b: tensor<4x2xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'graph.pack_weights' op axis 2 is out of range for rank 2}}
  %0 = graph.pack_weights %a, %b {axis = 2 : i64} : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
