// RUN: infer-opt --split-input-file --verify-diagnostics %s

// Tests that an arithmetic binary op rejects operands of different element types.
func.func @add_mixed_operands(%x: tensor<4xf32>, %y: tensor<4xi64>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.add' op operands must have the same element type, got 'f32' and 'i64'}}
  %0 = graph.add %x, %y : (tensor<4xf32>, tensor<4xi64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that an arithmetic binary op keeps its operands' element type.
func.func @mul_bad_result(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf16> {
  // expected-error @+1 {{'graph.mul' op result element type must be 'f32', got 'f16'}}
  %0 = graph.mul %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// Tests that a comparison must produce i1.
func.func @less_not_bool(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.less' op result element type must be 'i1', got 'f32'}}
  %0 = graph.less %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that a comparison still needs operands of one element type.
func.func @equal_mixed_operands(%x: tensor<4xi64>, %y: tensor<4xi32>) -> tensor<4xi1> {
  // expected-error @+1 {{'graph.equal' op operands must have the same element type, got 'i64' and 'i32'}}
  %0 = graph.equal %x, %y : (tensor<4xi64>, tensor<4xi32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// Tests that graph.and rejects non-bool operands.
func.func @and_not_bool(%x: tensor<4xi64>, %y: tensor<4xi64>) -> tensor<4xi1> {
  // expected-error @+1 {{'graph.and' op operands must be i1 tensors, got 'i64'}}
  %0 = graph.and %x, %y : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// Tests that graph.or rejects non-bool operands.
func.func @or_not_bool(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xi1> {
  // expected-error @+1 {{'graph.or' op operands must be i1 tensors, got 'f32'}}
  %0 = graph.or %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// Tests that graph.pow's result follows the base's element type.
func.func @pow_bad_result(%x: tensor<4xf32>, %e: tensor<i64>) -> tensor<4xi64> {
  // expected-error @+1 {{'graph.pow' op result element type must match the base's}}
  %0 = graph.pow %x, %e : (tensor<4xf32>, tensor<i64>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

// Tests that graph.where needs x, y and the result to share an element type.
func.func @where_mixed(%c: tensor<4xi1>, %x: tensor<4xf32>, %y: tensor<4xi64>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.where' op x, y and result must have one element type, got 'f32', 'i64' and 'f32'}}
  %0 = graph.where %c, %x, %y : (tensor<4xi1>, tensor<4xf32>, tensor<4xi64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that graph.where's condition must be a bool tensor (ODS constraint).
func.func @where_condition_not_bool(%c: tensor<4xf32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.where' op operand #0 must be tensor of 1-bit signless integer values}}
  %0 = graph.where %c, %x, %x : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that graph.transpose rejects a perm with a repeated entry.
func.func @transpose_not_permutation(%x: tensor<2x3xf32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{'graph.transpose' op perm must be a permutation of [0, 2)}}
  %0 = graph.transpose %x {perm = array<i64: 0, 0>} : (tensor<2x3xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// Tests that graph.transpose rejects a perm entry outside [0, rank).
func.func @transpose_out_of_range(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{'graph.transpose' op perm must be a permutation of [0, 2)}}
  %0 = graph.transpose %x {perm = array<i64: 1, 2>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// Tests that graph.transpose rejects a perm whose length is not the input rank.
func.func @transpose_wrong_length(%x: tensor<2x3x4xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{'graph.transpose' op perm has 2 entries but the input has rank 3}}
  %0 = graph.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3x4xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// Tests that graph.concat rejects an axis at or past the rank.
func.func @concat_axis_out_of_range(%a: tensor<2x3xf32>) -> tensor<2x6xf32> {
  // expected-error @+1 {{'graph.concat' op axis 2 is out of range for rank 2 (the importer makes axes non-negative)}}
  %0 = graph.concat %a, %a {axis = 2 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

// Tests that graph.concat rejects a negative axis (the importer normalises them).
func.func @concat_negative_axis(%a: tensor<2x3xf32>) -> tensor<2x6xf32> {
  // expected-error @+1 {{'graph.concat' op axis -1 is out of range for rank 2}}
  %0 = graph.concat %a, %a {axis = -1 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

// Tests that graph.concat rejects inputs of different element types.
func.func @concat_mixed_types(%a: tensor<2xi64>, %b: tensor<2xi32>) -> tensor<4xi64> {
  // expected-error @+1 {{'graph.concat' op inputs must share one element type}}
  %0 = graph.concat %a, %b {axis = 0 : i64} : (tensor<2xi64>, tensor<2xi32>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

// Tests that graph.concat needs at least one input.
func.func @concat_no_inputs() -> tensor<0xi64> {
  // expected-error @+1 {{'graph.concat' op needs at least one input}}
  %0 = graph.concat {axis = 0 : i64} : () -> tensor<0xi64>
  return %0 : tensor<0xi64>
}

// -----

// Tests that graph.gather rejects an axis at or past the data rank.
func.func @gather_axis_out_of_range(%t: tensor<8x4xf32>, %i: tensor<3xi64>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'graph.gather' op axis 2 is out of range for rank 2}}
  %0 = graph.gather %t, %i {axis = 2 : i64} : (tensor<8x4xf32>, tensor<3xi64>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

// Tests that graph.gather's indices must be i32 or i64 (ODS constraint).
func.func @gather_float_indices(%t: tensor<8x4xf32>, %i: tensor<3xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{'graph.gather' op operand #1 must be tensor of 64-bit signless integer or 32-bit signless integer values}}
  %0 = graph.gather %t, %i {axis = 0 : i64} : (tensor<8x4xf32>, tensor<3xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// Tests that graph.softmax rejects an axis at or past the rank.
func.func @softmax_axis_out_of_range(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'graph.softmax' op axis 2 is out of range for rank 2}}
  %0 = graph.softmax %x {axis = 2 : i64} : tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// Tests that graph.softmax rejects a negative axis.
func.func @softmax_negative_axis(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'graph.softmax' op axis -1 is out of range for rank 2}}
  %0 = graph.softmax %x {axis = -1 : i64} : tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// Tests that graph.gelu accepts only "none" and "tanh".
func.func @gelu_bad_approximate(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.gelu' op approximate must be "none" or "tanh", got "fast"}}
  %0 = graph.gelu %x {approximate = "fast"} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that graph.einsum rejects an implicit-output equation.
func.func @einsum_implicit(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'graph.einsum' op equation must be explicit (contain '->'), got "ij,jk"}}
  %0 = graph.einsum %a, %b {equation = "ij,jk"} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// Tests that graph.einsum rejects an ellipsis.
func.func @einsum_ellipsis(%a: tensor<2x3x4xf32>) -> tensor<2x4x3xf32> {
  // expected-error @+1 {{'graph.einsum' op ellipsis in einsum equations is not supported}}
  %0 = graph.einsum %a {equation = "...ij->...ji"} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
  return %0 : tensor<2x4x3xf32>
}

// -----

// Tests that graph.einsum needs one equation term per input.
func.func @einsum_term_count(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'graph.einsum' op equation names 2 inputs but the op has 1}}
  %0 = graph.einsum %a {equation = "ij,jk->ik"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that graph.einsum needs each term to have one letter per input dim.
func.func @einsum_rank_mismatch(%a: tensor<2x3x4xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'graph.einsum' op term 'ij' does not match an input of rank 3}}
  %0 = graph.einsum %a, %b {equation = "ij,jk->ik"} : (tensor<2x3x4xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

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

// -----

// Tests that graph.constant's value and result types must match (generic form).
func.func @constant_type_mismatch() -> tensor<3xi64> {
  // expected-error @+1 {{'graph.constant' op failed to verify that all of {value, result} have same type}}
  %0 = "graph.constant"() <{value = dense<[1, 2]> : tensor<2xi64>}> : () -> tensor<3xi64>
  return %0 : tensor<3xi64>
}

// -----

// Tests that graph.not rejects a non-bool input (ODS constraint).
func.func @not_on_float(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.not' op operand #0 must be tensor of 1-bit signless integer values}}
  %0 = graph.not %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that graph.is_nan must produce i1 (ODS constraint).
func.func @is_nan_not_bool(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.is_nan' op result #0 must be tensor of 1-bit signless integer values}}
  %0 = graph.is_nan %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that a unary op keeps its element type (SameOperandsAndResultElementType).
func.func @exp_changes_type(%x: tensor<4xf32>) -> tensor<4xf16> {
  // expected-error @+1 {{'graph.exp' op requires the same element type for all operands and results}}
  %0 = graph.exp %x : (tensor<4xf32>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// Tests that graph.reshape's shape operand must be i64 (ODS constraint).
func.func @reshape_shape_not_i64(%x: tensor<?x64xf32>, %s: tensor<2xi32>) -> tensor<?x?xf32> {
  // expected-error @+1 {{'graph.reshape' op operand #1 must be tensor of 64-bit signless integer values}}
  %0 = graph.reshape %x, %s : (tensor<?x64xf32>, tensor<2xi32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// Tests that graph.constant_of_shape's shape operand must be i64 (ODS constraint).
func.func @constant_of_shape_i32(%s: tensor<2xi32>) -> tensor<?x?xf32> {
  // expected-error @+1 {{'graph.constant_of_shape' op operand #0 must be tensor of 64-bit signless integer values}}
  %0 = graph.constant_of_shape %s {value = dense<0.0> : tensor<1xf32>} : (tensor<2xi32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// Tests that graph.slice's index operands must be i32 or i64 (ODS constraint).
func.func @slice_float_starts(%x: tensor<?xf32>, %f: tensor<1xf32>, %i: tensor<1xi64>) -> tensor<?xf32> {
  // expected-error @+1 {{'graph.slice' op operand #1 must be tensor of 64-bit signless integer or 32-bit signless integer values}}
  %0 = graph.slice %x, %f, %i, %i, %i : (tensor<?xf32>, tensor<1xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// Tests that graph.shape must produce i64 (ODS constraint).
func.func @shape_result_i32(%x: tensor<?x4xf32>) -> tensor<2xi32> {
  // expected-error @+1 {{'graph.shape' op result #0 must be tensor of 64-bit signless integer values}}
  %0 = graph.shape %x : (tensor<?x4xf32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

// Tests that graph.softmax keeps its operand type (SameOperandsAndResultType).
func.func @softmax_type_change(%x: tensor<2x8xf32>) -> tensor<2x8xf16> {
  // expected-error @+1 {{'graph.softmax' op requires the same type for all operands and results}}
  %0 = "graph.softmax"(%x) <{axis = 1 : i64}> : (tensor<2x8xf32>) -> tensor<2x8xf16>
  return %0 : tensor<2x8xf16>
}

// -----

// Tests that graph.transpose needs a perm attribute.
func.func @transpose_no_perm(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{'graph.transpose' op requires attribute 'perm'}}
  %0 = graph.transpose %x : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// Tests that an unsqueeze's constant axes may not repeat (passes index the output by them).
func.func @unsqueeze_repeated_axes(%x: tensor<2x4xf32>) -> tensor<2x1x1x4xf32> {
  %a = graph.constant dense<[1, 1]> : tensor<2xi64>
  // expected-error @+1 {{'graph.unsqueeze' op axis 1 is given twice}}
  %0 = graph.unsqueeze %x, %a : (tensor<2x4xf32>, tensor<2xi64>) -> tensor<2x1x1x4xf32>
  return %0 : tensor<2x1x1x4xf32>
}

// -----

// Tests that an unsqueeze's constant axes lie in the result's rank.
func.func @unsqueeze_axis_out_of_range(%x: tensor<2x4xf32>) -> tensor<2x4x1xf32> {
  %a = graph.constant dense<[3]> : tensor<1xi64>
  // expected-error @+1 {{'graph.unsqueeze' op axis 3 is out of range for the result's rank 3}}
  %0 = graph.unsqueeze %x, %a : (tensor<2x4xf32>, tensor<1xi64>) -> tensor<2x4x1xf32>
  return %0 : tensor<2x4x1xf32>
}

// -----

// Tests that an unsqueeze adds one dim per axis.
func.func @unsqueeze_rank(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %a = graph.constant dense<[0]> : tensor<1xi64>
  // expected-error @+1 {{'graph.unsqueeze' op result rank 2 is not the input rank 2 plus 1 axes}}
  %0 = graph.unsqueeze %x, %a : (tensor<2x4xf32>, tensor<1xi64>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
