

// Tests that every same-type unary op round-trips, on ranked and unranked tensors.
// CHECK-LABEL: func.func @unary
// CHECK-SAME: (%[[X:.+]]: tensor<?x64xf32>, %[[U:.+]]: tensor<*xf32>)
// CHECK: %[[NEG:.+]] = graph.neg %[[X]] : (tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK: %[[ABS:.+]] = graph.abs %[[NEG]] : (tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK: %[[SQRT:.+]] = graph.sqrt %[[ABS]] : (tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK: %[[RECIP:.+]] = graph.reciprocal %[[SQRT]] : (tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK: %[[EXP:.+]] = graph.exp %[[RECIP]] : (tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK: %[[LOG:.+]] = graph.log %[[EXP]] : (tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK: %[[SIN:.+]] = graph.sin %[[LOG]] : (tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK: %[[COS:.+]] = graph.cos %[[SIN]] : (tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK: %[[TANH:.+]] = graph.tanh %[[COS]] : (tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK: %[[ERF:.+]] = graph.erf %[[TANH]] : (tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK: %[[SIG:.+]] = graph.sigmoid %[[ERF]] : (tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK: %[[RELU:.+]] = graph.relu %[[SIG]] : (tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK: %[[ID:.+]] = graph.identity %[[RELU]] : (tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK: graph.neg %[[U]] : (tensor<*xf32>) -> tensor<*xf32>
func.func @unary(%x: tensor<?x64xf32>, %u: tensor<*xf32>) -> (tensor<?x64xf32>, tensor<*xf32>) {
  %0 = graph.neg %x : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %1 = graph.abs %0 : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %2 = graph.sqrt %1 : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %3 = graph.reciprocal %2 : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %4 = graph.exp %3 : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %5 = graph.log %4 : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %6 = graph.sin %5 : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %7 = graph.cos %6 : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %8 = graph.tanh %7 : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %9 = graph.erf %8 : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %10 = graph.sigmoid %9 : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %11 = graph.relu %10 : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %12 = graph.identity %11 : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %13 = graph.neg %u : (tensor<*xf32>) -> tensor<*xf32>
  return %12, %13 : tensor<?x64xf32>, tensor<*xf32>
}
