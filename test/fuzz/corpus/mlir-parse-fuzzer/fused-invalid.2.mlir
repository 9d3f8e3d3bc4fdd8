

// Tests that graph.linear checks the result's features against the weight's N.
func.func @linear_result_features(%x: tensor<?x64xf32>, %w: tensor<64x192xf32>) -> tensor<?x64xf32> {
  // expected-error @+1 {{'graph.linear' op result has 64 features but the weight gives 192}}
  %0 = graph.linear %x, %w : (tensor<?x64xf32>, tensor<64x192xf32>) -> tensor<?x64xf32>
  return %0 : tensor<?x64xf32>
}
