
// Tests that graph.linear needs a rank-2 weight.
func.func @linear_weight_rank(%x: tensor<?x64xf32>, %w: tensor<64xf32>) -> tensor<?x64xf32> {
  // expected-error @+1 {{'graph.linear' op weight must be a rank-2 tensor}}
  %0 = graph.linear %x, %w : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  return %0 : tensor<?x64xf32>
}
