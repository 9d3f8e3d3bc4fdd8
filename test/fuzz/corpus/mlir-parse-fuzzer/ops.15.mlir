

// Tests that graph.squeeze round-trips with and without axes, and graph.unsqueeze with axes.
// CHECK-LABEL: func.func @squeeze_unsqueeze
// CHECK-SAME: (%[[X:.+]]: tensor<1x?xf32>, %[[A:.+]]: tensor<1xi64>)
// CHECK: %[[SQ:.+]] = graph.squeeze %[[X]] axes(%[[A]]) : (tensor<1x?xf32>, tensor<1xi64>) -> tensor<?xf32>
// CHECK: graph.squeeze %[[X]] : (tensor<1x?xf32>) -> tensor<*xf32>
// CHECK: graph.unsqueeze %[[SQ]], %[[A]] : (tensor<?xf32>, tensor<1xi64>) -> tensor<1x?xf32>
func.func @squeeze_unsqueeze(%x: tensor<1x?xf32>, %a: tensor<1xi64>) -> (tensor<*xf32>, tensor<1x?xf32>) {
  %0 = graph.squeeze %x axes(%a) : (tensor<1x?xf32>, tensor<1xi64>) -> tensor<?xf32>
  %1 = graph.squeeze %x : (tensor<1x?xf32>) -> tensor<*xf32>
  %2 = graph.unsqueeze %0, %a : (tensor<?xf32>, tensor<1xi64>) -> tensor<1x?xf32>
  return %1, %2 : tensor<*xf32>, tensor<1x?xf32>
}
