// RUN: infer-opt --split-input-file --infer-raise-mlp %s | FileCheck %s

// Tests the SwiGLU middle of tiny-llama's MLP: (g * sigmoid(g)) * u becomes
// gated_activation(g, u) with activation "silu".
// CHECK-LABEL: func.func @silu_gate
// CHECK-SAME: (%[[G:.+]]: tensor<?x?x160xf32>, %[[U:.+]]: tensor<?x?x160xf32>)
// CHECK: %[[Y:.+]] = graph.gated_activation %[[G]], %[[U]] {activation = "silu"} : (tensor<?x?x160xf32>, tensor<?x?x160xf32>) -> tensor<?x?x160xf32>
// CHECK-NEXT: return %[[Y]]
func.func @silu_gate(%g: tensor<?x?x160xf32>, %u: tensor<?x?x160xf32>) -> tensor<?x?x160xf32> {
  %s = graph.sigmoid %g : (tensor<?x?x160xf32>) -> tensor<?x?x160xf32>
  %a = graph.mul %g, %s : (tensor<?x?x160xf32>, tensor<?x?x160xf32>) -> tensor<?x?x160xf32>
  %y = graph.mul %a, %u : (tensor<?x?x160xf32>, tensor<?x?x160xf32>) -> tensor<?x?x160xf32>
  return %y : tensor<?x?x160xf32>
}

// -----

// Tests the mirrored operand orders: sigmoid(g) * g, and up on the left.
// CHECK-LABEL: func.func @silu_gate_commuted
// CHECK-SAME: (%[[G:.+]]: tensor<?x?x160xf32>, %[[U:.+]]: tensor<?x?x160xf32>)
// CHECK: %[[Y:.+]] = graph.gated_activation %[[G]], %[[U]] {activation = "silu"}
// CHECK-NEXT: return %[[Y]]
func.func @silu_gate_commuted(%g: tensor<?x?x160xf32>, %u: tensor<?x?x160xf32>) -> tensor<?x?x160xf32> {
  %s = graph.sigmoid %g : (tensor<?x?x160xf32>) -> tensor<?x?x160xf32>
  %a = graph.mul %s, %g : (tensor<?x?x160xf32>, tensor<?x?x160xf32>) -> tensor<?x?x160xf32>
  %y = graph.mul %u, %a : (tensor<?x?x160xf32>, tensor<?x?x160xf32>) -> tensor<?x?x160xf32>
  return %y : tensor<?x?x160xf32>
}

// -----

// Tests GeGLU: gelu(g) * u with the erf GELU becomes activation "gelu".
// CHECK-LABEL: func.func @gelu_gate
// CHECK-SAME: (%[[G:.+]]: tensor<?x?x160xf32>, %[[U:.+]]: tensor<?x?x160xf32>)
// CHECK: %[[Y:.+]] = graph.gated_activation %[[G]], %[[U]] {activation = "gelu"}
// CHECK-NEXT: return %[[Y]]
func.func @gelu_gate(%g: tensor<?x?x160xf32>, %u: tensor<?x?x160xf32>) -> tensor<?x?x160xf32> {
  %a = graph.gelu %g : (tensor<?x?x160xf32>) -> tensor<?x?x160xf32>
  %y = graph.mul %a, %u : (tensor<?x?x160xf32>, tensor<?x?x160xf32>) -> tensor<?x?x160xf32>
  return %y : tensor<?x?x160xf32>
}

// -----

// Tests Gemma's gate: gelu_tanh(g) * u becomes activation "gelu_tanh".
// CHECK-LABEL: func.func @gelu_tanh_gate
// CHECK-SAME: (%[[G:.+]]: tensor<?x?x160xf32>, %[[U:.+]]: tensor<?x?x160xf32>)
// CHECK: %[[Y:.+]] = graph.gated_activation %[[G]], %[[U]] {activation = "gelu_tanh"}
// CHECK-NEXT: return %[[Y]]
func.func @gelu_tanh_gate(%g: tensor<?x?x160xf32>, %u: tensor<?x?x160xf32>) -> tensor<?x?x160xf32> {
  %a = graph.gelu %g {approximate = "tanh"} : (tensor<?x?x160xf32>) -> tensor<?x?x160xf32>
  %y = graph.mul %u, %a : (tensor<?x?x160xf32>, tensor<?x?x160xf32>) -> tensor<?x?x160xf32>
  return %y : tensor<?x?x160xf32>
}

