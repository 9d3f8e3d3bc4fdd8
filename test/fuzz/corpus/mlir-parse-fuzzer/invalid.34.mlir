

// Tests that graph.softmax keeps its operand type (SameOperandsAndResultType).
func.func @softmax_type_change(%x: tensor<2x8xf32>) -> tensor<2x8xf16> {
  // expected-error @+1 {{'graph.softmax' op requires the same type for all operands and results}}
  %0 = "graph.softmax"(%x) <{axis = 1 : i64}> : (tensor<2x8xf32>) -> tensor<2x8xf16>
  return %0 : tensor<2x8xf16>
}
