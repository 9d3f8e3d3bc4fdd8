

// Tests that graph.slice round-trips with i64 and i32 index operands.
// CHECK-LABEL: func.func @slice
// CHECK-SAME: (%[[X:.+]]: tensor<?x?xf32>, %[[I:.+]]: tensor<1xi64>, %[[J:.+]]: tensor<1xi32>)
// CHECK: graph.slice %[[X]], %[[I]], %[[I]], %[[I]], %[[I]] : (tensor<?x?xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?xf32>
// CHECK: graph.slice %[[X]], %[[J]], %[[J]], %[[J]], %[[J]] : (tensor<?x?xf32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<?x?xf32>
func.func @slice(%x: tensor<?x?xf32>, %i: tensor<1xi64>, %j: tensor<1xi32>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %0 = graph.slice %x, %i, %i, %i, %i
      : (tensor<?x?xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?xf32>
  %1 = graph.slice %x, %j, %j, %j, %j
      : (tensor<?x?xf32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<?x?xf32>
  return %0, %1 : tensor<?x?xf32>, tensor<?x?xf32>
}
