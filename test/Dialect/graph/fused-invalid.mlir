// RUN: infer-opt --split-input-file --verify-diagnostics %s

// Tests that graph.linear needs a rank-2 weight.
func.func @linear_weight_rank(%x: tensor<?x64xf32>, %w: tensor<64xf32>) -> tensor<?x64xf32> {
  // expected-error @+1 {{'graph.linear' op weight must be a rank-2 tensor}}
  %0 = graph.linear %x, %w : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  return %0 : tensor<?x64xf32>
}

// -----

// Tests that graph.linear checks the input's features against the weight's K (here the [N, K] layout).
func.func @linear_input_features(%x: tensor<?x32xf32>, %w: tensor<192x64xf32>) -> tensor<?x192xf32> {
  // expected-error @+1 {{'graph.linear' op input has 32 features but the weight expects 64}}
  %0 = graph.linear %x, %w {transpose_weight = true} : (tensor<?x32xf32>, tensor<192x64xf32>) -> tensor<?x192xf32>
  return %0 : tensor<?x192xf32>
}

// -----

// Tests that graph.linear checks the result's features against the weight's N.
func.func @linear_result_features(%x: tensor<?x64xf32>, %w: tensor<64x192xf32>) -> tensor<?x64xf32> {
  // expected-error @+1 {{'graph.linear' op result has 64 features but the weight gives 192}}
  %0 = graph.linear %x, %w : (tensor<?x64xf32>, tensor<64x192xf32>) -> tensor<?x64xf32>
  return %0 : tensor<?x64xf32>
}

// -----

// Tests that graph.linear checks the bias length against the weight's N.
func.func @linear_bias(%x: tensor<?x64xf32>, %w: tensor<64x192xf32>, %b: tensor<64xf32>) -> tensor<?x192xf32> {
  // expected-error @+1 {{'graph.linear' op bias has 64 entries but the weight gives 192}}
  %0 = graph.linear %x, %w bias(%b) : (tensor<?x64xf32>, tensor<64x192xf32>, tensor<64xf32>) -> tensor<?x192xf32>
  return %0 : tensor<?x192xf32>
}

// -----

// Tests that graph.rotary needs positive num_heads and head_dim, read as signed values.
func.func @rotary_num_heads(%x: tensor<?x?x64xf32>, %f: tensor<8xf32>) -> tensor<?x?x64xf32> {
  // expected-error @+1 {{'graph.rotary' op num_heads and head_dim must be positive}}
  %0 = graph.rotary %x, %f {num_heads = -4 : i64, rotated_heads = 1 : i64, head_dim = -16 : i64, rotary_dim = 16 : i64}
      : (tensor<?x?x64xf32>, tensor<8xf32>) -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}

// -----

// Tests that graph.rotary rejects more rotated heads than heads.
func.func @rotary_rotated_heads(%x: tensor<?x?x64xf32>, %f: tensor<8xf32>) -> tensor<?x?x64xf32> {
  // expected-error @+1 {{'graph.rotary' op rotated_heads must lie in [0, num_heads]}}
  %0 = graph.rotary %x, %f {num_heads = 4 : i64, rotated_heads = 5 : i64, head_dim = 16 : i64, rotary_dim = 16 : i64}
      : (tensor<?x?x64xf32>, tensor<8xf32>) -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}

// -----

// Tests that graph.rotary rejects a negative rotated_heads.
func.func @rotary_negative_rotated_heads(%x: tensor<?x?x64xf32>, %f: tensor<8xf32>) -> tensor<?x?x64xf32> {
  // expected-error @+1 {{'graph.rotary' op rotated_heads must lie in [0, num_heads]}}
  %0 = graph.rotary %x, %f {num_heads = 4 : i64, rotated_heads = -1 : i64, head_dim = 16 : i64, rotary_dim = 16 : i64}
      : (tensor<?x?x64xf32>, tensor<8xf32>) -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}

// -----

