

// Tests that a fusion group yields its results' types.
func.func @fusion_group_yield_types(%a: tensor<4xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'graph.fusion_group' op yields types that do not match the results}}
  %0 = graph.fusion_group %a : (tensor<4xf32>) -> tensor<?xf32> {
  ^bb0(%x: tensor<4xf32>):
    graph.yield %x : tensor<4xf32>
  }
  return %0 : tensor<?xf32>
}
