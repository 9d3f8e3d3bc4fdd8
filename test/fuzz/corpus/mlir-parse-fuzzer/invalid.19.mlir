

// Tests that graph.softmax rejects a negative axis.
func.func @softmax_negative_axis(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'graph.softmax' op axis -1 is out of range for rank 2}}
  %0 = graph.softmax %x {axis = -1 : i64} : tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}
