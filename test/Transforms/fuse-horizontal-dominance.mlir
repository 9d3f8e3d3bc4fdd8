// RUN: infer-opt --split-input-file --infer-fuse-horizontal %s | FileCheck %s
//
// Regression tests: the packed linear and rotary are built at the consumer
// (attention / gated_activation), which every operand dominates, not at the
// first projection (where weights or inv_freq defined later were not yet
// available).

// Tests Q, K, V linears whose weights are defined between them, with the
// rotary frequencies defined after them.
// CHECK-LABEL: func.func @qkv_weights_interleaved
// CHECK: %[[W:.+]] = graph.pack_weights %{{.+}}, %{{.+}}, %{{.+}} {axis = 1 : i64}
// CHECK: %[[QKV:.+]] = graph.linear %{{.+}}, %[[W]]
// CHECK: %[[R:.+]] = graph.rotary %[[QKV]], %{{.+}} {head_dim = 16 : i64, num_heads = 8 : i64, rotary_dim = 16 : i64, rotated_heads = 6 : i64}
// CHECK: graph.attention %[[R]] {
func.func @qkv_weights_interleaved(%x: tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
  %wq = graph.weight <q_proj> : tensor<64x64xf32>
  %q = graph.linear %x, %wq : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
  %wk = graph.weight <k_proj> : tensor<64x32xf32>
  %k = graph.linear %x, %wk : (tensor<?x?x64xf32>, tensor<64x32xf32>) -> tensor<?x?x32xf32>
  %wv = graph.weight <v_proj> : tensor<64x32xf32>
  %v = graph.linear %x, %wv : (tensor<?x?x64xf32>, tensor<64x32xf32>) -> tensor<?x?x32xf32>
  %f = graph.constant dense<[1.0, 0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125]> : tensor<8xf32>
  %qr = graph.rotary %q, %f {head_dim = 16 : i64, num_heads = 4 : i64, rotary_dim = 16 : i64, rotated_heads = 4 : i64} : (tensor<?x?x64xf32>, tensor<8xf32>) -> tensor<?x?x64xf32>
  %kr = graph.rotary %k, %f {head_dim = 16 : i64, num_heads = 2 : i64, rotary_dim = 16 : i64, rotated_heads = 2 : i64} : (tensor<?x?x32xf32>, tensor<8xf32>) -> tensor<?x?x32xf32>
  %o = graph.attention %qr, %kr, %v {causal = true, head_dim = 16 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 2.500000e-01 : f32} : (tensor<?x?x64xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf32>) -> tensor<?x?x64xf32>
  return %o : tensor<?x?x64xf32>
}

// -----

// Tests gate and up linears whose up weight is defined between them.
// CHECK-LABEL: func.func @gate_up_weights_interleaved
// CHECK: %[[W:.+]] = graph.pack_weights %{{.+}}, %{{.+}} {axis = 1 : i64}
// CHECK: %[[GU:.+]] = graph.linear %{{.+}}, %[[W]]
// CHECK: graph.gated_activation %[[GU]] {activation = "silu"}
func.func @gate_up_weights_interleaved(%x: tensor<?x?x64xf32>) -> tensor<?x?x160xf32> {
  %wg = graph.weight <gate_proj> : tensor<64x160xf32>
  %g = graph.linear %x, %wg : (tensor<?x?x64xf32>, tensor<64x160xf32>) -> tensor<?x?x160xf32>
  %wu = graph.weight <up_proj> : tensor<64x160xf32>
  %u = graph.linear %x, %wu : (tensor<?x?x64xf32>, tensor<64x160xf32>) -> tensor<?x?x160xf32>
  %h = graph.gated_activation %g, %u {activation = "silu"} : (tensor<?x?x160xf32>, tensor<?x?x160xf32>) -> tensor<?x?x160xf32>
  return %h : tensor<?x?x160xf32>
}
