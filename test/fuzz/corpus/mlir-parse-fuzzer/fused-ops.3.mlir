

// Tests that graph.rotary round-trips with cos/sin caches: [max_position, rotary_dim / 2] read at positions, and per-token [batch, seq, rotary_dim / 2].
// CHECK-LABEL: func.func @rotary_caches
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x64xf32>, %[[COS:.+]]: tensor<128x8xf32>, %[[SIN:.+]]: tensor<128x8xf32>, %[[POS:.+]]: tensor<?x?xi64>, %[[TCOS:.+]]: tensor<?x?x4xf32>, %[[TSIN:.+]]: tensor<?x?x4xf32>)
// CHECK: graph.rotary %[[X]] caches(%[[COS]], %[[SIN]]) positions(%[[POS]]) {head_dim = 16 : i64, num_heads = 4 : i64, rotary_dim = 16 : i64, rotated_heads = 4 : i64} : (tensor<?x?x64xf32>, tensor<128x8xf32>, tensor<128x8xf32>, tensor<?x?xi64>) -> tensor<?x?x64xf32>
// CHECK: graph.rotary %[[X]] caches(%[[TCOS]], %[[TSIN]]) {head_dim = 16 : i64, interleaved = true, num_heads = 4 : i64, rotary_dim = 8 : i64, rotated_heads = 4 : i64} : (tensor<?x?x64xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>) -> tensor<?x?x64xf32>
func.func @rotary_caches(%x: tensor<?x?x64xf32>, %cos: tensor<128x8xf32>, %sin: tensor<128x8xf32>,
                         %pos: tensor<?x?xi64>, %tcos: tensor<?x?x4xf32>, %tsin: tensor<?x?x4xf32>)
    -> (tensor<?x?x64xf32>, tensor<?x?x64xf32>) {
  %0 = graph.rotary %x caches(%cos, %sin) positions(%pos)
      {num_heads = 4 : i64, rotated_heads = 4 : i64, head_dim = 16 : i64, rotary_dim = 16 : i64}
      : (tensor<?x?x64xf32>, tensor<128x8xf32>, tensor<128x8xf32>, tensor<?x?xi64>) -> tensor<?x?x64xf32>
  %1 = graph.rotary %x caches(%tcos, %tsin)
      {num_heads = 4 : i64, rotated_heads = 4 : i64, head_dim = 16 : i64, rotary_dim = 8 : i64, interleaved = true}
      : (tensor<?x?x64xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>) -> tensor<?x?x64xf32>
  return %0, %1 : tensor<?x?x64xf32>, tensor<?x?x64xf32>
}
