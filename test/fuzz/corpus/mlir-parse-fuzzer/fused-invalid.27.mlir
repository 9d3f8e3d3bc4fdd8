

// Tests that the packed form's result is half of gate_up.
func.func @gated_activation_packed_result(%gu: tensor<?x320xf32>) -> tensor<?x320xf32> {
  // expected-error @+1 {{'graph.gated_activation' op result has 320 features, expected half of 320}}
  %0 = graph.gated_activation %gu {activation = "gelu"} : (tensor<?x320xf32>) -> tensor<?x320xf32>
  return %0 : tensor<?x320xf32>
}
