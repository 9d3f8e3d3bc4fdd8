

// Tests that a transposed graph.pack_weights' packed dim is the result's
// other dim: [4, 2] ++ [4, 3] along axis 1 is [4, 5], stored [5, 4].
func.func @pack_weights_transpose_total(%a: tensor<4x2xf32>, %b: tensor<4x3xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'graph.pack_weights' op packed dim is 4, weights add up to 5}}
  %0 = graph.pack_weights %a, %b {axis = 1 : i64, transpose} : (tensor<4x2xf32>, tensor<4x3xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}