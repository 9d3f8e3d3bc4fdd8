

// Tests that graph.reshape's shape operand must be i64 (ODS constraint).
func.func @reshape_shape_not_i64(%x: tensor<?x64xf32>, %s: tensor<2xi32>) -> tensor<?x?xf32> {
  // expected-error @+1 {{'graph.reshape' op operand #1 must be tensor of 64-bit signless integer values}}
  %0 = graph.reshape %x, %s : (tensor<?x64xf32>, tensor<2xi32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
