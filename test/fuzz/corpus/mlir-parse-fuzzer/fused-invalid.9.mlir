

// Tests that graph.rotary needs rotary_dim / 2 inverse frequencies.
func.func @rotary_inv_freq(%x: tensor<?x?x64xf32>, %f: tensor<16xf32>, %p: tensor<1x?xi64>) -> tensor<?x?x64xf32> {
  // expected-error @+1 {{'graph.rotary' op inv_freq has 16 entries, not rotary_dim / 2 = 8}}
  %0 = graph.rotary %x, %f positions(%p) {num_heads = 4 : i64, rotated_heads = 4 : i64, head_dim = 16 : i64, rotary_dim = 16 : i64}
      : (tensor<?x?x64xf32>, tensor<16xf32>, tensor<1x?xi64>) -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}
