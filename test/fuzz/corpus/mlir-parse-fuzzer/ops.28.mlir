

// Tests that graph.gemm round-trips with and without C and with non-default attributes.
// CHECK-LABEL: func.func @gemm
// CHECK-SAME: (%[[A:.+]]: tensor<?x64xf32>, %[[B:.+]]: tensor<192x64xf32>, %[[C:.+]]: tensor<192xf32>)
// CHECK: graph.gemm %[[A]], %[[B]], %[[C]] {transB = true} : (tensor<?x64xf32>, tensor<192x64xf32>, tensor<192xf32>) -> tensor<?x192xf32>
// CHECK: graph.gemm %[[A]], %[[B]] {alpha = 5.000000e-01 : f32, beta = 0.000000e+00 : f32, transB = true} : (tensor<?x64xf32>, tensor<192x64xf32>) -> tensor<?x192xf32>
func.func @gemm(%a: tensor<?x64xf32>, %b: tensor<192x64xf32>, %c: tensor<192xf32>) -> (tensor<?x192xf32>, tensor<?x192xf32>) {
  %0 = graph.gemm %a, %b, %c {transB = true} : (tensor<?x64xf32>, tensor<192x64xf32>, tensor<192xf32>) -> tensor<?x192xf32>
  %1 = graph.gemm %a, %b {alpha = 0.5 : f32, beta = 0.0 : f32, transA = false, transB = true}
      : (tensor<?x64xf32>, tensor<192x64xf32>) -> tensor<?x192xf32>
  return %0, %1 : tensor<?x192xf32>, tensor<?x192xf32>
}
