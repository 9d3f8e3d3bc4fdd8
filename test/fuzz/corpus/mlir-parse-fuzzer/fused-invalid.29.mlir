

// Tests that the two-operand form's result has gate's features.
func.func @gated_activation_pair_result(%g: tensor<?x160xf32>, %u: tensor<?x160xf32>) -> tensor<?x80xf32> {
  // expected-error @+1 {{'graph.gated_activation' op result has 80 features, expected 160}}
  %0 = graph.gated_activation %g, %u {activation = "gelu_tanh"}
      : (tensor<?x160xf32>, tensor<?x160xf32>) -> tensor<?x80xf32>
  return %0 : tensor<?x80xf32>
}
