

// Tests that graph.einsum needs each term to have one letter per input dim.
func.func @einsum_rank_mismatch(%a: tensor<2x3x4xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'graph.einsum' op term 'ij' does not match an input of rank 3}}
  %0 = graph.einsum %a, %b {equation = "ij,jk->ik"} : (tensor<2x3x4xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
