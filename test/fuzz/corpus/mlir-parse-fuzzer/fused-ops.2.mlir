

// Tests that graph.rotary round-trips with and without positions, half-split and interleaved.
// CHECK-LABEL: func.func @rotary
// CHECK-SAME: (%[[QKV:.+]]: tensor<?x?x128xf32>, %[[FREQ:.+]]: tensor<8xf32>, %[[POS:.+]]: tensor<1x?xi64>)
// CHECK: graph.rotary %[[QKV]], %[[FREQ]] positions(%[[POS]]) {head_dim = 16 : i64, num_heads = 8 : i64, rotary_dim = 16 : i64, rotated_heads = 6 : i64} : (tensor<?x?x128xf32>, tensor<8xf32>, tensor<1x?xi64>) -> tensor<?x?x128xf32>
// CHECK: graph.rotary %[[QKV]], %[[FREQ]] {head_dim = 16 : i64, interleaved = true, num_heads = 8 : i64, rotary_dim = 16 : i64, rotated_heads = 8 : i64} : (tensor<?x?x128xf32>, tensor<8xf32>) -> tensor<?x?x128xf32>
func.func @rotary(%qkv: tensor<?x?x128xf32>, %freq: tensor<8xf32>, %pos: tensor<1x?xi64>)
    -> (tensor<?x?x128xf32>, tensor<?x?x128xf32>) {
  %0 = graph.rotary %qkv, %freq positions(%pos)
      {num_heads = 8 : i64, rotated_heads = 6 : i64, head_dim = 16 : i64, rotary_dim = 16 : i64}
      : (tensor<?x?x128xf32>, tensor<8xf32>, tensor<1x?xi64>) -> tensor<?x?x128xf32>
  %1 = graph.rotary %qkv, %freq
      {num_heads = 8 : i64, rotated_heads = 8 : i64, head_dim = 16 : i64, rotary_dim = 16 : i64, interleaved = true}
      : (tensor<?x?x128xf32>, tensor<8xf32>) -> tensor<?x?x128xf32>
  return %0, %1 : tensor<?x?x128xf32>, tensor<?x?x128xf32>
}
