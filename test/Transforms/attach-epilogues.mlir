// RUN: infer-opt --split-input-file --infer-attach-epilogues %s | FileCheck %s

// Tests the residual connection after tiny-llama's o_proj: add(r, linear)
// becomes the linear's residual epilogue.
// CHECK-LABEL: func.func @residual
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x64xf32>, %[[R:.+]]: tensor<?x?x64xf32>)
// CHECK: %[[W:.+]] = graph.weight <o_proj> : tensor<64x64xf32>
// CHECK-NOT: graph.add
// CHECK: %[[Y:.+]] = graph.linear %[[X]], %[[W]] residual(%[[R]]) : (tensor<?x?x64xf32>, tensor<64x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
// CHECK-NEXT: return %[[Y]]
func.func @residual(%x: tensor<?x?x64xf32>, %r: tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
  %w = graph.weight <o_proj> : tensor<64x64xf32>
  %l = graph.linear %x, %w : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
  %y = graph.add %r, %l : (tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}

// -----

// Tests that the bias and the transpose_weight layout are kept when the
// residual is attached (linear on the left of the add).
// CHECK-LABEL: func.func @residual_with_bias
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x256xf32>, %[[R:.+]]: tensor<?x?x64xf32>)
// CHECK-DAG: %[[W:.+]] = graph.weight <down.weight> : tensor<64x256xf32>
// CHECK-DAG: %[[B:.+]] = graph.weight <down.bias> : tensor<64xf32>
// CHECK: %[[Y:.+]] = graph.linear %[[X]], %[[W]] bias(%[[B]]) residual(%[[R]]) {transpose_weight = true} : (tensor<?x?x256xf32>, tensor<64x256xf32>, tensor<64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
// CHECK-NEXT: return %[[Y]]
func.func @residual_with_bias(%x: tensor<?x?x256xf32>, %r: tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
  %w = graph.weight <down.weight> : tensor<64x256xf32>
  %b = graph.weight <down.bias> : tensor<64xf32>
  %l = graph.linear %x, %w bias(%b) {transpose_weight = true} : (tensor<?x?x256xf32>, tensor<64x256xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  %y = graph.add %l, %r : (tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}

// -----

// Tests a residual stream over two sublayers: each add attaches to its
// linear, the second reading the first's result as its residual.
// CHECK-LABEL: func.func @residual_chain
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x64xf32>, %[[H:.+]]: tensor<?x?x160xf32>)
// CHECK: %[[A:.+]] = graph.linear %[[X]], %{{.+}} residual(%[[X]])
// CHECK: %[[B:.+]] = graph.linear %[[H]], %{{.+}} residual(%[[A]])
// CHECK-NOT: graph.add
// CHECK: return %[[B]]
func.func @residual_chain(%x: tensor<?x?x64xf32>, %h: tensor<?x?x160xf32>) -> tensor<?x?x64xf32> {
  %wo = graph.weight <o_proj> : tensor<64x64xf32>
  %wd = graph.weight <down_proj> : tensor<160x64xf32>
  %o = graph.linear %x, %wo : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
  %a = graph.add %x, %o : (tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  %d = graph.linear %h, %wd : (tensor<?x?x160xf32>, tensor<160x64xf32>) -> tensor<?x?x64xf32>
  %b = graph.add %a, %d : (tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  return %b : tensor<?x?x64xf32>
}

// -----

// Tests that a linear whose result has a second use keeps its Add: the
// epilogue would hide the un-added result.
// CHECK-LABEL: func.func @linear_two_uses
// CHECK: %[[L:.+]] = graph.linear %{{.+}}, %{{.+}} : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
// CHECK-NOT: residual
// CHECK: %[[Y:.+]] = graph.add %[[L]], %{{.+}}
// CHECK: return %[[Y]], %[[L]]
func.func @linear_two_uses(%x: tensor<?x?x64xf32>, %r: tensor<?x?x64xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x64xf32>) {
  %w = graph.weight <o_proj> : tensor<64x64xf32>
  %l = graph.linear %x, %w : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
  %y = graph.add %l, %r : (tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  return %y, %l : tensor<?x?x64xf32>, tensor<?x?x64xf32>
}

// -----

// Tests that an addend that broadcasts (a [64] vector, or [?, 1, 64]) is not
// a residual: the residual must have the result's shape.
// CHECK-LABEL: func.func @residual_broadcasts
// CHECK-NOT: residual(
// CHECK: graph.add %{{.+}}, %{{.+}} : (tensor<?x?x64xf32>, tensor<64xf32>)
// CHECK: graph.add %{{.+}}, %{{.+}} : (tensor<?x?x64xf32>, tensor<?x1x64xf32>)
// CHECK-NOT: residual(
func.func @residual_broadcasts(%x: tensor<?x?x64xf32>, %v: tensor<64xf32>, %p: tensor<?x1x64xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x64xf32>) {
  %w = graph.weight <o_proj> : tensor<64x64xf32>
  %l = graph.linear %x, %w : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
  %y = graph.add %l, %v : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  %l2 = graph.linear %x, %w : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
  %z = graph.add %l2, %p : (tensor<?x?x64xf32>, tensor<?x1x64xf32>) -> tensor<?x?x64xf32>
  return %y, %z : tensor<?x?x64xf32>, tensor<?x?x64xf32>
}

// -----

// Tests that a linear that already has a residual does not take a second one.
// CHECK-LABEL: func.func @second_residual
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x64xf32>, %[[R:.+]]: tensor<?x?x64xf32>, %[[S:.+]]: tensor<?x?x64xf32>)
// CHECK: %[[L:.+]] = graph.linear %[[X]], %{{.+}} residual(%[[R]])
// CHECK: %[[Y:.+]] = graph.add %[[L]], %[[S]]
// CHECK: return %[[Y]]
func.func @second_residual(%x: tensor<?x?x64xf32>, %r: tensor<?x?x64xf32>, %s: tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
  %w = graph.weight <o_proj> : tensor<64x64xf32>
  %l = graph.linear %x, %w residual(%r) : (tensor<?x?x64xf32>, tensor<64x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  %y = graph.add %l, %s : (tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}

// -----

// Tests that an add of two values that are not linears is left alone.
// CHECK-LABEL: func.func @no_linear
// CHECK: %[[Y:.+]] = graph.add
// CHECK-NOT: graph.linear
// CHECK: return %[[Y]]
func.func @no_linear(%x: tensor<?x?x64xf32>, %r: tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
  %y = graph.add %x, %r : (tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}
