

// Tests that graph.linear checks the bias length against the weight's N.
func.func @linear_bias(%x: tensor<?x64xf32>, %w: tensor<64x192xf32>, %b: tensor<64xf32>) -> tensor<?x192xf32> {
  // expected-error @+1 {{'graph.linear' op bias has 64 entries but the weight gives 192}}
  %0 = graph.linear %x, %w bias(%b) : (tensor<?x64xf32>, tensor<64x192xf32>, tensor<64xf32>) -> tensor<?x192xf32>
  return %0 : tensor<?x192xf32>
}
