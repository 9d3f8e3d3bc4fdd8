// RUN: infer-opt --split-input-file %s | infer-opt --split-input-file | FileCheck %s
// RUN: infer-opt --split-input-file --mlir-print-op-generic %s | infer-opt --split-input-file | FileCheck %s

// Tests that graph.rms_norm round-trips with its default and a Gemma-style weight offset.
// CHECK-LABEL: func.func @rms_norm
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x64xf32>, %[[W:.+]]: tensor<64xf32>)
// CHECK: graph.rms_norm %[[X]], %[[W]] {epsilon = 9.99999997E-7 : f32} : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
// CHECK: graph.rms_norm %[[X]], %[[W]] {epsilon = 9.99999997E-7 : f32, weight_offset = 1.000000e+00 : f32}
func.func @rms_norm(%x: tensor<?x?x64xf32>, %w: tensor<64xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x64xf32>) {
  %0 = graph.rms_norm %x, %w {epsilon = 1.0e-06 : f32} : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  %1 = graph.rms_norm %x, %w {epsilon = 1.0e-06 : f32, weight_offset = 1.0 : f32}
      : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  return %0, %1 : tensor<?x?x64xf32>, tensor<?x?x64xf32>
}

// -----

// Tests that graph.linear round-trips without, with either and with both optional operands.
// CHECK-LABEL: func.func @linear
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x64xf32>, %[[W:.+]]: tensor<64x192xf32>, %[[WT:.+]]: tensor<192x64xf32>, %[[B:.+]]: tensor<192xf32>, %[[R:.+]]: tensor<?x?x192xf32>)
// CHECK: graph.linear %[[X]], %[[W]] : (tensor<?x?x64xf32>, tensor<64x192xf32>) -> tensor<?x?x192xf32>
// CHECK: graph.linear %[[X]], %[[W]] bias(%[[B]]) : (tensor<?x?x64xf32>, tensor<64x192xf32>, tensor<192xf32>) -> tensor<?x?x192xf32>
// CHECK: graph.linear %[[X]], %[[WT]] residual(%[[R]]) {transpose_weight = true} : (tensor<?x?x64xf32>, tensor<192x64xf32>, tensor<?x?x192xf32>) -> tensor<?x?x192xf32>
// CHECK: graph.linear %[[X]], %[[WT]] bias(%[[B]]) residual(%[[R]]) {transpose_weight = true} : (tensor<?x?x64xf32>, tensor<192x64xf32>, tensor<192xf32>, tensor<?x?x192xf32>) -> tensor<?x?x192xf32>
func.func @linear(%x: tensor<?x?x64xf32>, %w: tensor<64x192xf32>, %wt: tensor<192x64xf32>, %b: tensor<192xf32>,
                  %r: tensor<?x?x192xf32>)
    -> (tensor<?x?x192xf32>, tensor<?x?x192xf32>, tensor<?x?x192xf32>, tensor<?x?x192xf32>) {
  %0 = graph.linear %x, %w : (tensor<?x?x64xf32>, tensor<64x192xf32>) -> tensor<?x?x192xf32>
  %1 = graph.linear %x, %w bias(%b) : (tensor<?x?x64xf32>, tensor<64x192xf32>, tensor<192xf32>) -> tensor<?x?x192xf32>
  %2 = graph.linear %x, %wt residual(%r) {transpose_weight = true}
      : (tensor<?x?x64xf32>, tensor<192x64xf32>, tensor<?x?x192xf32>) -> tensor<?x?x192xf32>
  %3 = graph.linear %x, %wt bias(%b) residual(%r) {transpose_weight = true}
      : (tensor<?x?x64xf32>, tensor<192x64xf32>, tensor<192xf32>, tensor<?x?x192xf32>) -> tensor<?x?x192xf32>
  return %0, %1, %2, %3 : tensor<?x?x192xf32>, tensor<?x?x192xf32>, tensor<?x?x192xf32>, tensor<?x?x192xf32>
}

// -----

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

// -----

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

// -----

