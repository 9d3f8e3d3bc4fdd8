

// Tests that graph.where round-trips with a broadcast scalar branch.
// CHECK-LABEL: func.func @where
// CHECK-SAME: (%[[C:.+]]: tensor<?x?xi1>, %[[X:.+]]: tensor<f32>, %[[Y:.+]]: tensor<?x?xf32>)
// CHECK: graph.where %[[C]], %[[X]], %[[Y]] : (tensor<?x?xi1>, tensor<f32>, tensor<?x?xf32>) -> tensor<?x?xf32>
func.func @where(%c: tensor<?x?xi1>, %x: tensor<f32>, %y: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = graph.where %c, %x, %y : (tensor<?x?xi1>, tensor<f32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
