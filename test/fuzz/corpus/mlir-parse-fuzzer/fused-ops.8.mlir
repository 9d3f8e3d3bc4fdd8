

// Tests that graph.pack_weights round-trips its weights and axis.
// CHECK-LABEL: func.func @pack_weights
// CHECK-SAME: (%[[WQ:.+]]: tensor<64x64xf32>, %[[WK:.+]]: tensor<64x32xf32>, %[[WV:.+]]: tensor<64x32xf32>)
// CHECK: graph.pack_weights %[[WQ]], %[[WK]], %[[WV]] {axis = 1 : i64} : (tensor<64x64xf32>, tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<64x128xf32>
func.func @pack_weights(%wq: tensor<64x64xf32>, %wk: tensor<64x32xf32>, %wv: tensor<64x32xf32>) -> tensor<64x128xf32> {
  %0 = graph.pack_weights %wq, %wk, %wv {axis = 1 : i64}
      : (tensor<64x64xf32>, tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<64x128xf32>
  return %0 : tensor<64x128xf32>
}
