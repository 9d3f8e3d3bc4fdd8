

// Tests that graph.einsum needs one equation term per input.
func.func @einsum_term_count(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'graph.einsum' op equation names 2 inputs but the op has 1}}
  %0 = graph.einsum %a {equation = "ij,jk->ik"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
