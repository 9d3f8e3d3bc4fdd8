

// Tests that graph.rotary needs rank-2 or rank-3 caches.
func.func @rotary_cache_rank(%x: tensor<?x?x64xf32>, %c: tensor<8xf32>) -> tensor<?x?x64xf32> {
  // expected-error @+1 {{'graph.rotary' op caches must be [max_position, rotary_dim / 2] or [batch, seq, rotary_dim / 2], got rank 1}}
  %0 = graph.rotary %x caches(%c, %c) {num_heads = 4 : i64, rotated_heads = 4 : i64, head_dim = 16 : i64, rotary_dim = 16 : i64}
      : (tensor<?x?x64xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}
