

// Tests that graph.rotary needs an even rotary_dim.
func.func @rotary_odd_dim(%x: tensor<?x?x64xf32>, %f: tensor<3xf32>) -> tensor<?x?x64xf32> {
  // expected-error @+1 {{'graph.rotary' op rotary_dim must be even and in (0, head_dim]}}
  %0 = graph.rotary %x, %f {num_heads = 4 : i64, rotated_heads = 4 : i64, head_dim = 16 : i64, rotary_dim = 7 : i64}
      : (tensor<?x?x64xf32>, tensor<3xf32>) -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}
