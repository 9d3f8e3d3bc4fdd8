

// Tests that graph.linear round-trips without, with either and with both optional operands.
// CHECK-LABEL: func.func @linear
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x64xf32>, %[[W:.+]]: tensor<64x192xf32>, %[[WT:.+]]: tensor<192x64xf32>, %[[B:.+]]: tensor<192xf32>, %[[R:.+]]: tensor<?x?x192xf32>)
// CHECK: graph.linear %[[X]], %[[W]] : (tensor<?x?x64xf32>, tensor<64x192xf32>) -> tensor<?x?x192xf32>
// CHECK: graph.linear %[[X]], %[[W]] bias(%[[B]]) : (tensor<?x?x64xf32>, tensor<64x192xf32>, tensor<192xf32>) -> tensor<?x?x192xf32>
// CHECK: graph.linear %[[X]], %[[WT]] residual(%[[R]]) {transpose_weight = true} : (tensor<?x?x64xf32>, tensor<192x64xf32>, tensor<?x?x192xf32>) -> tensor<?x?x192xf32>
// CHECK: graph.linear %[[X]], %[[WT]] bias(%[[B]]) residual(%[[R]]) {transpose_weight = true} : (tensor<?x?x64xf32>, tensor<192x64xf32>, tensor<192xf32>, tensor<?x?x192xf32>) -> tensor<?x?x192xf32>
func.func @linear(%x: tensor<?x?x64xf32>, %w: tensor<64x192xf32>, %wt: tensor<192x64xf32>, %b: tensor<192xf32>,
                  %r: tensor<?x?x192xf32>)
    -> (tensor<?x?x192xf32>, tensor<?x?x192xf32>, tensor<?x?x192xf32>, tensor<?x?x192xf32>) {
  %0 = graph.linear %x, %w : (tensor<?x?x64xf32>, tensor<64x192xf32>) -> tensor<?x?x192xf32>
  %1 = graph.linear %x, %w bias(%b) : (tensor<?x?x64xf32>, tensor<64x192xf32>, tensor<192xf32>) -> tensor<?x?x192xf32>
  %2 = graph.linear %x, %wt residual(%r) {transpose_weight = true}
      : (tensor<?x?x64xf32>, tensor<192x64xf32>, tensor<?x?x192xf32>) -> tensor<?x?x192xf32>
  %3 = graph.linear %x, %wt bias(%b) residual(%r) {transpose_weight = true}
      : (tensor<?x?x64xf32>, tensor<192x64xf32>, tensor<192xf32>, tensor<?x?x192xf32>) -> tensor<?x?x192xf32>
  return %0, %1, %2, %3 : tensor<?x?x192xf32>, tensor<?x?x192xf32>, tensor<?x?x192xf32>, tensor<?x?x192xf32>
}
