

// Tests that a transposed graph.pack_weights' result is the concatenation's
// shape reversed: [4, 2] ++ [4, 2] along axis 0 is [8, 2], stored [2, 8], not [8, 2].
func.func @pack_weights_transpose_dim(%a: tensor<4x2xf32>, %b: tensor<4x2xf32>) -> tensor<8x2xf32> {
  // expected-error @+1 {{'graph.pack_weights' op weights differ from the result's transpose in dim 1}}
  %0 = graph.pack_weights %a, %b {axis = 0 : i64, transpose} : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
  return %0 : tensor<8x2xf32>
}
