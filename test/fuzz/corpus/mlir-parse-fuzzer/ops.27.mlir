

// Tests that graph.matmul round-trips with batched and 1-D operands.
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x64xf32>, %[[W:.+]]: tensor<64x192xf32>, %[[V:.+]]: tensor<64xf32>)
// CHECK: graph.matmul %[[X]], %[[W]] : (tensor<?x?x64xf32>, tensor<64x192xf32>) -> tensor<?x?x192xf32>
// CHECK: graph.matmul %[[X]], %[[V]] : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?xf32>
func.func @matmul(%x: tensor<?x?x64xf32>, %w: tensor<64x192xf32>, %v: tensor<64xf32>)
    -> (tensor<?x?x192xf32>, tensor<?x?xf32>) {
  %0 = graph.matmul %x, %w : (tensor<?x?x64xf32>, tensor<64x192xf32>) -> tensor<?x?x192xf32>
  %1 = graph.matmul %x, %v : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?xf32>
  return %0, %1 : tensor<?x?x192xf32>, tensor<?x?xf32>
}
