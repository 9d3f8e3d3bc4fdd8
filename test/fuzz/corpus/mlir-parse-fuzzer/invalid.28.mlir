

// Tests that graph.is_nan must produce i1 (ODS constraint).
func.func @is_nan_not_bool(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.is_nan' op result #0 must be tensor of 1-bit signless integer values}}
  %0 = graph.is_nan %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
