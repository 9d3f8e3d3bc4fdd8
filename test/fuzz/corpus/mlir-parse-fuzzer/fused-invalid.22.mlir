

// Tests that graph.attention's result has num_heads * head_dim features.
func.func @attention_result_features(%qkv: tensor<?x?x128xf32>) -> tensor<?x?x128xf32> {
  // expected-error @+1 {{'graph.attention' op result has 128 features, expected 64}}
  %0 = graph.attention %qkv {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64,
                             scale = 2.500000e-01 : f32, causal = true}
      : (tensor<?x?x128xf32>) -> tensor<?x?x128xf32>
  return %0 : tensor<?x?x128xf32>
}