// -----

// Tests the tanh GELU as tiny-gpt2's export writes it,
// (0.5 * x) * (tanh(sqrt(2/pi) * (x + 0.044715 * x^3)) + 1), becomes
// graph.gelu {approximate = "tanh"}.
// CHECK-LABEL: func.func @decomposed_gelu_tanh
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x256xf32>)
// CHECK: %[[Y:.+]] = graph.gelu %[[X]] {approximate = "tanh"} : (tensor<?x?x256xf32>) -> tensor<?x?x256xf32>
// CHECK-NEXT: return %[[Y]]
func.func @decomposed_gelu_tanh(%x: tensor<?x?x256xf32>) -> tensor<?x?x256xf32> {
  %half = graph.constant dense<5.000000e-01> : tensor<f32>
  %three = graph.constant dense<3.000000e+00> : tensor<f32>
  %c = graph.constant dense<4.471500e-02> : tensor<f32>
  %k = graph.constant dense<0.797884583> : tensor<f32>
  %one = graph.constant dense<1.000000e+00> : tensor<f32>
  %h = graph.mul %x, %half : (tensor<?x?x256xf32>, tensor<f32>) -> tensor<?x?x256xf32>
  %p = graph.pow %x, %three : (tensor<?x?x256xf32>, tensor<f32>) -> tensor<?x?x256xf32>
  %pc = graph.mul %p, %c : (tensor<?x?x256xf32>, tensor<f32>) -> tensor<?x?x256xf32>
  %s = graph.add %x, %pc : (tensor<?x?x256xf32>, tensor<?x?x256xf32>) -> tensor<?x?x256xf32>
  %sk = graph.mul %s, %k : (tensor<?x?x256xf32>, tensor<f32>) -> tensor<?x?x256xf32>
  %t = graph.tanh %sk : (tensor<?x?x256xf32>) -> tensor<?x?x256xf32>
  %a = graph.add %t, %one : (tensor<?x?x256xf32>, tensor<f32>) -> tensor<?x?x256xf32>
  %y = graph.mul %h, %a : (tensor<?x?x256xf32>, tensor<?x?x256xf32>) -> tensor<?x?x256xf32>
  return %y : tensor<?x?x256xf32>
}

// -----

// Tests the erf GELU, (0.5 * x) * (1 + erf(x / sqrt(2))), becomes graph.gelu
// (approximate "none", the default, not printed).
// CHECK-LABEL: func.func @decomposed_gelu_erf_div
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x256xf32>)
// CHECK: %[[Y:.+]] = graph.gelu %[[X]] : (tensor<?x?x256xf32>) -> tensor<?x?x256xf32>
// CHECK-NEXT: return %[[Y]]
func.func @decomposed_gelu_erf_div(%x: tensor<?x?x256xf32>) -> tensor<?x?x256xf32> {
  %half = graph.constant dense<5.000000e-01> : tensor<f32>
  %sqrt2 = graph.constant dense<1.41421354> : tensor<f32>
  %one = graph.constant dense<1.000000e+00> : tensor<f32>
  %h = graph.mul %half, %x : (tensor<f32>, tensor<?x?x256xf32>) -> tensor<?x?x256xf32>
  %d = graph.div %x, %sqrt2 : (tensor<?x?x256xf32>, tensor<f32>) -> tensor<?x?x256xf32>
  %e = graph.erf %d : (tensor<?x?x256xf32>) -> tensor<?x?x256xf32>
  %a = graph.add %one, %e : (tensor<f32>, tensor<?x?x256xf32>) -> tensor<?x?x256xf32>
  %y = graph.mul %h, %a : (tensor<?x?x256xf32>, tensor<?x?x256xf32>) -> tensor<?x?x256xf32>
  return %y : tensor<?x?x256xf32>
}

// -----