// Tests that graph.rotary needs an even rotary_dim.
func.func @rotary_odd_dim(%x: tensor<?x?x64xf32>, %f: tensor<3xf32>) -> tensor<?x?x64xf32> {
  // expected-error @+1 {{'graph.rotary' op rotary_dim must be even and in (0, head_dim]}}
  %0 = graph.rotary %x, %f {num_heads = 4 : i64, rotated_heads = 4 : i64, head_dim = 16 : i64, rotary_dim = 7 : i64}
      : (tensor<?x?x64xf32>, tensor<3xf32>) -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}

// -----

// Tests that graph.rotary checks the input's features against num_heads * head_dim.
func.func @rotary_input_features(%x: tensor<?x?x48xf32>, %f: tensor<8xf32>) -> tensor<?x?x48xf32> {
  // expected-error @+1 {{'graph.rotary' op input has 48 features, not num_heads * head_dim = 64}}
  %0 = graph.rotary %x, %f {num_heads = 4 : i64, rotated_heads = 4 : i64, head_dim = 16 : i64, rotary_dim = 16 : i64}
      : (tensor<?x?x48xf32>, tensor<8xf32>) -> tensor<?x?x48xf32>
  return %0 : tensor<?x?x48xf32>
}

// -----

// Tests that graph.rotary needs rotary_dim / 2 inverse frequencies.
func.func @rotary_inv_freq(%x: tensor<?x?x64xf32>, %f: tensor<16xf32>, %p: tensor<1x?xi64>) -> tensor<?x?x64xf32> {
  // expected-error @+1 {{'graph.rotary' op inv_freq has 16 entries, not rotary_dim / 2 = 8}}
  %0 = graph.rotary %x, %f positions(%p) {num_heads = 4 : i64, rotated_heads = 4 : i64, head_dim = 16 : i64, rotary_dim = 16 : i64}
      : (tensor<?x?x64xf32>, tensor<16xf32>, tensor<1x?xi64>) -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}

// -----

