

// Tests that a transposed graph.pack_weights needs rank-2 weights.
func.func @pack_weights_transpose_rank(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'graph.pack_weights' op transpose needs rank-2 weights, got rank 1}}
  %0 = graph.pack_weights %a, %b {axis = 0 : i64, transpose} : (tensor<4xf32>, tensor<4xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
