

// Tests that graph.embedding round-trips with i64 and i32 ids and with an offset position table.
// CHECK-LABEL: func.func @embedding
// CHECK-SAME: (%[[TABLE:.+]]: tensor<512x64xf32>, %[[IDS:.+]]: tensor<?x?xi64>, %[[IDS32:.+]]: tensor<?xi32>, %[[WPE:.+]]: tensor<258x64xf32>)
// CHECK: graph.embedding %[[TABLE]], %[[IDS]] : (tensor<512x64xf32>, tensor<?x?xi64>) -> tensor<?x?x64xf32>
// CHECK: graph.embedding %[[TABLE]], %[[IDS32]] : (tensor<512x64xf32>, tensor<?xi32>) -> tensor<?x64xf32>
// CHECK: graph.embedding %[[TABLE]], %[[IDS]] positions(%[[WPE]]) {position_offset = 2 : i64} : (tensor<512x64xf32>, tensor<?x?xi64>, tensor<258x64xf32>) -> tensor<?x?x64xf32>
func.func @embedding(%table: tensor<512x64xf32>, %ids: tensor<?x?xi64>, %ids32: tensor<?xi32>, %wpe: tensor<258x64xf32>)
    -> (tensor<?x?x64xf32>, tensor<?x64xf32>, tensor<?x?x64xf32>) {
  %0 = graph.embedding %table, %ids : (tensor<512x64xf32>, tensor<?x?xi64>) -> tensor<?x?x64xf32>
  %1 = graph.embedding %table, %ids32 : (tensor<512x64xf32>, tensor<?xi32>) -> tensor<?x64xf32>
  %2 = graph.embedding %table, %ids positions(%wpe) {position_offset = 2 : i64}
      : (tensor<512x64xf32>, tensor<?x?xi64>, tensor<258x64xf32>) -> tensor<?x?x64xf32>
  return %0, %1, %2 : tensor<?x?x64xf32>, tensor<?x64xf32>, tensor<?x?x64xf32>
}
