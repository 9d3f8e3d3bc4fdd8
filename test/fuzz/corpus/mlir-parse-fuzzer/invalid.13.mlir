

// Tests that graph.concat rejects a negative axis (the importer normalises them).
func.func @concat_negative_axis(%a: tensor<2x3xf32>) -> tensor<2x6xf32> {
  // expected-error @+1 {{'graph.concat' op axis -1 is out of range for rank 2}}
  %0 = graph.concat %a, %a {axis = -1 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}
