

// Tests that graph.rotary checks the input's features against num_heads * head_dim.
func.func @rotary_input_features(%x: tensor<?x?x48xf32>, %f: tensor<8xf32>) -> tensor<?x?x48xf32> {
  // expected-error @+1 {{'graph.rotary' op input has 48 features, not num_heads * head_dim = 64}}
  %0 = graph.rotary %x, %f {num_heads = 4 : i64, rotated_heads = 4 : i64, head_dim = 16 : i64, rotary_dim = 16 : i64}
      : (tensor<?x?x48xf32>, tensor<8xf32>) -> tensor<?x?x48xf32>
  return %0 : tensor<?x?x48xf32>
}