// Tests the erf GELU with x * (1/sqrt(2)) instead of the Div.
// CHECK-LABEL: func.func @decomposed_gelu_erf_mul
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x256xf32>)
// CHECK: %[[Y:.+]] = graph.gelu %[[X]] : (tensor<?x?x256xf32>) -> tensor<?x?x256xf32>
// CHECK-NEXT: return %[[Y]]
func.func @decomposed_gelu_erf_mul(%x: tensor<?x?x256xf32>) -> tensor<?x?x256xf32> {
  %half = graph.constant dense<5.000000e-01> : tensor<f32>
  %rsqrt2 = graph.constant dense<0.707106769> : tensor<f32>
  %one = graph.constant dense<1.000000e+00> : tensor<f32>
  %h = graph.mul %x, %half : (tensor<?x?x256xf32>, tensor<f32>) -> tensor<?x?x256xf32>
  %d = graph.mul %x, %rsqrt2 : (tensor<?x?x256xf32>, tensor<f32>) -> tensor<?x?x256xf32>
  %e = graph.erf %d : (tensor<?x?x256xf32>) -> tensor<?x?x256xf32>
  %a = graph.add %e, %one : (tensor<?x?x256xf32>, tensor<f32>) -> tensor<?x?x256xf32>
  %y = graph.mul %a, %h : (tensor<?x?x256xf32>, tensor<?x?x256xf32>) -> tensor<?x?x256xf32>
  return %y : tensor<?x?x256xf32>
}

// -----

// Tests that a decomposed GELU feeding a gate is raised all the way:
// graph.gelu first, then the gated activation over it.
// CHECK-LABEL: func.func @decomposed_gelu_gate
// CHECK-SAME: (%[[G:.+]]: tensor<?x?x160xf32>, %[[U:.+]]: tensor<?x?x160xf32>)
// CHECK: %[[Y:.+]] = graph.gated_activation %[[G]], %[[U]] {activation = "gelu"}
// CHECK-NEXT: return %[[Y]]
func.func @decomposed_gelu_gate(%g: tensor<?x?x160xf32>, %u: tensor<?x?x160xf32>) -> tensor<?x?x160xf32> {
  %half = graph.constant dense<5.000000e-01> : tensor<f32>
  %sqrt2 = graph.constant dense<1.41421354> : tensor<f32>
  %one = graph.constant dense<1.000000e+00> : tensor<f32>
  %h = graph.mul %g, %half : (tensor<?x?x160xf32>, tensor<f32>) -> tensor<?x?x160xf32>
  %d = graph.div %g, %sqrt2 : (tensor<?x?x160xf32>, tensor<f32>) -> tensor<?x?x160xf32>
  %e = graph.erf %d : (tensor<?x?x160xf32>) -> tensor<?x?x160xf32>
  %a = graph.add %e, %one : (tensor<?x?x160xf32>, tensor<f32>) -> tensor<?x?x160xf32>
  %act = graph.mul %h, %a : (tensor<?x?x160xf32>, tensor<?x?x160xf32>) -> tensor<?x?x160xf32>
  %y = graph.mul %act, %u : (tensor<?x?x160xf32>, tensor<?x?x160xf32>) -> tensor<?x?x160xf32>
  return %y : tensor<?x?x160xf32>
}

// -----

// Tests that a Gather of rows of the embedding table by the model's input ids
// becomes graph.embedding.
// CHECK-LABEL: func.func @embedding
// CHECK-SAME: (%[[IDS:.+]]: tensor<?x?xi64>
// CHECK: %[[T:.+]] = graph.weight <embed_tokens.weight> : tensor<512x64xf32>
// CHECK: %[[E:.+]] = graph.embedding %[[T]], %[[IDS]] : (tensor<512x64xf32>, tensor<?x?xi64>) -> tensor<?x?x64xf32>
// CHECK-NEXT: return %[[E]]
func.func @embedding(%ids: tensor<?x?xi64> {graph.dims = ["batch", "seq"], graph.name = "input_ids"}) -> tensor<?x?x64xf32> {
  %t = graph.weight <embed_tokens.weight> : tensor<512x64xf32>
  %e = graph.gather %t, %ids {axis = 0 : i64} : (tensor<512x64xf32>, tensor<?x?xi64>) -> tensor<?x?x64xf32>
  return %e : tensor<?x?x64xf32>
}

// -----

