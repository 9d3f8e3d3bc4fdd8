

// Tests that graph.gated_activation takes one or two operands.
func.func @gated_activation_three(%a: tensor<?x160xf32>) -> tensor<?x160xf32> {
  // expected-error @+1 {{'graph.gated_activation' op takes gate_up or gate and up, got 3 operands}}
  %0 = graph.gated_activation %a, %a, %a {activation = "silu"}
      : (tensor<?x160xf32>, tensor<?x160xf32>, tensor<?x160xf32>) -> tensor<?x160xf32>
  return %0 : tensor<?x160xf32>
}
