

// Tests that graph.attention rejects a negative softcap.
func.func @attention_softcap(%qkv: tensor<?x?x128xf32>) -> tensor<?x?x64xf32> {
  // expected-error @+1 {{'graph.attention' op softcap must be non-negative}}
  %0 = graph.attention %qkv {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64,
                             scale = 2.500000e-01 : f32, causal = true, softcap = -1.0 : f32}
      : (tensor<?x?x128xf32>) -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}
