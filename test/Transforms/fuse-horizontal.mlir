// RUN: infer-opt --split-input-file --infer-fuse-horizontal %s | FileCheck %s

// Tests tiny-llama's attention block: Q, K, V linears of one input with rotary
// on Q and K become one linear over the packed [64, 128] weight, one rotary of
// the 4 + 2 Q and K heads (V's 2 heads pass through) and an attention that
// reads the packed QKV.
// CHECK-LABEL: func.func @qkv_rotary
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x64xf32>)
// CHECK-DAG: %[[WQ:.+]] = graph.weight <q_proj> : tensor<64x64xf32>
// CHECK-DAG: %[[WK:.+]] = graph.weight <k_proj> : tensor<64x32xf32>
// CHECK-DAG: %[[WV:.+]] = graph.weight <v_proj> : tensor<64x32xf32>
// CHECK: %[[W:.+]] = graph.pack_weights %[[WQ]], %[[WK]], %[[WV]] {axis = 1 : i64} : (tensor<64x64xf32>, tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<64x128xf32>
// CHECK: %[[F:.+]] = graph.constant dense<{{.+}}> : tensor<8xf32>
// CHECK: %[[QKV:.+]] = graph.linear %[[X]], %[[W]] : (tensor<?x?x64xf32>, tensor<64x128xf32>) -> tensor<?x?x128xf32>
// CHECK: %[[R:.+]] = graph.rotary %[[QKV]], %[[F]] {head_dim = 16 : i64, num_heads = 8 : i64, rotary_dim = 16 : i64, rotated_heads = 6 : i64} : (tensor<?x?x128xf32>, tensor<8xf32>) -> tensor<?x?x128xf32>
// CHECK: %[[O:.+]] = graph.attention %[[R]] {causal = true, head_dim = 16 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 2.500000e-01 : f32} : (tensor<?x?x128xf32>) -> tensor<?x?x64xf32>
// CHECK-NEXT: return %[[O]]
func.func @qkv_rotary(%x: tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
  %wq = graph.weight <q_proj> : tensor<64x64xf32>
  %wk = graph.weight <k_proj> : tensor<64x32xf32>
  %wv = graph.weight <v_proj> : tensor<64x32xf32>
  %f = graph.constant dense<[1.0, 0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125]> : tensor<8xf32>
  %q = graph.linear %x, %wq : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
  %k = graph.linear %x, %wk : (tensor<?x?x64xf32>, tensor<64x32xf32>) -> tensor<?x?x32xf32>
  %v = graph.linear %x, %wv : (tensor<?x?x64xf32>, tensor<64x32xf32>) -> tensor<?x?x32xf32>
  %qr = graph.rotary %q, %f {head_dim = 16 : i64, num_heads = 4 : i64, rotary_dim = 16 : i64, rotated_heads = 4 : i64} : (tensor<?x?x64xf32>, tensor<8xf32>) -> tensor<?x?x64xf32>
  %kr = graph.rotary %k, %f {head_dim = 16 : i64, num_heads = 2 : i64, rotary_dim = 16 : i64, rotated_heads = 2 : i64} : (tensor<?x?x32xf32>, tensor<8xf32>) -> tensor<?x?x32xf32>
  %o = graph.attention %qr, %kr, %v {causal = true, head_dim = 16 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 2.500000e-01 : f32} : (tensor<?x?x64xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf32>) -> tensor<?x?x64xf32>
  return %o : tensor<?x?x64xf32>
}

// -----

