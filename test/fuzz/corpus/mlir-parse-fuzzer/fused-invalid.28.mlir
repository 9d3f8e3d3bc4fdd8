

// Tests that gate and up have the same number of features.
func.func @gated_activation_pair(%g: tensor<?x160xf32>, %u: tensor<?x128xf32>) -> tensor<?x160xf32> {
  // expected-error @+1 {{'graph.gated_activation' op gate has 160 features but up has 128}}
  %0 = graph.gated_activation %g, %u {activation = "silu"}
      : (tensor<?x160xf32>, tensor<?x128xf32>) -> tensor<?x160xf32>
  return %0 : tensor<?x160xf32>
}
