

// Tests that graph.pack_weights needs a weight.
func.func @pack_weights_empty() -> tensor<4xf32> {
  // expected-error @+1 {{'graph.pack_weights' op needs at least one weight}}
  %0 = graph.pack_weights {axis = 0 : i64} : () -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