// Tests Q, K, V without rotary (GPT-style learned positions): one packed
// linear feeding the attention directly.
// CHECK-LABEL: func.func @qkv_no_rotary
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x64xf32>)
// CHECK: %[[W:.+]] = graph.pack_weights %{{.+}}, %{{.+}}, %{{.+}} {axis = 1 : i64} : (tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x192xf32>
// CHECK: %[[QKV:.+]] = graph.linear %[[X]], %[[W]] : (tensor<?x?x64xf32>, tensor<64x192xf32>) -> tensor<?x?x192xf32>
// CHECK-NOT: graph.rotary
// CHECK: %[[O:.+]] = graph.attention %[[QKV]] {causal = true, head_dim = 16 : i64, num_heads = 4 : i64, num_kv_heads = 4 : i64, scale = 2.500000e-01 : f32} : (tensor<?x?x192xf32>) -> tensor<?x?x64xf32>
// CHECK-NEXT: return %[[O]]
func.func @qkv_no_rotary(%x: tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
  %wq = graph.weight <q_proj> : tensor<64x64xf32>
  %wk = graph.weight <k_proj> : tensor<64x64xf32>
  %wv = graph.weight <v_proj> : tensor<64x64xf32>
  %q = graph.linear %x, %wq : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
  %k = graph.linear %x, %wk : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
  %v = graph.linear %x, %wv : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
  %o = graph.attention %q, %k, %v {causal = true, head_dim = 16 : i64, num_heads = 4 : i64, num_kv_heads = 4 : i64, scale = 2.500000e-01 : f32} : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  return %o : tensor<?x?x64xf32>
}

// -----

// Tests Qwen2's biased Q, K, V: the biases are packed too (axis 0), and the
// weights in the transpose_weight layout are packed along axis 0.
// CHECK-LABEL: func.func @qkv_bias_transposed
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x64xf32>)
// CHECK-DAG: %[[BQ:.+]] = graph.weight <q_proj.bias> : tensor<64xf32>
// CHECK-DAG: %[[BK:.+]] = graph.weight <k_proj.bias> : tensor<32xf32>
// CHECK-DAG: %[[BV:.+]] = graph.weight <v_proj.bias> : tensor<32xf32>
// CHECK-DAG: %[[W:.+]] = graph.pack_weights %{{.+}}, %{{.+}}, %{{.+}} {axis = 0 : i64} : (tensor<64x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>) -> tensor<128x64xf32>
// CHECK-DAG: %[[B:.+]] = graph.pack_weights %[[BQ]], %[[BK]], %[[BV]] {axis = 0 : i64} : (tensor<64xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<128xf32>
// CHECK: %[[QKV:.+]] = graph.linear %[[X]], %[[W]] bias(%[[B]]) {transpose_weight = true} : (tensor<?x?x64xf32>, tensor<128x64xf32>, tensor<128xf32>) -> tensor<?x?x128xf32>
// CHECK: %[[R:.+]] = graph.rotary %[[QKV]], %{{.+}} {head_dim = 16 : i64, num_heads = 8 : i64, rotary_dim = 16 : i64, rotated_heads = 6 : i64}
// CHECK: graph.attention %[[R]] {
func.func @qkv_bias_transposed(%x: tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
  %wq = graph.weight <q_proj.weight> : tensor<64x64xf32>
  %wk = graph.weight <k_proj.weight> : tensor<32x64xf32>
  %wv = graph.weight <v_proj.weight> : tensor<32x64xf32>
  %bq = graph.weight <q_proj.bias> : tensor<64xf32>
  %bk = graph.weight <k_proj.bias> : tensor<32xf32>
  %bv = graph.weight <v_proj.bias> : tensor<32xf32>
  %f = graph.constant dense<[1.0, 0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125]> : tensor<8xf32>
  %q = graph.linear %x, %wq bias(%bq) {transpose_weight = true} : (tensor<?x?x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  %k = graph.linear %x, %wk bias(%bk) {transpose_weight = true} : (tensor<?x?x64xf32>, tensor<32x64xf32>, tensor<32xf32>) -> tensor<?x?x32xf32>
  %v = graph.linear %x, %wv bias(%bv) {transpose_weight = true} : (tensor<?x?x64xf32>, tensor<32x64xf32>, tensor<32xf32>) -> tensor<?x?x32xf32>
  %qr = graph.rotary %q, %f {head_dim = 16 : i64, num_heads = 4 : i64, rotary_dim = 16 : i64, rotated_heads = 4 : i64} : (tensor<?x?x64xf32>, tensor<8xf32>) -> tensor<?x?x64xf32>
  %kr = graph.rotary %k, %f {head_dim = 16 : i64, num_heads = 2 : i64, rotary_dim = 16 : i64, rotated_heads = 2 : i64} : (tensor<?x?x32xf32>, tensor<8xf32>) -> tensor<?x?x32xf32>
  %o = graph.attention %qr, %kr, %v {causal = true, head_dim = 16 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 2.500000e-01 : f32} : (tensor<?x?x64xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf32>) -> tensor<?x?x64xf32>
  return %o : tensor<?x?x64xf32>
}

// -----

// Tests SwiGLU's gate and up projections of one input: one linear over the
// packed [64, 320] weight, read by a one-operand gated activation.
// CHECK-LABEL: func.func @gate_up
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x64xf32>)
// CHECK-DAG: %[[WG:.+]] = graph.weight <gate_proj> : tensor<64x160xf32>
// CHECK-DAG: %[[WU:.+]] = graph.weight <up_proj> : tensor<64x160xf32>
// CHECK: %[[W:.+]] = graph.pack_weights %[[WG]], %[[WU]] {axis = 1 : i64} : (tensor<64x160xf32>, tensor<64x160xf32>) -> tensor<64x320xf32>
// CHECK: %[[GU:.+]] = graph.linear %[[X]], %[[W]] : (tensor<?x?x64xf32>, tensor<64x320xf32>) -> tensor<?x?x320xf32>
// CHECK: %[[H:.+]] = graph.gated_activation %[[GU]] {activation = "silu"} : (tensor<?x?x320xf32>) -> tensor<?x?x160xf32>
// CHECK-NEXT: return %[[H]]
func.func @gate_up(%x: tensor<?x?x64xf32>) -> tensor<?x?x160xf32> {
  %wg = graph.weight <gate_proj> : tensor<64x160xf32>
  %wu = graph.weight <up_proj> : tensor<64x160xf32>
  %g = graph.linear %x, %wg : (tensor<?x?x64xf32>, tensor<64x160xf32>) -> tensor<?x?x160xf32>
  %u = graph.linear %x, %wu : (tensor<?x?x64xf32>, tensor<64x160xf32>) -> tensor<?x?x160xf32>
  %h = graph.gated_activation %g, %u {activation = "silu"} : (tensor<?x?x160xf32>, tensor<?x?x160xf32>) -> tensor<?x?x160xf32>
  return %h : tensor<?x?x160xf32>
}

