

// Tests that graph.transpose rejects a perm whose length is not the input rank.
func.func @transpose_wrong_length(%x: tensor<2x3x4xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{'graph.transpose' op perm has 2 entries but the input has rank 3}}
  %0 = graph.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3x4xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}
