

// Tests that graph.einsum rejects an ellipsis.
func.func @einsum_ellipsis(%a: tensor<2x3x4xf32>) -> tensor<2x4x3xf32> {
  // expected-error @+1 {{'graph.einsum' op ellipsis in einsum equations is not supported}}
  %0 = graph.einsum %a {equation = "...ij->...ji"} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
  return %0 : tensor<2x4x3xf32>
}
