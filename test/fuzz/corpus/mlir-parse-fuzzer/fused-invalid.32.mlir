

// Tests that a fusion group's body must end in graph.yield (generic form, where no terminator is implied).
func.func @fusion_group_no_yield(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.fusion_group' op body must end in graph.yield}}
  %0 = "graph.fusion_group"(%a) ({
  ^bb0(%x: tensor<4xf32>):
    %n = graph.neg %x : (tensor<4xf32>) -> tensor<4xf32>
  }) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
