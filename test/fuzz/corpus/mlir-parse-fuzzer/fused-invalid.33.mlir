

// Tests that a fusion group's body may not end in another dialect's terminator.
func.func @fusion_group_other_terminator(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.fusion_group' op body must end in graph.yield}}
  %0 = graph.fusion_group %a : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    func.return %x : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}
