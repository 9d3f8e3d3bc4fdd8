

// Tests that graph.fusion_group round-trips its region, block arguments and two yielded results.
// CHECK-LABEL: func.func @fusion_group
// CHECK-SAME: (%[[A:.+]]: tensor<?x64xf32>, %[[B:.+]]: tensor<?x64xf32>)
// CHECK: %[[R:.+]]:2 = graph.fusion_group %[[A]], %[[B]] : (tensor<?x64xf32>, tensor<?x64xf32>) -> (tensor<?x64xf32>, tensor<?x64xf32>) {
// CHECK: ^bb0(%[[X:.+]]: tensor<?x64xf32>, %[[Y:.+]]: tensor<?x64xf32>):
// CHECK: %[[SUM:.+]] = graph.add %[[X]], %[[Y]]
// CHECK: %[[PROD:.+]] = graph.mul %[[SUM]], %[[Y]]
// CHECK: graph.yield %[[SUM]], %[[PROD]] : tensor<?x64xf32>, tensor<?x64xf32>
// CHECK: return %[[R]]#0, %[[R]]#1
func.func @fusion_group(%a: tensor<?x64xf32>, %b: tensor<?x64xf32>) -> (tensor<?x64xf32>, tensor<?x64xf32>) {
  %0:2 = graph.fusion_group %a, %b : (tensor<?x64xf32>, tensor<?x64xf32>) -> (tensor<?x64xf32>, tensor<?x64xf32>) {
  ^bb0(%x: tensor<?x64xf32>, %y: tensor<?x64xf32>):
    %s = graph.add %x, %y : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
    %p = graph.mul %s, %y : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
    graph.yield %s, %p : tensor<?x64xf32>, tensor<?x64xf32>
  }
  return %0#0, %0#1 : tensor<?x64xf32>, tensor<?x64xf32>
}
