

// Tests that graph.einsum rejects an implicit-output equation.
func.func @einsum_implicit(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'graph.einsum' op equation must be explicit (contain '->'), got "ij,jk"}}
  %0 = graph.einsum %a, %b {equation = "ij,jk"} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
