

// Tests that graph.gelu accepts only "none" and "tanh".
func.func @gelu_bad_approximate(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.gelu' op approximate must be "none" or "tanh", got "fast"}}
  %0 = graph.gelu %x {approximate = "fast"} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
