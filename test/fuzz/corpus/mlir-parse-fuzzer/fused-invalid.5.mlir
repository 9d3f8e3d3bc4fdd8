

// Tests that graph.rotary rejects more rotated heads than heads.
func.func @rotary_rotated_heads(%x: tensor<?x?x64xf32>, %f: tensor<8xf32>) -> tensor<?x?x64xf32> {
  // expected-error @+1 {{'graph.rotary' op rotated_heads must lie in [0, num_heads]}}
  %0 = graph.rotary %x, %f {num_heads = 4 : i64, rotated_heads = 5 : i64, head_dim = 16 : i64, rotary_dim = 16 : i64}
      : (tensor<?x?x64xf32>, tensor<8xf32>) -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}
