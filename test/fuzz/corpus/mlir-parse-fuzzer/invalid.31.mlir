

// Tests that graph.constant_of_shape's shape operand must be i64 (ODS constraint).
func.func @constant_of_shape_i32(%s: tensor<2xi32>) -> tensor<?x?xf32> {
  // expected-error @+1 {{'graph.constant_of_shape' op operand #0 must be tensor of 64-bit signless integer values}}
  %0 = graph.constant_of_shape %s {value = dense<0.0> : tensor<1xf32>} : (tensor<2xi32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
