

// Tests that graph.gated_activation rejects an unknown activation.
func.func @gated_activation_name(%gu: tensor<?x320xf32>) -> tensor<?x160xf32> {
  // expected-error @+1 {{'graph.gated_activation' op activation must be "silu", "gelu" or "gelu_tanh", got "relu"}}
  %0 = graph.gated_activation %gu {activation = "relu"} : (tensor<?x320xf32>) -> tensor<?x160xf32>
  return %0 : tensor<?x160xf32>
}
