

// Tests that graph.attention needs positive head counts, read as signed values.
func.func @attention_negative_heads(%qkv: tensor<?x?x192xf32>) -> tensor<?x?x64xf32> {
  // expected-error @+1 {{'graph.attention' op num_heads, num_kv_heads and head_dim must be positive}}
  %0 = graph.attention %qkv {num_heads = -4 : i64, num_kv_heads = -2 : i64, head_dim = 16 : i64,
                             scale = 2.500000e-01 : f32, causal = true}
      : (tensor<?x?x192xf32>) -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}
