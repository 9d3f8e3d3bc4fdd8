

// Tests that graph.transpose rejects a perm with a repeated entry.
func.func @transpose_not_permutation(%x: tensor<2x3xf32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{'graph.transpose' op perm must be a permutation of [0, 2)}}
  %0 = graph.transpose %x {perm = array<i64: 0, 0>} : (tensor<2x3xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}
