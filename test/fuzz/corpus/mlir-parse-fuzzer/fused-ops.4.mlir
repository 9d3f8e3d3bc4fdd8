

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
