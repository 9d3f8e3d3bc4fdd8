

// Tests that graph.rotary rejects a negative rotated_heads.
func.func @rotary_negative_rotated_heads(%x: tensor<?x?x64xf32>, %f: tensor<8xf32>) -> tensor<?x?x64xf32> {
  // expected-error @+1 {{'graph.rotary' op rotated_heads must lie in [0, num_heads]}}
  %0 = graph.rotary %x, %f {num_heads = 4 : i64, rotated_heads = -1 : i64, head_dim = 16 : i64, rotary_dim = 16 : i64}
      : (tensor<?x?x64xf32>, tensor<8xf32>) -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}
