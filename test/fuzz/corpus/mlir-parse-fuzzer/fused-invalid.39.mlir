

// Tests that graph.pack_weights' packed dim is the sum of the weights'.
func.func @pack_weights_total(%a: tensor<4x2xf32>, %b: tensor<4x3xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'graph.pack_weights' op packed dim is 4, weights add up to 5}}
  %0 = graph.pack_weights %a, %b {axis = 1 : i64} : (tensor<4x2xf32>, tensor<4x3xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
