

// Tests that graph.attention takes one or three operands.
func.func @attention_two_operands(%q: tensor<?x?x64xf32>, %kv: tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
  // expected-error @+1 {{'graph.attention' op takes a packed qkv operand or q, k and v, got 2 operands}}
  %0 = graph.attention %q, %kv {num_heads = 4 : i64, num_kv_heads = 4 : i64, head_dim = 16 : i64,
                                scale = 2.500000e-01 : f32, causal = true}
      : (tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}
