

// Tests that a unary op keeps its element type (SameOperandsAndResultElementType).
func.func @exp_changes_type(%x: tensor<4xf32>) -> tensor<4xf16> {
  // expected-error @+1 {{'graph.exp' op requires the same element type for all operands and results}}
  %0 = graph.exp %x : (tensor<4xf32>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}
