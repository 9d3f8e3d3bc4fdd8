

// Tests that graph.softmax round-trips with its single-type syntax.
// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:.+]]: tensor<?x4x?x?xf32>)
// CHECK: graph.softmax %[[X]] {axis = 3 : i64} : tensor<?x4x?x?xf32>
func.func @softmax(%x: tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32> {
  %0 = graph.softmax %x {axis = 3 : i64} : tensor<?x4x?x?xf32>
  return %0 : tensor<?x4x?x?xf32>
}
