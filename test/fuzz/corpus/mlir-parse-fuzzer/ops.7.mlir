

// Tests that every arithmetic binary op round-trips with broadcasting shapes.
// CHECK-LABEL: func.func @arithmetic
// CHECK-SAME: (%[[X:.+]]: tensor<?x64xf32>, %[[Y:.+]]: tensor<64xf32>)
// CHECK: graph.add %[[X]], %[[Y]] : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
// CHECK: graph.sub %[[X]], %[[Y]] : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
// CHECK: graph.mul %[[X]], %[[Y]] : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
// CHECK: graph.div %[[X]], %[[Y]] : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
// CHECK: graph.pow %[[X]], %[[Y]] : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
// CHECK: graph.max %[[X]], %[[Y]] : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
// CHECK: graph.min %[[X]], %[[Y]] : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
func.func @arithmetic(%x: tensor<?x64xf32>, %y: tensor<64xf32>)
    -> (tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>,
        tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>) {
  %0 = graph.add %x, %y : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  %1 = graph.sub %x, %y : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  %2 = graph.mul %x, %y : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  %3 = graph.div %x, %y : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  %4 = graph.pow %x, %y : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  %5 = graph.max %x, %y : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  %6 = graph.min %x, %y : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>,
      tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>
}
