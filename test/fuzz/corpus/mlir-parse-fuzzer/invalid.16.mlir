

// Tests that graph.gather rejects an axis at or past the data rank.
func.func @gather_axis_out_of_range(%t: tensor<8x4xf32>, %i: tensor<3xi64>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'graph.gather' op axis 2 is out of range for rank 2}}
  %0 = graph.gather %t, %i {axis = 2 : i64} : (tensor<8x4xf32>, tensor<3xi64>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
