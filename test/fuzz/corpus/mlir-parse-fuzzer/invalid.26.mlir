

// Tests that graph.constant's value and result types must match (generic form).
func.func @constant_type_mismatch() -> tensor<3xi64> {
  // expected-error @+1 {{'graph.constant' op failed to verify that all of {value, result} have same type}}
  %0 = "graph.constant"() <{value = dense<[1, 2]> : tensor<2xi64>}> : () -> tensor<3xi64>
  return %0 : tensor<3xi64>
}
