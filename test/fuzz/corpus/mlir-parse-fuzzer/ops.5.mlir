

// Tests that graph.cast round-trips between element types.
// CHECK-LABEL: func.func @cast
// CHECK-SAME: (%[[X:.+]]: tensor<?xi64>)
// CHECK: graph.cast %[[X]] : (tensor<?xi64>) -> tensor<?xf32>
func.func @cast(%x: tensor<?xi64>) -> tensor<?xf32> {
  %0 = graph.cast %x : (tensor<?xi64>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
