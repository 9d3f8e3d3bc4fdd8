

// Tests that graph.softmax rejects an axis at or past the rank.
func.func @softmax_axis_out_of_range(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'graph.softmax' op axis 2 is out of range for rank 2}}
  %0 = graph.softmax %x {axis = 2 : i64} : tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}
