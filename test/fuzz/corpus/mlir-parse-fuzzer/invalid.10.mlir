

// Tests that graph.transpose rejects a perm entry outside [0, rank).
func.func @transpose_out_of_range(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{'graph.transpose' op perm must be a permutation of [0, 2)}}
  %0 = graph.transpose %x {perm = array<i64: 1, 2>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}
