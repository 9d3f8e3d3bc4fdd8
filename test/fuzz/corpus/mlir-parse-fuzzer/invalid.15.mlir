

// Tests that graph.concat needs at least one input.
func.func @concat_no_inputs() -> tensor<0xi64> {
  // expected-error @+1 {{'graph.concat' op needs at least one input}}
  %0 = graph.concat {axis = 0 : i64} : () -> tensor<0xi64>
  return %0 : tensor<0xi64>
}
