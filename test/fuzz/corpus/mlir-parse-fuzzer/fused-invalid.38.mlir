

// Tests that graph.pack_weights needs weights that agree with the result off the packed axis.
func.func @pack_weights_dim(%a: tensor<4x2xf32>, %b: tensor<3x2xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'graph.pack_weights' op weights differ from the result in dim 0}}
  %0 = graph.pack_weights %a, %b {axis = 1 : i64} : (tensor<4x2xf32>, tensor<3x2xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
