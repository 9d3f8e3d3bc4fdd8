

// Tests that a packed gate_up has an even number of features.
func.func @gated_activation_odd(%gu: tensor<?x321xf32>) -> tensor<?x160xf32> {
  // expected-error @+1 {{'graph.gated_activation' op packed gate_up has an odd number of features (321)}}
  %0 = graph.gated_activation %gu {activation = "silu"} : (tensor<?x321xf32>) -> tensor<?x160xf32>
  return %0 : tensor<?x160xf32>
}
