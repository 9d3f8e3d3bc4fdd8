

// Tests that graph.gelu keeps an explicit "tanh" and elides the default "none".
// CHECK-LABEL: func.func @gelu
// CHECK-SAME: (%[[X:.+]]: tensor<?x64xf32>)
// CHECK: graph.gelu %[[X]] : (tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK: graph.gelu %[[X]] {approximate = "tanh"} : (tensor<?x64xf32>) -> tensor<?x64xf32>
func.func @gelu(%x: tensor<?x64xf32>) -> (tensor<?x64xf32>, tensor<?x64xf32>) {
  %0 = graph.gelu %x {approximate = "none"} : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %1 = graph.gelu %x {approximate = "tanh"} : (tensor<?x64xf32>) -> tensor<?x64xf32>
  return %0, %1 : tensor<?x64xf32>, tensor<?x64xf32>
}
