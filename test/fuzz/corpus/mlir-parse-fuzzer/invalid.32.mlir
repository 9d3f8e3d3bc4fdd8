

// Tests that graph.slice's index operands must be i32 or i64 (ODS constraint).
func.func @slice_float_starts(%x: tensor<?xf32>, %f: tensor<1xf32>, %i: tensor<1xi64>) -> tensor<?xf32> {
  // expected-error @+1 {{'graph.slice' op operand #1 must be tensor of 64-bit signless integer or 32-bit signless integer values}}
  %0 = graph.slice %x, %f, %i, %i, %i : (tensor<?xf32>, tensor<1xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
