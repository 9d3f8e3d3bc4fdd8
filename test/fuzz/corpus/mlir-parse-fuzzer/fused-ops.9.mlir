

// Tests that graph.pack_weights round-trips `transpose`: the result is the
// concatenation [64, 128] transposed, and a lone weight may be transposed.
// CHECK-LABEL: func.func @pack_weights_transpose
// CHECK-SAME: (%[[WQ:.+]]: tensor<64x64xf32>, %[[WK:.+]]: tensor<64x32xf32>, %[[WV:.+]]: tensor<64x32xf32>, %[[WO:.+]]: tensor<160x64xf32>)
// CHECK: graph.pack_weights %[[WQ]], %[[WK]], %[[WV]] {axis = 1 : i64, transpose} : (tensor<64x64xf32>, tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<128x64xf32>
// CHECK: graph.pack_weights %[[WO]] {axis = 0 : i64, transpose} : (tensor<160x64xf32>) -> tensor<64x160xf32>
func.func @pack_weights_transpose(%wq: tensor<64x64xf32>, %wk: tensor<64x32xf32>, %wv: tensor<64x32xf32>, %wo: tensor<160x64xf32>) -> (tensor<128x64xf32>, tensor<64x160xf32>) {
  %0 = graph.pack_weights %wq, %wk, %wv {axis = 1 : i64, transpose}
      : (tensor<64x64xf32>, tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<128x64xf32>
  %1 = graph.pack_weights %wo {axis = 0 : i64, transpose} : (tensor<160x64xf32>) -> tensor<64x160xf32>
  return %0, %1 : tensor<128x64xf32>, tensor<64x160xf32>
}