// Tests that graph.rotary needs inv_freq or the caches.
func.func @rotary_no_angles(%x: tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
  // expected-error @+1 {{'graph.rotary' op takes inv_freq or caches(cos, sin), not neither}}
  %0 = graph.rotary %x {num_heads = 4 : i64, rotated_heads = 4 : i64, head_dim = 16 : i64, rotary_dim = 16 : i64}
      : (tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}

// -----

// Tests that graph.rotary does not take both inv_freq and the caches.
func.func @rotary_both_angles(%x: tensor<?x?x64xf32>, %f: tensor<8xf32>, %c: tensor<32x8xf32>) -> tensor<?x?x64xf32> {
  // expected-error @+1 {{'graph.rotary' op takes inv_freq or caches(cos, sin), not both}}
  %0 = graph.rotary %x, %f caches(%c, %c) {num_heads = 4 : i64, rotated_heads = 4 : i64, head_dim = 16 : i64, rotary_dim = 16 : i64}
      : (tensor<?x?x64xf32>, tensor<8xf32>, tensor<32x8xf32>, tensor<32x8xf32>) -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}

// -----

// Tests that graph.rotary takes the cos cache only with the sin cache (generic form: the custom one cannot spell it).
func.func @rotary_cos_only(%x: tensor<?x?x64xf32>, %c: tensor<32x8xf32>) -> tensor<?x?x64xf32> {
  // expected-error @+1 {{'graph.rotary' op takes the cos and sin caches together}}
  %0 = "graph.rotary"(%x, %c) {num_heads = 4 : i64, rotated_heads = 4 : i64, head_dim = 16 : i64, rotary_dim = 16 : i64,
                               operandSegmentSizes = array<i32: 1, 0, 1, 0, 0>}
      : (tensor<?x?x64xf32>, tensor<32x8xf32>) -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}

// -----

// Tests that graph.rotary needs the cos and sin caches of one type.
func.func @rotary_cache_types(%x: tensor<?x?x64xf32>, %c: tensor<32x8xf32>, %s: tensor<16x8xf32>) -> tensor<?x?x64xf32> {
  // expected-error @+1 {{'graph.rotary' op cos cache 'tensor<32x8xf32>' and sin cache 'tensor<16x8xf32>' must have the same type}}
  %0 = graph.rotary %x caches(%c, %s) {num_heads = 4 : i64, rotated_heads = 4 : i64, head_dim = 16 : i64, rotary_dim = 16 : i64}
      : (tensor<?x?x64xf32>, tensor<32x8xf32>, tensor<16x8xf32>) -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}

// -----

// Tests that graph.rotary needs caches of rotary_dim / 2 columns.
func.func @rotary_cache_columns(%x: tensor<?x?x64xf32>, %c: tensor<32x16xf32>) -> tensor<?x?x64xf32> {
  // expected-error @+1 {{'graph.rotary' op caches have 16 columns, not rotary_dim / 2 = 8}}
  %0 = graph.rotary %x caches(%c, %c) {num_heads = 4 : i64, rotated_heads = 4 : i64, head_dim = 16 : i64, rotary_dim = 16 : i64}
      : (tensor<?x?x64xf32>, tensor<32x16xf32>, tensor<32x16xf32>) -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}

// -----

// Tests that graph.rotary needs rank-2 or rank-3 caches.
func.func @rotary_cache_rank(%x: tensor<?x?x64xf32>, %c: tensor<8xf32>) -> tensor<?x?x64xf32> {
  // expected-error @+1 {{'graph.rotary' op caches must be [max_position, rotary_dim / 2] or [batch, seq, rotary_dim / 2], got rank 1}}
  %0 = graph.rotary %x caches(%c, %c) {num_heads = 4 : i64, rotated_heads = 4 : i64, head_dim = 16 : i64, rotary_dim = 16 : i64}
      : (tensor<?x?x64xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}

// -----

// Tests that graph.rotary's per-token caches take no positions.
func.func @rotary_per_token_positions(%x: tensor<?x?x64xf32>, %c: tensor<?x?x8xf32>, %p: tensor<?x?xi64>) -> tensor<?x?x64xf32> {
  // expected-error @+1 {{'graph.rotary' op per-token [batch, seq, rotary_dim / 2] caches take no positions}}
  %0 = graph.rotary %x caches(%c, %c) positions(%p) {num_heads = 4 : i64, rotated_heads = 4 : i64, head_dim = 16 : i64, rotary_dim = 16 : i64}
      : (tensor<?x?x64xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?xi64>) -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}

// -----

// Tests that graph.attention takes one or three operands.
func.func @attention_two_operands(%q: tensor<?x?x64xf32>, %kv: tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
  // expected-error @+1 {{'graph.attention' op takes a packed qkv operand or q, k and v, got 2 operands}}
  %0 = graph.attention %q, %kv {num_heads = 4 : i64, num_kv_heads = 4 : i64, head_dim = 16 : i64,
                                scale = 2.500000e-01 : f32, causal = true}
      : (tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}

// -----

// Tests that graph.attention needs positive head counts, read as signed values.
func.func @attention_negative_heads(%qkv: tensor<?x?x192xf32>) -> tensor<?x?x64xf32> {
  // expected-error @+1 {{'graph.attention' op num_heads, num_kv_heads and head_dim must be positive}}
  %0 = graph.attention %qkv {num_heads = -4 : i64, num_kv_heads = -2 : i64, head_dim = 16 : i64,
                             scale = 2.500000e-01 : f32, causal = true}
      : (tensor<?x?x192xf32>) -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}

// -----

// Tests that graph.attention needs num_heads to be a multiple of num_kv_heads.
func.func @attention_group(%qkv: tensor<?x?x160xf32>) -> tensor<?x?x64xf32> {
  // expected-error @+1 {{'graph.attention' op num_heads (4) must be a multiple of num_kv_heads (3)}}
  %0 = graph.attention %qkv {num_heads = 4 : i64, num_kv_heads = 3 : i64, head_dim = 16 : i64,
                             scale = 2.500000e-01 : f32, causal = true}
      : (tensor<?x?x160xf32>) -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}

// -----

// Tests that graph.attention checks the packed operand's features.
func.func @attention_packed_features(%qkv: tensor<?x?x192xf32>) -> tensor<?x?x64xf32> {
  // expected-error @+1 {{'graph.attention' op packed qkv has 192 features, expected 128}}
  %0 = graph.attention %qkv {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64,
                             scale = 2.500000e-01 : f32, causal = true}
      : (tensor<?x?x192xf32>) -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}

// -----

// Tests that graph.attention checks k's features against num_kv_heads * head_dim.
func.func @attention_operand_features(%q: tensor<?x?x64xf32>, %k: tensor<?x?x64xf32>, %v: tensor<?x?x32xf32>)
    -> tensor<?x?x64xf32> {
  // expected-error @+1 {{'graph.attention' op operand 1 has 64 features, expected 32}}
  %0 = graph.attention %q, %k, %v {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64,
                                   scale = 2.500000e-01 : f32, causal = false}
      : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x32xf32>) -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}

// -----

// Tests that graph.attention's result has num_heads * head_dim features.
func.func @attention_result_features(%qkv: tensor<?x?x128xf32>) -> tensor<?x?x128xf32> {
  // expected-error @+1 {{'graph.attention' op result has 128 features, expected 64}}
  %0 = graph.attention %qkv {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64,
                             scale = 2.500000e-01 : f32, causal = true}
      : (tensor<?x?x128xf32>) -> tensor<?x?x128xf32>
  return %0 : tensor<?x?x128xf32>
}

// -----

// Tests that graph.attention rejects a negative softcap.
func.func @attention_softcap(%qkv: tensor<?x?x128xf32>) -> tensor<?x?x64xf32> {
  // expected-error @+1 {{'graph.attention' op softcap -1.000000e+00 is not supported (a finite, non-negative cap; 0 is none)}}
  %0 = graph.attention %qkv {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64,
                             scale = 2.500000e-01 : f32, causal = true, softcap = -1.0 : f32}
      : (tensor<?x?x128xf32>) -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}

// -----

// Tests that graph.attention rejects a NaN softcap.
func.func @attention_softcap_nan(%qkv: tensor<?x?x128xf32>) -> tensor<?x?x64xf32> {
  // expected-error @+1 {{'graph.attention' op softcap nan is not supported}}
  %0 = graph.attention %qkv {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64,
                             scale = 2.500000e-01 : f32, causal = true, softcap = 0x7FC00000 : f32}
      : (tensor<?x?x128xf32>) -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}

// -----

// Tests that graph.attention rejects an infinite ALiBi factor.
func.func @attention_alibi_inf(%qkv: tensor<?x?x128xf32>) -> tensor<?x?x64xf32> {
  // expected-error @+1 {{'graph.attention' op alibi INF is not supported (a finite bias factor)}}
  %0 = graph.attention %qkv {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64,
                             scale = 2.500000e-01 : f32, causal = true, alibi = 0x7F800000 : f32}
      : (tensor<?x?x128xf32>) -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}

// -----

// Tests that graph.attention rejects a NaN scale.
func.func @attention_scale_nan(%qkv: tensor<?x?x128xf32>) -> tensor<?x?x64xf32> {
  // expected-error @+1 {{'graph.attention' op scale nan is not supported (a finite factor)}}
  %0 = graph.attention %qkv {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64,
                             scale = 0x7FC00000 : f32, causal = true}
      : (tensor<?x?x128xf32>) -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}

// -----

// Tests that graph.attention rejects a window past 2^31 - 1 keys.
func.func @attention_window_huge(%qkv: tensor<?x?x128xf32>) -> tensor<?x?x64xf32> {
  // expected-error @+1 {{'graph.attention' op window 4294967296 is not supported (a sliding window is a positive count of keys, below 2^31, of causal attention)}}
  %0 = graph.attention %qkv {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64,
                             scale = 2.500000e-01 : f32, causal = true, window = 4294967296 : i64}
      : (tensor<?x?x128xf32>) -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}

// -----

// Tests that graph.gated_activation rejects an unknown activation.
func.func @gated_activation_name(%gu: tensor<?x320xf32>) -> tensor<?x160xf32> {
  // expected-error @+1 {{'graph.gated_activation' op activation must be "silu", "gelu" or "gelu_tanh", got "relu"}}
  %0 = graph.gated_activation %gu {activation = "relu"} : (tensor<?x320xf32>) -> tensor<?x160xf32>
  return %0 : tensor<?x160xf32>
}

// -----

// Tests that graph.gated_activation takes one or two operands.
func.func @gated_activation_three(%a: tensor<?x160xf32>) -> tensor<?x160xf32> {
  // expected-error @+1 {{'graph.gated_activation' op takes gate_up or gate and up, got 3 operands}}
  %0 = graph.gated_activation %a, %a, %a {activation = "silu"}
      : (tensor<?x160xf32>, tensor<?x160xf32>, tensor<?x160xf32>) -> tensor<?x160xf32>
  return %0 : tensor<?x160xf32>
}

// -----

// Tests that a packed gate_up has an even number of features.
func.func @gated_activation_odd(%gu: tensor<?x321xf32>) -> tensor<?x160xf32> {
  // expected-error @+1 {{'graph.gated_activation' op packed gate_up has an odd number of features (321)}}
  %0 = graph.gated_activation %gu {activation = "silu"} : (tensor<?x321xf32>) -> tensor<?x160xf32>
  return %0 : tensor<?x160xf32>
}

// -----

// Tests that the packed form's result is half of gate_up.
func.func @gated_activation_packed_result(%gu: tensor<?x320xf32>) -> tensor<?x320xf32> {
  // expected-error @+1 {{'graph.gated_activation' op result has 320 features, expected half of 320}}
  %0 = graph.gated_activation %gu {activation = "gelu"} : (tensor<?x320xf32>) -> tensor<?x320xf32>
  return %0 : tensor<?x320xf32>
}

// -----

// Tests that gate and up have the same number of features.
func.func @gated_activation_pair(%g: tensor<?x160xf32>, %u: tensor<?x128xf32>) -> tensor<?x160xf32> {
  // expected-error @+1 {{'graph.gated_activation' op gate has 160 features but up has 128}}
  %0 = graph.gated_activation %g, %u {activation = "silu"}
      : (tensor<?x160xf32>, tensor<?x128xf32>) -> tensor<?x160xf32>
  return %0 : tensor<?x160xf32>
}

// -----

// Tests that the two-operand form's result has gate's features.
func.func @gated_activation_pair_result(%g: tensor<?x160xf32>, %u: tensor<?x160xf32>) -> tensor<?x80xf32> {
  // expected-error @+1 {{'graph.gated_activation' op result has 80 features, expected 160}}
  %0 = graph.gated_activation %g, %u {activation = "gelu_tanh"}
      : (tensor<?x160xf32>, tensor<?x160xf32>) -> tensor<?x80xf32>
  return %0 : tensor<?x80xf32>
}

// -----

// Tests that a fusion group's body has one argument per operand.
func.func @fusion_group_arity(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.fusion_group' op body has 1 arguments for 2 operands}}
  %0 = graph.fusion_group %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    graph.yield %x : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

// Tests that a fusion group's body arguments have the operands' types.
func.func @fusion_group_argument_type(%a: tensor<4xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'graph.fusion_group' op body argument type 'tensor<?xf32>' does not match operand type 'tensor<4xf32>'}}
  %0 = graph.fusion_group %a : (tensor<4xf32>) -> tensor<?xf32> {
  ^bb0(%x: tensor<?xf32>):
    graph.yield %x : tensor<?xf32>
  }
  return %0 : tensor<?xf32>
}

// -----

// Tests that a fusion group's body must end in graph.yield (generic form, where no terminator is implied).
func.func @fusion_group_no_yield(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.fusion_group' op body must end in graph.yield}}
  %0 = "graph.fusion_group"(%a) ({
  ^bb0(%x: tensor<4xf32>):
    %n = graph.neg %x : (tensor<4xf32>) -> tensor<4xf32>
  }) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that a fusion group's body may not end in another dialect's terminator.
func.func @fusion_group_other_terminator(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.fusion_group' op body must end in graph.yield}}
  %0 = graph.fusion_group %a : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    func.return %x : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

// Tests that a fusion group yields its results' types.
func.func @fusion_group_yield_types(%a: tensor<4xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'graph.fusion_group' op yields types that do not match the results}}
  %0 = graph.fusion_group %a : (tensor<4xf32>) -> tensor<?xf32> {
  ^bb0(%x: tensor<4xf32>):
    graph.yield %x : tensor<4xf32>
  }
  return %0 : tensor<?xf32>
}

// -----

// Tests that graph.pack_weights needs a weight.
func.func @pack_weights_empty() -> tensor<4xf32> {
  // expected-error @+1 {{'graph.pack_weights' op needs at least one weight}}
  %0 = graph.pack_weights {axis = 0 : i64} : () -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that graph.pack_weights needs an axis within the result's rank.
func.func @pack_weights_axis(%a: tensor<4x2xf32>, %b: tensor<4x2xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'graph.pack_weights' op axis 2 is out of range for rank 2}}
  %0 = graph.pack_weights %a, %b {axis = 2 : i64} : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// Tests that graph.pack_weights needs weights of the result's rank and element type.
func.func @pack_weights_rank(%a: tensor<4x2xf32>, %b: tensor<8xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'graph.pack_weights' op weights must share the result's rank and element type}}
  %0 = graph.pack_weights %a, %b {axis = 1 : i64} : (tensor<4x2xf32>, tensor<8xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// Tests that graph.pack_weights needs weights that agree with the result off the packed axis.
func.func @pack_weights_dim(%a: tensor<4x2xf32>, %b: tensor<3x2xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'graph.pack_weights' op weights differ from the result in dim 0}}
  %0 = graph.pack_weights %a, %b {axis = 1 : i64} : (tensor<4x2xf32>, tensor<3x2xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// Tests that graph.pack_weights' packed dim is the sum of the weights'.
func.func @pack_weights_total(%a: tensor<4x2xf32>, %b: tensor<4x3xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'graph.pack_weights' op packed dim is 4, weights add up to 5}}
  %0 = graph.pack_weights %a, %b {axis = 1 : i64} : (tensor<4x2xf32>, tensor<4x3xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// Tests that a transposed graph.pack_weights needs rank-2 weights.
func.func @pack_weights_transpose_rank(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'graph.pack_weights' op transpose needs rank-2 weights, got rank 1}}
  %0 = graph.pack_weights %a, %b {axis = 0 : i64, transpose} : (tensor<4xf32>, tensor<4xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Tests that a transposed graph.pack_weights' result is the concatenation's
// shape reversed: [4, 2] ++ [4, 2] along axis 0 is [8, 2], stored [2, 8], not [8, 2].
func.func @pack_weights_transpose_dim(%a: tensor<4x2xf32>, %b: tensor<4x2xf32>) -> tensor<8x2xf32> {
  // expected-error @+1 {{'graph.pack_weights' op weights differ from the result's transpose in dim 1}}
  %0 = graph.pack_weights %a, %b {axis = 0 : i64, transpose} : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
  return %0 : tensor<8x2xf32>
}

// -----

// Tests that a transposed graph.pack_weights' packed dim is the result's
// other dim: [4, 2] ++ [4, 3] along axis 1 is [4, 5], stored [5, 4].
func.func @pack_weights_transpose_total(%a: tensor<4x2xf32>, %b: tensor<4x3xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'graph.pack_weights' op packed dim is 4, weights add up to 5}}
  %0 = graph.pack_weights %a, %b {axis = 1 : i64, transpose} : (tensor<4x2xf32>, tensor<4x3xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// Tests that a sliding window needs causal attention.
func.func @attention_window_not_causal(%qkv: tensor<?x?x128xf32>) -> tensor<?x?x64xf32> {
  // expected-error @+1 {{'graph.attention' op window 8 is not supported (a sliding window is a positive count of keys, below 2^31, of causal attention)}}
  %0 = graph.attention %qkv {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64,
                             scale = 2.500000e-01 : f32, causal = false, window = 8 : i64}
      : (tensor<?x?x128xf32>) -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}

// -----

// Tests that a sliding window is not negative.
func.func @attention_window_negative(%qkv: tensor<?x?x128xf32>) -> tensor<?x?x64xf32> {
  // expected-error @+1 {{'graph.attention' op window -1 is not supported (a sliding window is a positive count of keys, below 2^31, of causal attention)}}
  %0 = graph.attention %qkv {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64,
                             scale = 2.500000e-01 : f32, causal = true, window = -1 : i64}
      : (tensor<?x?x128xf32>) -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}

// -----

// Tests that graph.moe takes silu experts only.
func.func @moe_activation(%x: tensor<?x?x64xf32>, %r: tensor<4x64xf32>, %gu: tensor<4x64x64xf32>, %d: tensor<4x64x32xf32>) -> tensor<?x?x64xf32> {
  // expected-error @+1 {{'graph.moe' op activation must be "silu", got "gelu"}}
  %y = graph.moe %x, %r, %gu, %d {activation = "gelu", normalize = true, top_k = 2 : i64} : (tensor<?x?x64xf32>, tensor<4x64xf32>, tensor<4x64x64xf32>, tensor<4x64x32xf32>) -> tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}

// -----

// Tests that graph.moe's expert weights must fit the router.
func.func @moe_shapes(%x: tensor<?x?x64xf32>, %r: tensor<4x64xf32>, %gu: tensor<4x60x64xf32>, %d: tensor<4x64x32xf32>) -> tensor<?x?x64xf32> {
  // expected-error @+1 {{'graph.moe' op gate_up 'tensor<4x60x64xf32>' and down 'tensor<4x64x32xf32>' do not match router 'tensor<4x64xf32>'}}
  %y = graph.moe %x, %r, %gu, %d {activation = "silu", normalize = true, top_k = 2 : i64} : (tensor<?x?x64xf32>, tensor<4x64xf32>, tensor<4x60x64xf32>, tensor<4x64x32xf32>) -> tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}

// -----

// Tests that graph.moe picks between 1 and all experts.
func.func @moe_top_k(%x: tensor<?x?x64xf32>, %r: tensor<4x64xf32>, %gu: tensor<4x64x64xf32>, %d: tensor<4x64x32xf32>) -> tensor<?x?x64xf32> {
  // expected-error @+1 {{'graph.moe' op top_k 5 is outside [1, 4]}}
  %y = graph.moe %x, %r, %gu, %d {activation = "silu", normalize = false, top_k = 5 : i64} : (tensor<?x?x64xf32>, tensor<4x64xf32>, tensor<4x64x64xf32>, tensor<4x64x32xf32>) -> tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}

// -----

// Tests that graph.quantize_weight's clip ratios are an int4 weight's [n, k / group_size] f32.
func.func @quantize_clip_shape(%w: tensor<2x4xf32>, %c: tensor<2x2xf32>) -> tensor<2x1xf32> {
  // expected-error @+1 {{'graph.quantize_weight' op clip must be an int4 weight's tensor<2x1xf32>, got 'tensor<2x2xf32>' for scheme int4}}
  %q, %s = graph.quantize_weight %w clip(%c) {scheme = "int4", group_size = 4 : i64} : (tensor<2x4xf32>, tensor<2x2xf32>) -> (tensor<2x2xui8>, tensor<2x1xf32>)
  return %s : tensor<2x1xf32>
}
