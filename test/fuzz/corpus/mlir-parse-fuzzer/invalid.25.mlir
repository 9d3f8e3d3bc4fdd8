

// Tests that graph.weight checks the blob size against its static type.
func.func @weight_size_mismatch() -> tensor<3xf32> {
  // expected-error @+1 {{'graph.weight' op weight holds 8 bytes but 'tensor<3xf32>' needs 12}}
  %0 = graph.weight <w_short> : tensor<3xf32>
  return %0 : tensor<3xf32>
}

{-#
  dialect_resources: {
    graph: {
      w_short: "0x040000000000803F00000040"
    }
  }
#-}
