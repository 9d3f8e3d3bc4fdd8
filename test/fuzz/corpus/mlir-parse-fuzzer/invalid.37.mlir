

// Tests that an unsqueeze's constant axes lie in the result's rank.
func.func @unsqueeze_axis_out_of_range(%x: tensor<2x4xf32>) -> tensor<2x4x1xf32> {
  %a = graph.constant dense<[3]> : tensor<1xi64>
  // expected-error @+1 {{'graph.unsqueeze' op axis 3 is out of range for the result's rank 3}}
  %0 = graph.unsqueeze %x, %a : (tensor<2x4xf32>, tensor<1xi64>) -> tensor<2x4x1xf32>
  return %0 : tensor<2x4x1xf32>
}
