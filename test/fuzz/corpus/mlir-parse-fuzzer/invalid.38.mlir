

// Tests that an unsqueeze adds one dim per axis.
func.func @unsqueeze_rank(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %a = graph.constant dense<[0]> : tensor<1xi64>
  // expected-error @+1 {{'graph.unsqueeze' op result rank 2 is not the input rank 2 plus 1 axes}}
  %0 = graph.unsqueeze %x, %a : (tensor<2x4xf32>, tensor<1xi64>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}