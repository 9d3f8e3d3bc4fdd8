

// Tests that graph.attention needs num_heads to be a multiple of num_kv_heads.
func.func @attention_group(%qkv: tensor<?x?x160xf32>) -> tensor<?x?x64xf32> {
  // expected-error @+1 {{'graph.attention' op num_heads (4) must be a multiple of num_kv_heads (3)}}
  %0 = graph.attention %qkv {num_heads = 4 : i64, num_kv_heads = 3 : i64, head_dim = 16 : i64,
                             scale = 2.500000e-01 : f32, causal = true}
      : (tensor<?x?x160xf32>) -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}
