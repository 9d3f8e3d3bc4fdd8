

// Tests that an arithmetic binary op keeps its operands' element type.
func.func @mul_bad_result(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf16> {
  // expected-error @+1 {{'graph.mul' op result element type must be 'f32', got 'f16'}}
  %0 = graph.mul %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}
