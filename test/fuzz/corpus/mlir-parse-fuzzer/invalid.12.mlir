

// Tests that graph.concat rejects an axis at or past the rank.
func.func @concat_axis_out_of_range(%a: tensor<2x3xf32>) -> tensor<2x6xf32> {
  // expected-error @+1 {{'graph.concat' op axis 2 is out of range for rank 2 (the importer makes axes non-negative)}}
  %0 = graph.concat %a, %a {axis = 2 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}