// -----

// Tests that linears of different inputs (cross-attention-like K and V from
// another tensor) are not packed.
// CHECK-LABEL: func.func @qkv_different_inputs
// CHECK-NOT: graph.pack_weights
// CHECK: graph.linear
// CHECK: graph.linear
// CHECK: graph.linear
// CHECK: graph.attention %{{.+}}, %{{.+}}, %{{.+}} {
func.func @qkv_different_inputs(%x: tensor<?x?x64xf32>, %y: tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
  %wq = graph.weight <q_proj> : tensor<64x64xf32>
  %wk = graph.weight <k_proj> : tensor<64x32xf32>
  %wv = graph.weight <v_proj> : tensor<64x32xf32>
  %q = graph.linear %x, %wq : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
  %k = graph.linear %y, %wk : (tensor<?x?x64xf32>, tensor<64x32xf32>) -> tensor<?x?x32xf32>
  %v = graph.linear %y, %wv : (tensor<?x?x64xf32>, tensor<64x32xf32>) -> tensor<?x?x32xf32>
  %o = graph.attention %q, %k, %v {causal = false, head_dim = 16 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 2.500000e-01 : f32} : (tensor<?x?x64xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf32>) -> tensor<?x?x64xf32>
  return %o : tensor<?x?x64xf32>
}

// -----

