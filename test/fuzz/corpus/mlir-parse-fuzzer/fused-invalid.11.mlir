

// Tests that graph.rotary does not take both inv_freq and the caches.
func.func @rotary_both_angles(%x: tensor<?x?x64xf32>, %f: tensor<8xf32>, %c: tensor<32x8xf32>) -> tensor<?x?x64xf32> {
  // expected-error @+1 {{'graph.rotary' op takes inv_freq or caches(cos, sin), not both}}
  %0 = graph.rotary %x, %f caches(%c, %c) {num_heads = 4 : i64, rotated_heads = 4 : i64, head_dim = 16 : i64, rotary_dim = 16 : i64}
      : (tensor<?x?x64xf32>, tensor<8xf32>, tensor<32x8xf32>, tensor<32x8xf32>) -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}
