

// Tests that a comparison still needs operands of one element type.
func.func @equal_mixed_operands(%x: tensor<4xi64>, %y: tensor<4xi32>) -> tensor<4xi1> {
  // expected-error @+1 {{'graph.equal' op operands must have the same element type, got 'i64' and 'i32'}}
  %0 = graph.equal %x, %y : (tensor<4xi64>, tensor<4xi32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}
