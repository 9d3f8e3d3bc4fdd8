

// Tests that graph.rotary needs inv_freq or the caches.
func.func @rotary_no_angles(%x: tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
  // expected-error @+1 {{'graph.rotary' op takes inv_freq or caches(cos, sin), not neither}}
  %0 = graph.rotary %x {num_heads = 4 : i64, rotated_heads = 4 : i64, head_dim = 16 : i64, rotary_dim = 16 : i64}
      : (tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}
