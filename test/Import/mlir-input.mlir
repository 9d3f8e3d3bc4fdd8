// RUN: infer-compile %s --emit=graph | FileCheck %s

// Tests that an .mlir file in the graph dialect is parsed, verified and printed back unchanged.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.+]]: tensor<?x4xf32> {graph.dims = ["N", ""], graph.name = "X"})
// CHECK-SAME: -> (tensor<?x4xf32> {graph.dims = ["N", ""], graph.name = "Y"})
// CHECK: %[[C:.+]] = graph.constant dense<2.000000e+00> : tensor<4xf32>
// CHECK: %[[M:.+]] = graph.mul %[[X]], %[[C]] : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
// CHECK: %[[R:.+]] = graph.relu %[[M]] : (tensor<?x4xf32>) -> tensor<?x4xf32>
// CHECK: return %[[R]] : tensor<?x4xf32>
func.func @main(%x: tensor<?x4xf32> {graph.dims = ["N", ""], graph.name = "X"})
    -> (tensor<?x4xf32> {graph.dims = ["N", ""], graph.name = "Y"}) {
  %c = graph.constant dense<2.0> : tensor<4xf32>
  %m = graph.mul %x, %c : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %r = graph.relu %m : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}
