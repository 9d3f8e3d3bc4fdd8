

// Tests that a fusion group's body arguments have the operands' types.
func.func @fusion_group_argument_type(%a: tensor<4xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'graph.fusion_group' op body argument type 'tensor<?xf32>' does not match operand type 'tensor<4xf32>'}}
  %0 = graph.fusion_group %a : (tensor<4xf32>) -> tensor<?xf32> {
  ^bb0(%x: tensor<?xf32>):
    graph.yield %x : tensor<?xf32>
  }
  return %0 : tensor<?xf32>
}