// Tests that a projection with a second use (V also returned) is not packed:
// its own result would have to be split back out.
// CHECK-LABEL: func.func @qkv_two_uses
// CHECK-NOT: graph.pack_weights
// CHECK: %[[Q:.+]] = graph.linear
// CHECK: %[[K:.+]] = graph.linear
// CHECK: %[[V:.+]] = graph.linear
// CHECK: %[[O:.+]] = graph.attention %[[Q]], %[[K]], %[[V]] {
// CHECK: return %[[O]], %[[V]]
func.func @qkv_two_uses(%x: tensor<?x?x64xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x32xf32>) {
  %wq = graph.weight <q_proj> : tensor<64x64xf32>
  %wk = graph.weight <k_proj> : tensor<64x32xf32>
  %wv = graph.weight <v_proj> : tensor<64x32xf32>
  %q = graph.linear %x, %wq : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
  %k = graph.linear %x, %wk : (tensor<?x?x64xf32>, tensor<64x32xf32>) -> tensor<?x?x32xf32>
  %v = graph.linear %x, %wv : (tensor<?x?x64xf32>, tensor<64x32xf32>) -> tensor<?x?x32xf32>
  %o = graph.attention %q, %k, %v {causal = true, head_dim = 16 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 2.500000e-01 : f32} : (tensor<?x?x64xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf32>) -> tensor<?x?x64xf32>
  return %o, %v : tensor<?x?x64xf32>, tensor<?x?x32xf32>
}

// -----

