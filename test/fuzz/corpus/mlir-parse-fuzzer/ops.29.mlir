

// Tests that graph.einsum round-trips with two inputs and with one.
// CHECK-LABEL: func.func @einsum
// CHECK-SAME: (%[[A:.+]]: tensor<?x?x?xf32>, %[[B:.+]]: tensor<?x?x?xf32>)
// CHECK: graph.einsum %[[A]], %[[B]] {equation = "bij,bjk->bik"} : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
// CHECK: graph.einsum %[[A]] {equation = "bij->bji"} : (tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
func.func @einsum(%a: tensor<?x?x?xf32>, %b: tensor<?x?x?xf32>) -> (tensor<?x?x?xf32>, tensor<?x?x?xf32>) {
  %0 = graph.einsum %a, %b {equation = "bij,bjk->bik"} : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %1 = graph.einsum %a {equation = "bij->bji"} : (tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  return %0, %1 : tensor<?x?x?xf32>, tensor<?x?x?xf32>
}