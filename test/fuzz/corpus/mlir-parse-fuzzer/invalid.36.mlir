

// Tests that an unsqueeze's constant axes may not repeat (passes index the output by them).
func.func @unsqueeze_repeated_axes(%x: tensor<2x4xf32>) -> tensor<2x1x1x4xf32> {
  %a = graph.constant dense<[1, 1]> : tensor<2xi64>
  // expected-error @+1 {{'graph.unsqueeze' op axis 1 is given twice}}
  %0 = graph.unsqueeze %x, %a : (tensor<2x4xf32>, tensor<2xi64>) -> tensor<2x1x1x4xf32>
  return %0 : tensor<2x1x1x4xf32>
}