// Tests that ids reshaped from the input (no arithmetic) still count as token
// ids.
// CHECK-LABEL: func.func @embedding_reshaped_ids
// CHECK: %[[R:.+]] = graph.reshape
// CHECK: %[[E:.+]] = graph.embedding %{{.+}}, %[[R]] : (tensor<512x64xf32>, tensor<?xi64>) -> tensor<?x64xf32>
// CHECK-NEXT: return %[[E]]
func.func @embedding_reshaped_ids(%ids: tensor<?x?xi64>) -> tensor<?x64xf32> {
  %t = graph.weight <embed_tokens.weight> : tensor<512x64xf32>
  %flat = graph.constant dense<-1> : tensor<1xi64>
  %r = graph.reshape %ids, %flat : (tensor<?x?xi64>, tensor<1xi64>) -> tensor<?xi64>
  %e = graph.gather %t, %r {axis = 0 : i64} : (tensor<512x64xf32>, tensor<?xi64>) -> tensor<?x64xf32>
  return %e : tensor<?x64xf32>
}

// -----

// Tests that x * silu(x) (Swish squared, the gate multiplied by itself) is not
// a gated activation: there is no separate up projection.
// CHECK-LABEL: func.func @silu_times_self
// CHECK-NOT: graph.gated_activation
// CHECK: graph.sigmoid
// CHECK-NOT: graph.gated_activation
// CHECK: return
func.func @silu_times_self(%x: tensor<?x?x160xf32>) -> tensor<?x?x160xf32> {
  %s = graph.sigmoid %x : (tensor<?x?x160xf32>) -> tensor<?x?x160xf32>
  %a = graph.mul %x, %s : (tensor<?x?x160xf32>, tensor<?x?x160xf32>) -> tensor<?x?x160xf32>
  %y = graph.mul %x, %a : (tensor<?x?x160xf32>, tensor<?x?x160xf32>) -> tensor<?x?x160xf32>
  return %y : tensor<?x?x160xf32>
}

// -----

// Tests that g * sigmoid(h) with h != g is not silu, so not gated.
// CHECK-LABEL: func.func @sigmoid_of_other
// CHECK-NOT: graph.gated_activation
// CHECK: return
func.func @sigmoid_of_other(%g: tensor<?x?x160xf32>, %h: tensor<?x?x160xf32>, %u: tensor<?x?x160xf32>) -> tensor<?x?x160xf32> {
  %s = graph.sigmoid %h : (tensor<?x?x160xf32>) -> tensor<?x?x160xf32>
  %a = graph.mul %g, %s : (tensor<?x?x160xf32>, tensor<?x?x160xf32>) -> tensor<?x?x160xf32>
  %y = graph.mul %a, %u : (tensor<?x?x160xf32>, tensor<?x?x160xf32>) -> tensor<?x?x160xf32>
  return %y : tensor<?x?x160xf32>
}

// -----

// Tests that an up operand that broadcasts (a [160] vector, not the gate's
// shape) is not gated.
// CHECK-LABEL: func.func @up_broadcasts
// CHECK-NOT: graph.gated_activation
// CHECK: return
func.func @up_broadcasts(%g: tensor<?x?x160xf32>, %u: tensor<160xf32>) -> tensor<?x?x160xf32> {
  %s = graph.sigmoid %g : (tensor<?x?x160xf32>) -> tensor<?x?x160xf32>
  %a = graph.mul %g, %s : (tensor<?x?x160xf32>, tensor<?x?x160xf32>) -> tensor<?x?x160xf32>
  %y = graph.mul %a, %u : (tensor<?x?x160xf32>, tensor<160xf32>) -> tensor<?x?x160xf32>
  return %y : tensor<?x?x160xf32>
}

// -----

// Tests that a tanh GELU with the wrong cubic coefficient (0.04 instead of
// 0.044715) is not raised.
// CHECK-LABEL: func.func @gelu_tanh_wrong_constant
// CHECK-NOT: graph.gelu
// CHECK: graph.tanh
// CHECK-NOT: graph.gelu
// CHECK: return
func.func @gelu_tanh_wrong_constant(%x: tensor<?x?x256xf32>) -> tensor<?x?x256xf32> {
  %half = graph.constant dense<5.000000e-01> : tensor<f32>
  %three = graph.constant dense<3.000000e+00> : tensor<f32>
  %c = graph.constant dense<4.000000e-02> : tensor<f32>
  %k = graph.constant dense<0.797884583> : tensor<f32>
  %one = graph.constant dense<1.000000e+00> : tensor<f32>
  %h = graph.mul %x, %half : (tensor<?x?x256xf32>, tensor<f32>) -> tensor<?x?x256xf32>
  %p = graph.pow %x, %three : (tensor<?x?x256xf32>, tensor<f32>) -> tensor<?x?x256xf32>
  %pc = graph.mul %p, %c : (tensor<?x?x256xf32>, tensor<f32>) -> tensor<?x?x256xf32>
  %s = graph.add %x, %pc : (tensor<?x?x256xf32>, tensor<?x?x256xf32>) -> tensor<?x?x256xf32>
  %sk = graph.mul %s, %k : (tensor<?x?x256xf32>, tensor<f32>) -> tensor<?x?x256xf32>
  %t = graph.tanh %sk : (tensor<?x?x256xf32>) -> tensor<?x?x256xf32>
  %a = graph.add %t, %one : (tensor<?x?x256xf32>, tensor<f32>) -> tensor<?x?x256xf32>
  %y = graph.mul %h, %a : (tensor<?x?x256xf32>, tensor<?x?x256xf32>) -> tensor<?x?x256xf32>
  return %y : tensor<?x?x256xf32>
}