// Tests that a bias on Q but not on K and V prevents packing.
// CHECK-LABEL: func.func @qkv_partial_bias
// CHECK-NOT: graph.pack_weights
// CHECK: graph.attention %{{.+}}, %{{.+}}, %{{.+}} {
func.func @qkv_partial_bias(%x: tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
  %wq = graph.weight <q_proj> : tensor<64x64xf32>
  %bq = graph.weight <q_proj.bias> : tensor<64xf32>
  %wk = graph.weight <k_proj> : tensor<64x32xf32>
  %wv = graph.weight <v_proj> : tensor<64x32xf32>
  %q = graph.linear %x, %wq bias(%bq) : (tensor<?x?x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  %k = graph.linear %x, %wk : (tensor<?x?x64xf32>, tensor<64x32xf32>) -> tensor<?x?x32xf32>
  %v = graph.linear %x, %wv : (tensor<?x?x64xf32>, tensor<64x32xf32>) -> tensor<?x?x32xf32>
  %o = graph.attention %q, %k, %v {causal = true, head_dim = 16 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 2.500000e-01 : f32} : (tensor<?x?x64xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf32>) -> tensor<?x?x64xf32>
  return %o : tensor<?x?x64xf32>
}

// -----

// Tests that a rotary on Q only (K not rotated) prevents packing: one packed
// rotary could not express it.
// CHECK-LABEL: func.func @qkv_rotary_q_only
// CHECK-NOT: graph.pack_weights
// CHECK: graph.rotary %{{.+}}, %{{.+}} {head_dim = 16 : i64, num_heads = 4 : i64, rotary_dim = 16 : i64, rotated_heads = 4 : i64}
// CHECK: graph.attention %{{.+}}, %{{.+}}, %{{.+}} {
func.func @qkv_rotary_q_only(%x: tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
  %wq = graph.weight <q_proj> : tensor<64x64xf32>
  %wk = graph.weight <k_proj> : tensor<64x32xf32>
  %wv = graph.weight <v_proj> : tensor<64x32xf32>
  %f = graph.constant dense<[1.0, 0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125]> : tensor<8xf32>
  %q = graph.linear %x, %wq : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
  %k = graph.linear %x, %wk : (tensor<?x?x64xf32>, tensor<64x32xf32>) -> tensor<?x?x32xf32>
  %v = graph.linear %x, %wv : (tensor<?x?x64xf32>, tensor<64x32xf32>) -> tensor<?x?x32xf32>
  %qr = graph.rotary %q, %f {head_dim = 16 : i64, num_heads = 4 : i64, rotary_dim = 16 : i64, rotated_heads = 4 : i64} : (tensor<?x?x64xf32>, tensor<8xf32>) -> tensor<?x?x64xf32>
  %o = graph.attention %qr, %k, %v {causal = true, head_dim = 16 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 2.500000e-01 : f32} : (tensor<?x?x64xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf32>) -> tensor<?x?x64xf32>
  return %o : tensor<?x?x64xf32>
}

// -----

// Tests that Q and K rotated with different frequencies are not packed.
// CHECK-LABEL: func.func @qkv_rotary_different_freqs
// CHECK-NOT: graph.pack_weights
// CHECK: graph.attention %{{.+}}, %{{.+}}, %{{.+}} {
func.func @qkv_rotary_different_freqs(%x: tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
  %wq = graph.weight <q_proj> : tensor<64x64xf32>
  %wk = graph.weight <k_proj> : tensor<64x32xf32>
  %wv = graph.weight <v_proj> : tensor<64x32xf32>
  %f = graph.constant dense<[1.0, 0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125]> : tensor<8xf32>
  %f2 = graph.constant dense<[1.0, 0.1, 0.01, 0.001, 0.0001, 0.00001, 0.000001, 0.0000001]> : tensor<8xf32>
  %q = graph.linear %x, %wq : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
  %k = graph.linear %x, %wk : (tensor<?x?x64xf32>, tensor<64x32xf32>) -> tensor<?x?x32xf32>
  %v = graph.linear %x, %wv : (tensor<?x?x64xf32>, tensor<64x32xf32>) -> tensor<?x?x32xf32>
  %qr = graph.rotary %q, %f {head_dim = 16 : i64, num_heads = 4 : i64, rotary_dim = 16 : i64, rotated_heads = 4 : i64} : (tensor<?x?x64xf32>, tensor<8xf32>) -> tensor<?x?x64xf32>
  %kr = graph.rotary %k, %f2 {head_dim = 16 : i64, num_heads = 2 : i64, rotary_dim = 16 : i64, rotated_heads = 2 : i64} : (tensor<?x?x32xf32>, tensor<8xf32>) -> tensor<?x?x32xf32>
  %o = graph.attention %qr, %kr, %v {causal = true, head_dim = 16 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 2.500000e-01 : f32} : (tensor<?x?x64xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf32>) -> tensor<?x?x64xf32>
  return %o : tensor<?x?x64xf32>
}

// -----

// Tests that gate and up of different inputs, or with the gate reused, are not
// packed.
// CHECK-LABEL: func.func @gate_up_not_packable
// CHECK-NOT: graph.pack_weights
// CHECK: graph.gated_activation %{{.+}}, %{{.+}} {activation = "silu"}
// CHECK: graph.gated_activation %{{.+}}, %{{.+}} {activation = "silu"}
func.func @gate_up_not_packable(%x: tensor<?x?x64xf32>, %y: tensor<?x?x64xf32>) -> (tensor<?x?x160xf32>, tensor<?x?x160xf32>, tensor<?x?x160xf32>) {
  %wg = graph.weight <gate_proj> : tensor<64x160xf32>
  %wu = graph.weight <up_proj> : tensor<64x160xf32>
  %g = graph.linear %x, %wg : (tensor<?x?x64xf32>, tensor<64x160xf32>) -> tensor<?x?x160xf32>
  %u = graph.linear %y, %wu : (tensor<?x?x64xf32>, tensor<64x160xf32>) -> tensor<?x?x160xf32>
  %h = graph.gated_activation %g, %u {activation = "silu"} : (tensor<?x?x160xf32>, tensor<?x?x160xf32>) -> tensor<?x?x160xf32>
  %g2 = graph.linear %x, %wg : (tensor<?x?x64xf32>, tensor<64x160xf32>) -> tensor<?x?x160xf32>
  %u2 = graph.linear %x, %wu : (tensor<?x?x64xf32>, tensor<64x160xf32>) -> tensor<?x?x160xf32>
  %h2 = graph.gated_activation %g2, %u2 {activation = "silu"} : (tensor<?x?x160xf32>, tensor<?x?x160xf32>) -> tensor<?x?x160xf32>
  return %h, %h2, %g2 : tensor<?x?x160xf32>, tensor<?x?x160xf32>, tensor<?x?x160xf32>
}
