

// Tests that graph.attention checks k's features against num_kv_heads * head_dim.
func.func @attention_operand_features(%q: tensor<?x?x64xf32>, %k: tensor<?x?x64xf32>, %v: tensor<?x?x32xf32>)
    -> tensor<?x?x64xf32> {
  // expected-error @+1 {{'graph.attention' op operand 1 has 64 features, expected 32}}
  %0 = graph.attention %q, %k, %v {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64,
                                   scale = 2.500000e-01 : f32, causal = false}
      : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x32xf32>) -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}
