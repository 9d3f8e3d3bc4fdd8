

// Tests that graph.rotary needs caches of rotary_dim / 2 columns.
func.func @rotary_cache_columns(%x: tensor<?x?x64xf32>, %c: tensor<32x16xf32>) -> tensor<?x?x64xf32> {
  // expected-error @+1 {{'graph.rotary' op caches have 16 columns, not rotary_dim / 2 = 8}}
  %0 = graph.rotary %x caches(%c, %c) {num_heads = 4 : i64, rotated_heads = 4 : i64, head_dim = 16 : i64, rotary_dim = 16 : i64}
      : (tensor<?x?x64xf32>, tensor<32x16xf32>, tensor<32x16xf32>) -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}
