// RUN: infer-opt --split-input-file %s | infer-opt --split-input-file | FileCheck %s
// RUN: infer-opt --split-input-file --mlir-print-op-generic %s | infer-opt --split-input-file | FileCheck %s

// Tests that graph.constant round-trips with integer, float and bool values.
// CHECK-LABEL: func.func @constant
// CHECK: graph.constant dense<[0, -1]> : tensor<2xi64>
// CHECK: graph.constant dense<1.500000e+00> : tensor<f32>
// CHECK: graph.constant dense<[true, false]> : tensor<2xi1>
func.func @constant() -> (tensor<2xi64>, tensor<f32>, tensor<2xi1>) {
  %0 = graph.constant dense<[0, -1]> : tensor<2xi64>
  %1 = graph.constant dense<1.5> : tensor<f32>
  %2 = graph.constant dense<[true, false]> : tensor<2xi1>
  return %0, %1, %2 : tensor<2xi64>, tensor<f32>, tensor<2xi1>
}

// -----

// Tests that graph.constant_of_shape round-trips with its fill value.
// CHECK-LABEL: func.func @constant_of_shape
// CHECK-SAME: (%[[SHAPE:.+]]: tensor<2xi64>)
// CHECK: graph.constant_of_shape %[[SHAPE]] {value = dense<0.000000e+00> : tensor<1xf32>} : (tensor<2xi64>) -> tensor<?x?xf32>
// CHECK: graph.constant_of_shape %[[SHAPE]] {value = dense<true> : tensor<1xi1>} : (tensor<2xi64>) -> tensor<*xi1>
func.func @constant_of_shape(%shape: tensor<2xi64>) -> (tensor<?x?xf32>, tensor<*xi1>) {
  %0 = graph.constant_of_shape %shape {value = dense<0.0> : tensor<1xf32>} : (tensor<2xi64>) -> tensor<?x?xf32>
  %1 = graph.constant_of_shape %shape {value = dense<true> : tensor<1xi1>} : (tensor<2xi64>) -> tensor<*xi1>
  return %0, %1 : tensor<?x?xf32>, tensor<*xi1>
}

// -----

// Tests that every same-type unary op round-trips, on ranked and unranked tensors.
// CHECK-LABEL: func.func @unary
// CHECK-SAME: (%[[X:.+]]: tensor<?x64xf32>, %[[U:.+]]: tensor<*xf32>)
// CHECK: %[[NEG:.+]] = graph.neg %[[X]] : (tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK: %[[ABS:.+]] = graph.abs %[[NEG]] : (tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK: %[[SQRT:.+]] = graph.sqrt %[[ABS]] : (tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK: %[[RECIP:.+]] = graph.reciprocal %[[SQRT]] : (tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK: %[[EXP:.+]] = graph.exp %[[RECIP]] : (tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK: %[[LOG:.+]] = graph.log %[[EXP]] : (tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK: %[[SIN:.+]] = graph.sin %[[LOG]] : (tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK: %[[COS:.+]] = graph.cos %[[SIN]] : (tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK: %[[TANH:.+]] = graph.tanh %[[COS]] : (tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK: %[[ERF:.+]] = graph.erf %[[TANH]] : (tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK: %[[SIG:.+]] = graph.sigmoid %[[ERF]] : (tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK: %[[RELU:.+]] = graph.relu %[[SIG]] : (tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK: %[[ID:.+]] = graph.identity %[[RELU]] : (tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK: graph.neg %[[U]] : (tensor<*xf32>) -> tensor<*xf32>
func.func @unary(%x: tensor<?x64xf32>, %u: tensor<*xf32>) -> (tensor<?x64xf32>, tensor<*xf32>) {
  %0 = graph.neg %x : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %1 = graph.abs %0 : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %2 = graph.sqrt %1 : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %3 = graph.reciprocal %2 : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %4 = graph.exp %3 : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %5 = graph.log %4 : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %6 = graph.sin %5 : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %7 = graph.cos %6 : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %8 = graph.tanh %7 : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %9 = graph.erf %8 : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %10 = graph.sigmoid %9 : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %11 = graph.relu %10 : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %12 = graph.identity %11 : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %13 = graph.neg %u : (tensor<*xf32>) -> tensor<*xf32>
  return %12, %13 : tensor<?x64xf32>, tensor<*xf32>
}