// Tests that graph.attention round-trips with a packed operand and with q, k, v, with a softcap.
// CHECK-LABEL: func.func @attention
// CHECK-SAME: (%[[QKV:.+]]: tensor<?x?x128xf32>, %[[Q:.+]]: tensor<?x?x64xf32>, %[[K:.+]]: tensor<?x?x32xf32>, %[[V:.+]]: tensor<?x?x32xf32>)
// CHECK: graph.attention %[[QKV]] {causal = true, head_dim = 16 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 2.500000e-01 : f32} : (tensor<?x?x128xf32>) -> tensor<?x?x64xf32>
// CHECK: graph.attention %[[Q]], %[[K]], %[[V]] {causal = false, head_dim = 16 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 2.500000e-01 : f32, softcap = 5.000000e+01 : f32} : (tensor<?x?x64xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf32>) -> tensor<?x?x64xf32>
func.func @attention(%qkv: tensor<?x?x128xf32>, %q: tensor<?x?x64xf32>, %k: tensor<?x?x32xf32>, %v: tensor<?x?x32xf32>)
    -> (tensor<?x?x64xf32>, tensor<?x?x64xf32>) {
  %0 = graph.attention %qkv {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64,
                             scale = 2.500000e-01 : f32, causal = true}
      : (tensor<?x?x128xf32>) -> tensor<?x?x64xf32>
  %1 = graph.attention %q, %k, %v {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64,
                                   scale = 2.500000e-01 : f32, causal = false, softcap = 50.0 : f32}
      : (tensor<?x?x64xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf32>) -> tensor<?x?x64xf32>
  return %0, %1 : tensor<?x?x64xf32>, tensor<?x?x64xf32>
}

// -----

// Tests that graph.gated_activation round-trips packed and split, with each activation.
// CHECK-LABEL: func.func @gated_activation
// CHECK-SAME: (%[[GU:.+]]: tensor<?x?x320xf32>, %[[G:.+]]: tensor<?x?x160xf32>, %[[U:.+]]: tensor<?x?x160xf32>)
// CHECK: graph.gated_activation %[[GU]] {activation = "silu"} : (tensor<?x?x320xf32>) -> tensor<?x?x160xf32>
// CHECK: graph.gated_activation %[[G]], %[[U]] {activation = "gelu"} : (tensor<?x?x160xf32>, tensor<?x?x160xf32>) -> tensor<?x?x160xf32>
// CHECK: graph.gated_activation %[[GU]] {activation = "gelu_tanh"} : (tensor<?x?x320xf32>) -> tensor<?x?x160xf32>
func.func @gated_activation(%gu: tensor<?x?x320xf32>, %g: tensor<?x?x160xf32>, %u: tensor<?x?x160xf32>)
    -> (tensor<?x?x160xf32>, tensor<?x?x160xf32>, tensor<?x?x160xf32>) {
  %0 = graph.gated_activation %gu {activation = "silu"} : (tensor<?x?x320xf32>) -> tensor<?x?x160xf32>
  %1 = graph.gated_activation %g, %u {activation = "gelu"}
      : (tensor<?x?x160xf32>, tensor<?x?x160xf32>) -> tensor<?x?x160xf32>
  %2 = graph.gated_activation %gu {activation = "gelu_tanh"} : (tensor<?x?x320xf32>) -> tensor<?x?x160xf32>
  return %0, %1, %2 : tensor<?x?x160xf32>, tensor<?x?x160xf32>, tensor<?x?x160xf32>
}

// -----