// -----

// Tests that an erf GELU whose halved operand is not the erf's input
// (0.5 * y * (1 + erf(x / sqrt 2))) is not raised.
// CHECK-LABEL: func.func @gelu_erf_different_inputs
// CHECK-NOT: graph.gelu
// CHECK: graph.erf
// CHECK-NOT: graph.gelu
// CHECK: return
func.func @gelu_erf_different_inputs(%x: tensor<?x?x256xf32>, %z: tensor<?x?x256xf32>) -> tensor<?x?x256xf32> {
  %half = graph.constant dense<5.000000e-01> : tensor<f32>
  %sqrt2 = graph.constant dense<1.41421354> : tensor<f32>
  %one = graph.constant dense<1.000000e+00> : tensor<f32>
  %h = graph.mul %z, %half : (tensor<?x?x256xf32>, tensor<f32>) -> tensor<?x?x256xf32>
  %d = graph.div %x, %sqrt2 : (tensor<?x?x256xf32>, tensor<f32>) -> tensor<?x?x256xf32>
  %e = graph.erf %d : (tensor<?x?x256xf32>) -> tensor<?x?x256xf32>
  %a = graph.add %e, %one : (tensor<?x?x256xf32>, tensor<f32>) -> tensor<?x?x256xf32>
  %y = graph.mul %h, %a : (tensor<?x?x256xf32>, tensor<?x?x256xf32>) -> tensor<?x?x256xf32>
  return %y : tensor<?x?x256xf32>
}

// -----

// Tests that a Gather by computed indices (ids + 1: they could wrap negative
// where Gather and embedding differ) is not an embedding.
// CHECK-LABEL: func.func @gather_computed_ids
// CHECK-NOT: graph.embedding
// CHECK: graph.gather
// CHECK-NOT: graph.embedding
// CHECK: return
func.func @gather_computed_ids(%ids: tensor<?x?xi64>) -> tensor<?x?x64xf32> {
  %t = graph.weight <embed_tokens.weight> : tensor<512x64xf32>
  %one = graph.constant dense<1> : tensor<i64>
  %i = graph.add %ids, %one : (tensor<?x?xi64>, tensor<i64>) -> tensor<?x?xi64>
  %e = graph.gather %t, %i {axis = 0 : i64} : (tensor<512x64xf32>, tensor<?x?xi64>) -> tensor<?x?x64xf32>
  return %e : tensor<?x?x64xf32>
}

// -----

// Tests that a Gather of columns (axis 1) or of an activation is not an
// embedding.
// CHECK-LABEL: func.func @gather_not_rows_of_weight
// CHECK-NOT: graph.embedding
// CHECK: graph.gather
// CHECK: graph.gather
// CHECK-NOT: graph.embedding
// CHECK: return
func.func @gather_not_rows_of_weight(%ids: tensor<?xi64>, %act: tensor<512x64xf32>) -> (tensor<512x?xf32>, tensor<?x64xf32>) {
  %t = graph.weight <embed_tokens.weight> : tensor<512x64xf32>
  %c = graph.gather %t, %ids {axis = 1 : i64} : (tensor<512x64xf32>, tensor<?xi64>) -> tensor<512x?xf32>
  %r = graph.gather %act, %ids {axis = 0 : i64} : (tensor<512x64xf32>, tensor<?xi64>) -> tensor<?x64xf32>
  return %c, %r : tensor<512x?xf32>, tensor<?x64xf32>
}