// -----

// Tests that graph.not and graph.is_nan round-trip with their i1 types.
// CHECK-LABEL: func.func @bool_unary
// CHECK-SAME: (%[[B:.+]]: tensor<4xi1>, %[[X:.+]]: tensor<?xf32>)
// CHECK: graph.not %[[B]] : (tensor<4xi1>) -> tensor<4xi1>
// CHECK: graph.is_nan %[[X]] : (tensor<?xf32>) -> tensor<?xi1>
func.func @bool_unary(%b: tensor<4xi1>, %x: tensor<?xf32>) -> (tensor<4xi1>, tensor<?xi1>) {
  %0 = graph.not %b : (tensor<4xi1>) -> tensor<4xi1>
  %1 = graph.is_nan %x : (tensor<?xf32>) -> tensor<?xi1>
  return %0, %1 : tensor<4xi1>, tensor<?xi1>
}

// -----

// Tests that graph.gelu keeps an explicit "tanh" and elides the default "none".
// CHECK-LABEL: func.func @gelu
// CHECK-SAME: (%[[X:.+]]: tensor<?x64xf32>)
// CHECK: graph.gelu %[[X]] : (tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK: graph.gelu %[[X]] {approximate = "tanh"} : (tensor<?x64xf32>) -> tensor<?x64xf32>
func.func @gelu(%x: tensor<?x64xf32>) -> (tensor<?x64xf32>, tensor<?x64xf32>) {
  %0 = graph.gelu %x {approximate = "none"} : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %1 = graph.gelu %x {approximate = "tanh"} : (tensor<?x64xf32>) -> tensor<?x64xf32>
  return %0, %1 : tensor<?x64xf32>, tensor<?x64xf32>
}

// -----

