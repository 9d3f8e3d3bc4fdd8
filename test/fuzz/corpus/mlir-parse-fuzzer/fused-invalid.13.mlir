

// Tests that graph.rotary needs the cos and sin caches of one type.
func.func @rotary_cache_types(%x: tensor<?x?x64xf32>, %c: tensor<32x8xf32>, %s: tensor<16x8xf32>) -> tensor<?x?x64xf32> {
  // expected-error @+1 {{'graph.rotary' op cos cache 'tensor<32x8xf32>' and sin cache 'tensor<16x8xf32>' must have the same type}}
  %0 = graph.rotary %x caches(%c, %s) {num_heads = 4 : i64, rotated_heads = 4 : i64, head_dim = 16 : i64, rotary_dim = 16 : i64}
      : (tensor<?x?x64xf32>, tensor<32x8xf32>, tensor<16x8xf32>) -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}
