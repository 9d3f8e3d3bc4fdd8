

// Tests that graph.attention checks the packed operand's features.
func.func @attention_packed_features(%qkv: tensor<?x?x192xf32>) -> tensor<?x?x64xf32> {
  // expected-error @+1 {{'graph.attention' op packed qkv has 192 features, expected 128}}
  %0 = graph.attention %qkv {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64,
                             scale = 2.500000e-01 : f32, causal = true}
      : (tensor<?x?x192xf32>) -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}