// Tests that graph.cast round-trips between element types.
// CHECK-LABEL: func.func @cast
// CHECK-SAME: (%[[X:.+]]: tensor<?xi64>)
// CHECK: graph.cast %[[X]] : (tensor<?xi64>) -> tensor<?xf32>
func.func @cast(%x: tensor<?xi64>) -> tensor<?xf32> {
  %0 = graph.cast %x : (tensor<?xi64>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// Tests that graph.clip round-trips with both, either and neither bound.
// CHECK-LABEL: func.func @clip
// CHECK-SAME: (%[[X:.+]]: tensor<?xf32>, %[[LO:.+]]: tensor<f32>, %[[HI:.+]]: tensor<f32>)
// CHECK: graph.clip %[[X]] min(%[[LO]]) max(%[[HI]]) : (tensor<?xf32>, tensor<f32>, tensor<f32>) -> tensor<?xf32>
// CHECK: graph.clip %[[X]] min(%[[LO]]) : (tensor<?xf32>, tensor<f32>) -> tensor<?xf32>
// CHECK: graph.clip %[[X]] max(%[[HI]]) : (tensor<?xf32>, tensor<f32>) -> tensor<?xf32>
// CHECK: graph.clip %[[X]] : (tensor<?xf32>) -> tensor<?xf32>
func.func @clip(%x: tensor<?xf32>, %lo: tensor<f32>, %hi: tensor<f32>)
    -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
  %0 = graph.clip %x min(%lo) max(%hi) : (tensor<?xf32>, tensor<f32>, tensor<f32>) -> tensor<?xf32>
  %1 = graph.clip %x min(%lo) : (tensor<?xf32>, tensor<f32>) -> tensor<?xf32>
  %2 = graph.clip %x max(%hi) : (tensor<?xf32>, tensor<f32>) -> tensor<?xf32>
  %3 = graph.clip %x : (tensor<?xf32>) -> tensor<?xf32>
  return %0, %1, %2, %3 : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
}

// -----

// Tests that every arithmetic binary op round-trips with broadcasting shapes.
// CHECK-LABEL: func.func @arithmetic
// CHECK-SAME: (%[[X:.+]]: tensor<?x64xf32>, %[[Y:.+]]: tensor<64xf32>)
// CHECK: graph.add %[[X]], %[[Y]] : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
// CHECK: graph.sub %[[X]], %[[Y]] : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
// CHECK: graph.mul %[[X]], %[[Y]] : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
// CHECK: graph.div %[[X]], %[[Y]] : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
// CHECK: graph.pow %[[X]], %[[Y]] : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
// CHECK: graph.max %[[X]], %[[Y]] : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
// CHECK: graph.min %[[X]], %[[Y]] : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
func.func @arithmetic(%x: tensor<?x64xf32>, %y: tensor<64xf32>)
    -> (tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>,
        tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>) {
  %0 = graph.add %x, %y : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  %1 = graph.sub %x, %y : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  %2 = graph.mul %x, %y : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  %3 = graph.div %x, %y : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  %4 = graph.pow %x, %y : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  %5 = graph.max %x, %y : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  %6 = graph.min %x, %y : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>,
      tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>
}

// -----

// Tests that graph.pow accepts an exponent of another element type.
// CHECK-LABEL: func.func @pow_mixed
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>, %[[E:.+]]: tensor<i64>)
// CHECK: graph.pow %[[X]], %[[E]] : (tensor<4xf32>, tensor<i64>) -> tensor<4xf32>
func.func @pow_mixed(%x: tensor<4xf32>, %e: tensor<i64>) -> tensor<4xf32> {
  %0 = graph.pow %x, %e : (tensor<4xf32>, tensor<i64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that comparisons produce i1 and that graph.and / graph.or take i1.
// CHECK-LABEL: func.func @compare_and_logic
// CHECK-SAME: (%[[A:.+]]: tensor<?xi64>, %[[B:.+]]: tensor<i64>)
// CHECK: %[[EQ:.+]] = graph.equal %[[A]], %[[B]] : (tensor<?xi64>, tensor<i64>) -> tensor<?xi1>
// CHECK: %[[LT:.+]] = graph.less %[[A]], %[[B]] : (tensor<?xi64>, tensor<i64>) -> tensor<?xi1>
// CHECK: %[[LE:.+]] = graph.less_or_equal %[[A]], %[[B]] : (tensor<?xi64>, tensor<i64>) -> tensor<?xi1>
// CHECK: %[[GT:.+]] = graph.greater %[[A]], %[[B]] : (tensor<?xi64>, tensor<i64>) -> tensor<?xi1>
// CHECK: %[[GE:.+]] = graph.greater_or_equal %[[A]], %[[B]] : (tensor<?xi64>, tensor<i64>) -> tensor<?xi1>
// CHECK: %[[AND:.+]] = graph.and %[[EQ]], %[[LT]] : (tensor<?xi1>, tensor<?xi1>) -> tensor<?xi1>
// CHECK: graph.or %[[AND]], %[[GE]] : (tensor<?xi1>, tensor<?xi1>) -> tensor<?xi1>
func.func @compare_and_logic(%a: tensor<?xi64>, %b: tensor<i64>) -> (tensor<?xi1>, tensor<?xi1>, tensor<?xi1>) {
  %0 = graph.equal %a, %b : (tensor<?xi64>, tensor<i64>) -> tensor<?xi1>
  %1 = graph.less %a, %b : (tensor<?xi64>, tensor<i64>) -> tensor<?xi1>
  %2 = graph.less_or_equal %a, %b : (tensor<?xi64>, tensor<i64>) -> tensor<?xi1>
  %3 = graph.greater %a, %b : (tensor<?xi64>, tensor<i64>) -> tensor<?xi1>
  %4 = graph.greater_or_equal %a, %b : (tensor<?xi64>, tensor<i64>) -> tensor<?xi1>
  %5 = graph.and %0, %1 : (tensor<?xi1>, tensor<?xi1>) -> tensor<?xi1>
  %6 = graph.or %5, %4 : (tensor<?xi1>, tensor<?xi1>) -> tensor<?xi1>
  return %2, %3, %6 : tensor<?xi1>, tensor<?xi1>, tensor<?xi1>
}

// -----

// Tests that graph.where round-trips with a broadcast scalar branch.
// CHECK-LABEL: func.func @where
// CHECK-SAME: (%[[C:.+]]: tensor<?x?xi1>, %[[X:.+]]: tensor<f32>, %[[Y:.+]]: tensor<?x?xf32>)
// CHECK: graph.where %[[C]], %[[X]], %[[Y]] : (tensor<?x?xi1>, tensor<f32>, tensor<?x?xf32>) -> tensor<?x?xf32>
func.func @where(%c: tensor<?x?xi1>, %x: tensor<f32>, %y: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = graph.where %c, %x, %y : (tensor<?x?xi1>, tensor<f32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// Tests that graph.shape round-trips with the default start, a start and an end.
// CHECK-LABEL: func.func @shape
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x8xf32>)
// CHECK: graph.shape %[[X]] : (tensor<?x?x8xf32>) -> tensor<3xi64>
// CHECK: graph.shape %[[X]] {end = -1 : i64, start = 1 : i64} : (tensor<?x?x8xf32>) -> tensor<1xi64>
func.func @shape(%x: tensor<?x?x8xf32>) -> (tensor<3xi64>, tensor<1xi64>) {
  %0 = graph.shape %x {start = 0 : i64} : (tensor<?x?x8xf32>) -> tensor<3xi64>
  %1 = graph.shape %x {start = 1 : i64, end = -1 : i64} : (tensor<?x?x8xf32>) -> tensor<1xi64>
  return %0, %1 : tensor<3xi64>, tensor<1xi64>
}

// -----

// Tests that graph.reshape round-trips with and without allowzero.
// CHECK-LABEL: func.func @reshape
// CHECK-SAME: (%[[X:.+]]: tensor<?x64xf32>, %[[S:.+]]: tensor<3xi64>)
// CHECK: graph.reshape %[[X]], %[[S]] : (tensor<?x64xf32>, tensor<3xi64>) -> tensor<?x4x16xf32>
// CHECK: graph.reshape %[[X]], %[[S]] {allowzero = true} : (tensor<?x64xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
func.func @reshape(%x: tensor<?x64xf32>, %s: tensor<3xi64>) -> (tensor<?x4x16xf32>, tensor<?x?x?xf32>) {
  %0 = graph.reshape %x, %s : (tensor<?x64xf32>, tensor<3xi64>) -> tensor<?x4x16xf32>
  %1 = graph.reshape %x, %s {allowzero = true} : (tensor<?x64xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
  return %0, %1 : tensor<?x4x16xf32>, tensor<?x?x?xf32>
}

// -----

// Tests that graph.expand and graph.tile round-trip.
// CHECK-LABEL: func.func @expand_tile
// CHECK-SAME: (%[[X:.+]]: tensor<1x?xf32>, %[[S:.+]]: tensor<2xi64>)
// CHECK: graph.expand %[[X]], %[[S]] : (tensor<1x?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
// CHECK: graph.tile %[[X]], %[[S]] : (tensor<1x?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
func.func @expand_tile(%x: tensor<1x?xf32>, %s: tensor<2xi64>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %0 = graph.expand %x, %s : (tensor<1x?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %1 = graph.tile %x, %s : (tensor<1x?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %0, %1 : tensor<?x?xf32>, tensor<?x?xf32>
}

// -----

// Tests that graph.flatten elides its default axis and keeps another one.
// CHECK-LABEL: func.func @flatten
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>)
// CHECK: graph.flatten %[[X]] : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
// CHECK: graph.flatten %[[X]] {axis = 2 : i64} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
func.func @flatten(%x: tensor<2x3x4xf32>) -> (tensor<2x12xf32>, tensor<6x4xf32>) {
  %0 = graph.flatten %x {axis = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
  %1 = graph.flatten %x {axis = 2 : i64} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  return %0, %1 : tensor<2x12xf32>, tensor<6x4xf32>
}

// -----

// Tests that graph.squeeze round-trips with and without axes, and graph.unsqueeze with axes.
// CHECK-LABEL: func.func @squeeze_unsqueeze
// CHECK-SAME: (%[[X:.+]]: tensor<1x?xf32>, %[[A:.+]]: tensor<1xi64>)
// CHECK: %[[SQ:.+]] = graph.squeeze %[[X]] axes(%[[A]]) : (tensor<1x?xf32>, tensor<1xi64>) -> tensor<?xf32>
// CHECK: graph.squeeze %[[X]] : (tensor<1x?xf32>) -> tensor<*xf32>
// CHECK: graph.unsqueeze %[[SQ]], %[[A]] : (tensor<?xf32>, tensor<1xi64>) -> tensor<1x?xf32>
func.func @squeeze_unsqueeze(%x: tensor<1x?xf32>, %a: tensor<1xi64>) -> (tensor<*xf32>, tensor<1x?xf32>) {
  %0 = graph.squeeze %x axes(%a) : (tensor<1x?xf32>, tensor<1xi64>) -> tensor<?xf32>
  %1 = graph.squeeze %x : (tensor<1x?xf32>) -> tensor<*xf32>
  %2 = graph.unsqueeze %0, %a : (tensor<?xf32>, tensor<1xi64>) -> tensor<1x?xf32>
  return %1, %2 : tensor<*xf32>, tensor<1x?xf32>
}

// -----

// Tests that graph.transpose round-trips its permutation.
// CHECK-LABEL: func.func @transpose
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>)
// CHECK: graph.transpose %[[X]] {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
func.func @transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = graph.transpose %x {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  return %0 : tensor<4x2x3xf32>
}

// -----

// Tests that graph.concat round-trips with one and with three inputs.
// CHECK-LABEL: func.func @concat
// CHECK-SAME: (%[[A:.+]]: tensor<1xi64>, %[[B:.+]]: tensor<2xi64>)
// CHECK: graph.concat %[[A]], %[[B]], %[[A]] {axis = 0 : i64} : (tensor<1xi64>, tensor<2xi64>, tensor<1xi64>) -> tensor<4xi64>
// CHECK: graph.concat %[[B]] {axis = 0 : i64} : (tensor<2xi64>) -> tensor<2xi64>
func.func @concat(%a: tensor<1xi64>, %b: tensor<2xi64>) -> (tensor<4xi64>, tensor<2xi64>) {
  %0 = graph.concat %a, %b, %a {axis = 0 : i64} : (tensor<1xi64>, tensor<2xi64>, tensor<1xi64>) -> tensor<4xi64>
  %1 = graph.concat %b {axis = 0 : i64} : (tensor<2xi64>) -> tensor<2xi64>
  return %0, %1 : tensor<4xi64>, tensor<2xi64>
}

// -----

// Tests that graph.split round-trips with sizes and several results, and without sizes.
// CHECK-LABEL: func.func @split
// CHECK-SAME: (%[[X:.+]]: tensor<?x8xf32>, %[[S:.+]]: tensor<3xi64>)
// CHECK: %[[P:.+]]:3 = graph.split %[[X]] split(%[[S]]) {axis = 1 : i64} : (tensor<?x8xf32>, tensor<3xi64>) -> (tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x4xf32>)
// CHECK: %[[Q:.+]]:2 = graph.split %[[X]] {axis = 1 : i64} : (tensor<?x8xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>)
// CHECK: return %[[P]]#0, %[[P]]#1, %[[P]]#2, %[[Q]]#0, %[[Q]]#1
func.func @split(%x: tensor<?x8xf32>, %s: tensor<3xi64>)
    -> (tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) {
  %a, %b, %c = graph.split %x split(%s) {axis = 1 : i64}
      : (tensor<?x8xf32>, tensor<3xi64>) -> (tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x4xf32>)
  %d:2 = graph.split %x {axis = 1 : i64} : (tensor<?x8xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>)
  return %a, %b, %c, %d#0, %d#1 : tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

// Tests that graph.slice round-trips with i64 and i32 index operands.
// CHECK-LABEL: func.func @slice
// CHECK-SAME: (%[[X:.+]]: tensor<?x?xf32>, %[[I:.+]]: tensor<1xi64>, %[[J:.+]]: tensor<1xi32>)
// CHECK: graph.slice %[[X]], %[[I]], %[[I]], %[[I]], %[[I]] : (tensor<?x?xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?xf32>
// CHECK: graph.slice %[[X]], %[[J]], %[[J]], %[[J]], %[[J]] : (tensor<?x?xf32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<?x?xf32>
func.func @slice(%x: tensor<?x?xf32>, %i: tensor<1xi64>, %j: tensor<1xi32>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %0 = graph.slice %x, %i, %i, %i, %i
      : (tensor<?x?xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?xf32>
  %1 = graph.slice %x, %j, %j, %j, %j
      : (tensor<?x?xf32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<?x?xf32>
  return %0, %1 : tensor<?x?xf32>, tensor<?x?xf32>
}

// -----

// Tests that graph.gather and graph.gather_nd round-trip.
// CHECK-LABEL: func.func @gather
// CHECK-SAME: (%[[T:.+]]: tensor<512x64xf32>, %[[IDS:.+]]: tensor<?x?xi64>, %[[X:.+]]: tensor<?x?xf32>, %[[IDX:.+]]: tensor<?x1xi64>)
// CHECK: graph.gather %[[T]], %[[IDS]] {axis = 0 : i64} : (tensor<512x64xf32>, tensor<?x?xi64>) -> tensor<?x?x64xf32>
// CHECK: graph.gather_nd %[[X]], %[[IDX]] : (tensor<?x?xf32>, tensor<?x1xi64>) -> tensor<?x?xf32>
// CHECK: graph.gather_nd %[[X]], %[[IDX]] {batch_dims = 1 : i64} : (tensor<?x?xf32>, tensor<?x1xi64>) -> tensor<?xf32>
func.func @gather(%t: tensor<512x64xf32>, %ids: tensor<?x?xi64>, %x: tensor<?x?xf32>, %idx: tensor<?x1xi64>)
    -> (tensor<?x?x64xf32>, tensor<?x?xf32>, tensor<?xf32>) {
  %0 = graph.gather %t, %ids {axis = 0 : i64} : (tensor<512x64xf32>, tensor<?x?xi64>) -> tensor<?x?x64xf32>
  %1 = graph.gather_nd %x, %idx {batch_dims = 0 : i64} : (tensor<?x?xf32>, tensor<?x1xi64>) -> tensor<?x?xf32>
  %2 = graph.gather_nd %x, %idx {batch_dims = 1 : i64} : (tensor<?x?xf32>, tensor<?x1xi64>) -> tensor<?xf32>
  return %0, %1, %2 : tensor<?x?x64xf32>, tensor<?x?xf32>, tensor<?xf32>
}

// -----

// Tests that graph.range round-trips over scalars.
// CHECK-LABEL: func.func @range
// CHECK-SAME: (%[[S:.+]]: tensor<i64>, %[[L:.+]]: tensor<i64>, %[[D:.+]]: tensor<i64>)
// CHECK: graph.range %[[S]], %[[L]], %[[D]] : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
func.func @range(%s: tensor<i64>, %l: tensor<i64>, %d: tensor<i64>) -> tensor<?xi64> {
  %0 = graph.range %s, %l, %d : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  return %0 : tensor<?xi64>
}

// -----

// Tests that graph.trilu round-trips with and without k, upper and lower.
// CHECK-LABEL: func.func @trilu
// CHECK-SAME: (%[[X:.+]]: tensor<?x?xf32>, %[[K:.+]]: tensor<i64>)
// CHECK: graph.trilu %[[X]] k(%[[K]]) : (tensor<?x?xf32>, tensor<i64>) -> tensor<?x?xf32>
// CHECK: graph.trilu %[[X]] {upper = false} : (tensor<?x?xf32>) -> tensor<?x?xf32>
func.func @trilu(%x: tensor<?x?xf32>, %k: tensor<i64>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %0 = graph.trilu %x k(%k) {upper = true} : (tensor<?x?xf32>, tensor<i64>) -> tensor<?x?xf32>
  %1 = graph.trilu %x {upper = false} : (tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0, %1 : tensor<?x?xf32>, tensor<?x?xf32>
}

// -----

// Tests that the reductions round-trip without axes, with default and non-default flags.
// CHECK-LABEL: func.func @reduce
// CHECK-SAME: (%[[X:.+]]: tensor<?x64xf32>)
// CHECK: graph.reduce_mean %[[X]] : (tensor<?x64xf32>) -> tensor<1x1xf32>
// CHECK: graph.reduce_sum %[[X]] {keepdims = false} : (tensor<?x64xf32>) -> tensor<f32>
// CHECK: graph.reduce_max %[[X]] {noop_with_empty_axes = true} : (tensor<?x64xf32>) -> tensor<?x64xf32>
func.func @reduce(%x: tensor<?x64xf32>) -> (tensor<1x1xf32>, tensor<f32>, tensor<?x64xf32>) {
  %0 = graph.reduce_mean %x {keepdims = true} : (tensor<?x64xf32>) -> tensor<1x1xf32>
  %1 = graph.reduce_sum %x {keepdims = false} : (tensor<?x64xf32>) -> tensor<f32>
  %2 = graph.reduce_max %x {noop_with_empty_axes = true} : (tensor<?x64xf32>) -> tensor<?x64xf32>
  return %0, %1, %2 : tensor<1x1xf32>, tensor<f32>, tensor<?x64xf32>
}

// -----

// Tests that graph.softmax round-trips with its single-type syntax.
// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:.+]]: tensor<?x4x?x?xf32>)
// CHECK: graph.softmax %[[X]] {axis = 3 : i64} : tensor<?x4x?x?xf32>
func.func @softmax(%x: tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32> {
  %0 = graph.softmax %x {axis = 3 : i64} : tensor<?x4x?x?xf32>
  return %0 : tensor<?x4x?x?xf32>
}

// -----

// Tests that graph.layer_normalization round-trips with and without a bias.
// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x64xf32>, %[[S:.+]]: tensor<64xf32>, %[[B:.+]]: tensor<64xf32>)
// CHECK: graph.layer_normalization %[[X]], %[[S]] bias(%[[B]]) {axis = 2 : i64} : (tensor<?x?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
// CHECK: graph.layer_normalization %[[X]], %[[S]] {axis = 2 : i64, epsilon = 9.99999997E-7 : f32} : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
func.func @layer_norm(%x: tensor<?x?x64xf32>, %s: tensor<64xf32>, %b: tensor<64xf32>)
    -> (tensor<?x?x64xf32>, tensor<?x?x64xf32>) {
  %0 = graph.layer_normalization %x, %s bias(%b) {axis = 2 : i64}
      : (tensor<?x?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  %1 = graph.layer_normalization %x, %s {axis = 2 : i64, epsilon = 1.0e-6 : f32}
      : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  return %0, %1 : tensor<?x?x64xf32>, tensor<?x?x64xf32>
}

// -----

// Tests that graph.cumsum round-trips with its flags.
// CHECK-LABEL: func.func @cumsum
// CHECK-SAME: (%[[X:.+]]: tensor<?x?xi64>, %[[A:.+]]: tensor<i64>)
// CHECK: graph.cumsum %[[X]], %[[A]] : (tensor<?x?xi64>, tensor<i64>) -> tensor<?x?xi64>
// CHECK: graph.cumsum %[[X]], %[[A]] {exclusive = true, reverse = true} : (tensor<?x?xi64>, tensor<i64>) -> tensor<?x?xi64>
func.func @cumsum(%x: tensor<?x?xi64>, %a: tensor<i64>) -> (tensor<?x?xi64>, tensor<?x?xi64>) {
  %0 = graph.cumsum %x, %a {exclusive = false, reverse = false} : (tensor<?x?xi64>, tensor<i64>) -> tensor<?x?xi64>
  %1 = graph.cumsum %x, %a {exclusive = true, reverse = true} : (tensor<?x?xi64>, tensor<i64>) -> tensor<?x?xi64>
  return %0, %1 : tensor<?x?xi64>, tensor<?x?xi64>
}

// -----

// Tests that graph.matmul round-trips with batched and 1-D operands.
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x64xf32>, %[[W:.+]]: tensor<64x192xf32>, %[[V:.+]]: tensor<64xf32>)
// CHECK: graph.matmul %[[X]], %[[W]] : (tensor<?x?x64xf32>, tensor<64x192xf32>) -> tensor<?x?x192xf32>
// CHECK: graph.matmul %[[X]], %[[V]] : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?xf32>
func.func @matmul(%x: tensor<?x?x64xf32>, %w: tensor<64x192xf32>, %v: tensor<64xf32>)
    -> (tensor<?x?x192xf32>, tensor<?x?xf32>) {
  %0 = graph.matmul %x, %w : (tensor<?x?x64xf32>, tensor<64x192xf32>) -> tensor<?x?x192xf32>
  %1 = graph.matmul %x, %v : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?xf32>
  return %0, %1 : tensor<?x?x192xf32>, tensor<?x?xf32>
}

// -----

// Tests that graph.gemm round-trips with and without C and with non-default attributes.
// CHECK-LABEL: func.func @gemm
// CHECK-SAME: (%[[A:.+]]: tensor<?x64xf32>, %[[B:.+]]: tensor<192x64xf32>, %[[C:.+]]: tensor<192xf32>)
// CHECK: graph.gemm %[[A]], %[[B]], %[[C]] {transB = true} : (tensor<?x64xf32>, tensor<192x64xf32>, tensor<192xf32>) -> tensor<?x192xf32>
// CHECK: graph.gemm %[[A]], %[[B]] {alpha = 5.000000e-01 : f32, beta = 0.000000e+00 : f32, transB = true} : (tensor<?x64xf32>, tensor<192x64xf32>) -> tensor<?x192xf32>
func.func @gemm(%a: tensor<?x64xf32>, %b: tensor<192x64xf32>, %c: tensor<192xf32>) -> (tensor<?x192xf32>, tensor<?x192xf32>) {
  %0 = graph.gemm %a, %b, %c {transB = true} : (tensor<?x64xf32>, tensor<192x64xf32>, tensor<192xf32>) -> tensor<?x192xf32>
  %1 = graph.gemm %a, %b {alpha = 0.5 : f32, beta = 0.0 : f32, transA = false, transB = true}
      : (tensor<?x64xf32>, tensor<192x64xf32>) -> tensor<?x192xf32>
  return %0, %1 : tensor<?x192xf32>, tensor<?x192xf32>
}

// -----

// Tests that graph.einsum round-trips with two inputs and with one.
// CHECK-LABEL: func.func @einsum
// CHECK-SAME: (%[[A:.+]]: tensor<?x?x?xf32>, %[[B:.+]]: tensor<?x?x?xf32>)
// CHECK: graph.einsum %[[A]], %[[B]] {equation = "bij,bjk->bik"} : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
// CHECK: graph.einsum %[[A]] {equation = "bij->bji"} : (tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
func.func @einsum(%a: tensor<?x?x?xf32>, %b: tensor<?x?x?xf32>) -> (tensor<?x?x?xf32>, tensor<?x?x?xf32>) {
  %0 = graph.einsum %a, %b {equation = "bij,bjk->bik"} : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %1 = graph.einsum %a {equation = "bij->bji"} : (tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  return %0, %1 : tensor<?x?x?xf32>, tensor<?x?x?xf32>
}
