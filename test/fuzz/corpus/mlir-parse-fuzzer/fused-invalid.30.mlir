

// Tests that a fusion group's body has one argument per operand.
func.func @fusion_group_arity(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.fusion_group' op body has 1 arguments for 2 operands}}
  %0 = graph.fusion_group %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    graph.yield %x : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}
