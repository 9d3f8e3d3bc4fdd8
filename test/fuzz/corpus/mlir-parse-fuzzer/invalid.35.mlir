

// Tests that graph.transpose needs a perm attribute.
func.func @transpose_no_perm(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{'graph.transpose' op requires attribute 'perm'}}
  %0 = graph.transpose %x : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}
