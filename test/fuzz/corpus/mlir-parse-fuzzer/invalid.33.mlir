

// Tests that graph.shape must produce i64 (ODS constraint).
func.func @shape_result_i32(%x: tensor<?x4xf32>) -> tensor<2xi32> {
  // expected-error @+1 {{'graph.shape' op result #0 must be tensor of 64-bit signless integer values}}
  %0 = graph.shape %x : (tensor<?x4xf32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}
