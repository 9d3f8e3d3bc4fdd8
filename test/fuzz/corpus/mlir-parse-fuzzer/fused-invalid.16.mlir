

// Tests that graph.rotary's per-token caches take no positions.
func.func @rotary_per_token_positions(%x: tensor<?x?x64xf32>, %c: tensor<?x?x8xf32>, %p: tensor<?x?xi64>) -> tensor<?x?x64xf32> {
  // expected-error @+1 {{'graph.rotary' op per-token [batch, seq, rotary_dim / 2] caches take no positions}}
  %0 = graph.rotary %x caches(%c, %c) positions(%p) {num_heads = 4 : i64, rotated_heads = 4 : i64, head_dim = 16 : i64, rotary_dim = 16 : i64}
      : (tensor<?x?x64xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?xi64>) -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}
