

// Tests that graph.pack_weights needs weights of the result's rank and element type.
func.func @pack_weights_rank(%a: tensor<4x2xf32>, %b: tensor<8xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'graph.pack_weights' op weights must share the result's rank and element type}}
  %0 = graph.pack_weights %a, %b {axis = 1 : i64} : (tensor<4x2xf32>, tensor<8xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