// Tests that graph.embedding round-trips with i64 and i32 ids and with an offset position table.
// CHECK-LABEL: func.func @embedding
// CHECK-SAME: (%[[TABLE:.+]]: tensor<512x64xf32>, %[[IDS:.+]]: tensor<?x?xi64>, %[[IDS32:.+]]: tensor<?xi32>, %[[WPE:.+]]: tensor<258x64xf32>)
// CHECK: graph.embedding %[[TABLE]], %[[IDS]] : (tensor<512x64xf32>, tensor<?x?xi64>) -> tensor<?x?x64xf32>
// CHECK: graph.embedding %[[TABLE]], %[[IDS32]] : (tensor<512x64xf32>, tensor<?xi32>) -> tensor<?x64xf32>
// CHECK: graph.embedding %[[TABLE]], %[[IDS]] positions(%[[WPE]]) {position_offset = 2 : i64} : (tensor<512x64xf32>, tensor<?x?xi64>, tensor<258x64xf32>) -> tensor<?x?x64xf32>
func.func @embedding(%table: tensor<512x64xf32>, %ids: tensor<?x?xi64>, %ids32: tensor<?xi32>, %wpe: tensor<258x64xf32>)
    -> (tensor<?x?x64xf32>, tensor<?x64xf32>, tensor<?x?x64xf32>) {
  %0 = graph.embedding %table, %ids : (tensor<512x64xf32>, tensor<?x?xi64>) -> tensor<?x?x64xf32>
  %1 = graph.embedding %table, %ids32 : (tensor<512x64xf32>, tensor<?xi32>) -> tensor<?x64xf32>
  %2 = graph.embedding %table, %ids positions(%wpe) {position_offset = 2 : i64}
      : (tensor<512x64xf32>, tensor<?x?xi64>, tensor<258x64xf32>) -> tensor<?x?x64xf32>
  return %0, %1, %2 : tensor<?x?x64xf32>, tensor<?x64xf32>, tensor<?x?x64xf32>
}

// -----

// Tests that graph.fusion_group round-trips its region, block arguments and two yielded results.
// CHECK-LABEL: func.func @fusion_group
// CHECK-SAME: (%[[A:.+]]: tensor<?x64xf32>, %[[B:.+]]: tensor<?x64xf32>)
// CHECK: %[[R:.+]]:2 = graph.fusion_group %[[A]], %[[B]] : (tensor<?x64xf32>, tensor<?x64xf32>) -> (tensor<?x64xf32>, tensor<?x64xf32>) {
// CHECK: ^bb0(%[[X:.+]]: tensor<?x64xf32>, %[[Y:.+]]: tensor<?x64xf32>):
// CHECK: %[[SUM:.+]] = graph.add %[[X]], %[[Y]]
// CHECK: %[[PROD:.+]] = graph.mul %[[SUM]], %[[Y]]
// CHECK: graph.yield %[[SUM]], %[[PROD]] : tensor<?x64xf32>, tensor<?x64xf32>
// CHECK: return %[[R]]#0, %[[R]]#1
func.func @fusion_group(%a: tensor<?x64xf32>, %b: tensor<?x64xf32>) -> (tensor<?x64xf32>, tensor<?x64xf32>) {
  %0:2 = graph.fusion_group %a, %b : (tensor<?x64xf32>, tensor<?x64xf32>) -> (tensor<?x64xf32>, tensor<?x64xf32>) {
  ^bb0(%x: tensor<?x64xf32>, %y: tensor<?x64xf32>):
    %s = graph.add %x, %y : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
    %p = graph.mul %s, %y : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
    graph.yield %s, %p : tensor<?x64xf32>, tensor<?x64xf32>
  }
  return %0#0, %0#1 : tensor<?x64xf32>, tensor<?x64xf32>
}

// -----

// Tests that graph.pack_weights round-trips its weights and axis.
// CHECK-LABEL: func.func @pack_weights
// CHECK-SAME: (%[[WQ:.+]]: tensor<64x64xf32>, %[[WK:.+]]: tensor<64x32xf32>, %[[WV:.+]]: tensor<64x32xf32>)
// CHECK: graph.pack_weights %[[WQ]], %[[WK]], %[[WV]] {axis = 1 : i64} : (tensor<64x64xf32>, tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<64x128xf32>
func.func @pack_weights(%wq: tensor<64x64xf32>, %wk: tensor<64x32xf32>, %wv: tensor<64x32xf32>) -> tensor<64x128xf32> {
  %0 = graph.pack_weights %wq, %wk, %wv {axis = 1 : i64}
      : (tensor<64x64xf32>, tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<64x128xf32>
  return %0 : tensor<64x128xf32>
}

// -----

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
