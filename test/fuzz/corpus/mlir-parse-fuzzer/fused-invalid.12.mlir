

// Tests that graph.rotary takes the cos cache only with the sin cache (generic form: the custom one cannot spell it).
func.func @rotary_cos_only(%x: tensor<?x?x64xf32>, %c: tensor<32x8xf32>) -> tensor<?x?x64xf32> {
  // expected-error @+1 {{'graph.rotary' op takes the cos and sin caches together}}
  %0 = "graph.rotary"(%x, %c) {num_heads = 4 : i64, rotated_heads = 4 : i64, head_dim = 16 : i64, rotary_dim = 16 : i64,
                               operandSegmentSizes = array<i32: 1, 0, 1, 0, 0>}
      : (tensor<?x?x64xf32>, tensor<32x8xf32>) -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}
