

// Tests that graph.linear checks the input's features against the weight's K (here the [N, K] layout).
func.func @linear_input_features(%x: tensor<?x32xf32>, %w: tensor<192x64xf32>) -> tensor<?x192xf32> {
  // expected-error @+1 {{'graph.linear' op input has 32 features but the weight expects 64}}
  %0 = graph.linear %x, %w {transpose_weight = true} : (tensor<?x32xf32>, tensor<192x64xf32>) -> tensor<?x192xf32>
  return %0 : tensor<?x192xf32>
}
