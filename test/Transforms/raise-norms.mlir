// RUN: infer-opt --split-input-file --infer-raise-norms %s | FileCheck %s

// Tests the form the tiny-llama export writes: Pow by 2, ReduceMean over the
// last axis, Add eps, Sqrt, Reciprocal, x * r, weight * (x * r).
// CHECK-LABEL: func.func @pow_reciprocal_weight_lhs
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x64xf32>)
// CHECK: %[[W:.+]] = graph.constant dense<{{.+}}> : tensor<64xf32>
// CHECK: %[[Y:.+]] = graph.rms_norm %[[X]], %[[W]] {epsilon = 9.99999997E-7 : f32} : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
// CHECK-NEXT: return %[[Y]]
func.func @pow_reciprocal_weight_lhs(%x: tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
  %w = graph.constant dense<"0x0000803F0000003F0000803F0000003F0000803F0000003F0000803F0000003F0000803F0000003F0000803F0000003F0000803F0000003F0000803F0000003F0000803F0000003F0000803F0000003F0000803F0000003F0000803F0000003F0000803F0000003F0000803F0000003F0000803F0000003F0000803F0000003F0000803F0000003F0000803F0000003F0000803F0000003F0000803F0000003F0000803F0000003F0000803F0000003F0000803F0000003F0000803F0000003F0000803F0000003F0000803F0000003F0000803F0000003F0000803F0000003F0000803F0000003F0000803F0000003F0000803F0000003F0000803F0000003F"> : tensor<64xf32>
  %two = graph.constant dense<2.000000e+00> : tensor<f32>
  %eps = graph.constant dense<9.99999997E-7> : tensor<f32>
  %axis = graph.constant dense<2> : tensor<1xi64>
  %p = graph.pow %x, %two : (tensor<?x?x64xf32>, tensor<f32>) -> tensor<?x?x64xf32>
  %m = graph.reduce_mean %p axes(%axis) : (tensor<?x?x64xf32>, tensor<1xi64>) -> tensor<?x?x1xf32>
  %a = graph.add %m, %eps : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?x1xf32>
  %s = graph.sqrt %a : (tensor<?x?x1xf32>) -> tensor<?x?x1xf32>
  %r = graph.reciprocal %s : (tensor<?x?x1xf32>) -> tensor<?x?x1xf32>
  %n = graph.mul %x, %r : (tensor<?x?x64xf32>, tensor<?x?x1xf32>) -> tensor<?x?x64xf32>
  %y = graph.mul %w, %n : (tensor<64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}

// -----

// Tests the square as x * x, the inverse root as a Div x / sqrt(...), the
// mean axis as -1, eps on the left of the Add, and the weight (a graph.weight)
// on the right.
// CHECK-LABEL: func.func @mul_square_div_weight_rhs
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x64xf32>)
// CHECK: %[[W:.+]] = graph.weight <norm.weight> : tensor<64xf32>
// CHECK: %[[Y:.+]] = graph.rms_norm %[[X]], %[[W]] {epsilon = 9.99999974E-6 : f32} : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
// CHECK-NOT: graph.reduce_mean
// CHECK: return %[[Y]]
func.func @mul_square_div_weight_rhs(%x: tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
  %w = graph.weight <norm.weight> : tensor<64xf32>
  %eps = graph.constant dense<9.99999974E-6> : tensor<f32>
  %axis = graph.constant dense<-1> : tensor<1xi64>
  %p = graph.mul %x, %x : (tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  %m = graph.reduce_mean %p axes(%axis) : (tensor<?x?x64xf32>, tensor<1xi64>) -> tensor<?x?x1xf32>
  %a = graph.add %eps, %m : (tensor<f32>, tensor<?x?x1xf32>) -> tensor<?x?x1xf32>
  %s = graph.sqrt %a : (tensor<?x?x1xf32>) -> tensor<?x?x1xf32>
  %n = graph.div %x, %s : (tensor<?x?x64xf32>, tensor<?x?x1xf32>) -> tensor<?x?x64xf32>
  %y = graph.mul %n, %w : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}

// -----

// Tests the inverse root as 1 / sqrt(...) multiplied on the left of x.
// CHECK-LABEL: func.func @one_over_root
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x64xf32>)
// CHECK: %[[W:.+]] = graph.weight <norm.weight>
// CHECK: %[[Y:.+]] = graph.rms_norm %[[X]], %[[W]] {epsilon = 9.99999997E-7 : f32}
// CHECK-NEXT: return %[[Y]]
func.func @one_over_root(%x: tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
  %w = graph.weight <norm.weight> : tensor<64xf32>
  %one = graph.constant dense<1.000000e+00> : tensor<f32>
  %two = graph.constant dense<2.000000e+00> : tensor<f32>
  %eps = graph.constant dense<9.99999997E-7> : tensor<f32>
  %axis = graph.constant dense<2> : tensor<1xi64>
  %p = graph.pow %x, %two : (tensor<?x?x64xf32>, tensor<f32>) -> tensor<?x?x64xf32>
  %m = graph.reduce_mean %p axes(%axis) : (tensor<?x?x64xf32>, tensor<1xi64>) -> tensor<?x?x1xf32>
  %a = graph.add %m, %eps : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?x1xf32>
  %s = graph.sqrt %a : (tensor<?x?x1xf32>) -> tensor<?x?x1xf32>
  %r = graph.div %one, %s : (tensor<f32>, tensor<?x?x1xf32>) -> tensor<?x?x1xf32>
  %n = graph.mul %r, %x : (tensor<?x?x1xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  %y = graph.mul %w, %n : (tensor<64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}

// -----

// Tests Gemma's (1 + w) scale: the weight is w and weight_offset = 1.
// CHECK-LABEL: func.func @gemma_one_plus_weight
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x64xf32>)
// CHECK: %[[W:.+]] = graph.weight <norm.weight>
// CHECK: %[[Y:.+]] = graph.rms_norm %[[X]], %[[W]] {epsilon = 9.99999997E-7 : f32, weight_offset = 1.000000e+00 : f32}
// CHECK-NOT: graph.add
// CHECK: return %[[Y]]
func.func @gemma_one_plus_weight(%x: tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
  %w = graph.weight <norm.weight> : tensor<64xf32>
  %one = graph.constant dense<1.000000e+00> : tensor<f32>
  %two = graph.constant dense<2.000000e+00> : tensor<f32>
  %eps = graph.constant dense<9.99999997E-7> : tensor<f32>
  %axis = graph.constant dense<2> : tensor<1xi64>
  %p = graph.pow %x, %two : (tensor<?x?x64xf32>, tensor<f32>) -> tensor<?x?x64xf32>
  %m = graph.reduce_mean %p axes(%axis) : (tensor<?x?x64xf32>, tensor<1xi64>) -> tensor<?x?x1xf32>
  %a = graph.add %m, %eps : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?x1xf32>
  %s = graph.sqrt %a : (tensor<?x?x1xf32>) -> tensor<?x?x1xf32>
  %r = graph.reciprocal %s : (tensor<?x?x1xf32>) -> tensor<?x?x1xf32>
  %n = graph.mul %x, %r : (tensor<?x?x64xf32>, tensor<?x?x1xf32>) -> tensor<?x?x64xf32>
  %g = graph.add %one, %w : (tensor<f32>, tensor<64xf32>) -> tensor<64xf32>
  %y = graph.mul %n, %g : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}

// -----

// Tests that a mean over a non-last axis (axis 1, the sequence) is not an
// RMSNorm.
// CHECK-LABEL: func.func @mean_over_sequence
// CHECK-NOT: graph.rms_norm
// CHECK: graph.reduce_mean
// CHECK-NOT: graph.rms_norm
// CHECK: return
func.func @mean_over_sequence(%x: tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
  %w = graph.weight <norm.weight> : tensor<64xf32>
  %two = graph.constant dense<2.000000e+00> : tensor<f32>
  %eps = graph.constant dense<9.99999997E-7> : tensor<f32>
  %axis = graph.constant dense<1> : tensor<1xi64>
  %p = graph.pow %x, %two : (tensor<?x?x64xf32>, tensor<f32>) -> tensor<?x?x64xf32>
  %m = graph.reduce_mean %p axes(%axis) : (tensor<?x?x64xf32>, tensor<1xi64>) -> tensor<?x1x64xf32>
  %a = graph.add %m, %eps : (tensor<?x1x64xf32>, tensor<f32>) -> tensor<?x1x64xf32>
  %s = graph.sqrt %a : (tensor<?x1x64xf32>) -> tensor<?x1x64xf32>
  %r = graph.reciprocal %s : (tensor<?x1x64xf32>) -> tensor<?x1x64xf32>
  %n = graph.mul %x, %r : (tensor<?x?x64xf32>, tensor<?x1x64xf32>) -> tensor<?x?x64xf32>
  %y = graph.mul %w, %n : (tensor<64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}

// -----

// Tests that the root mean square of one tensor applied to another (x * rms(z)
// with x != z) is not an RMSNorm.
// CHECK-LABEL: func.func @different_inputs
// CHECK-NOT: graph.rms_norm
// CHECK: graph.reciprocal
// CHECK-NOT: graph.rms_norm
// CHECK: return
func.func @different_inputs(%x: tensor<?x?x64xf32>, %z: tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
  %w = graph.weight <norm.weight> : tensor<64xf32>
  %two = graph.constant dense<2.000000e+00> : tensor<f32>
  %eps = graph.constant dense<9.99999997E-7> : tensor<f32>
  %axis = graph.constant dense<2> : tensor<1xi64>
  %p = graph.pow %z, %two : (tensor<?x?x64xf32>, tensor<f32>) -> tensor<?x?x64xf32>
  %m = graph.reduce_mean %p axes(%axis) : (tensor<?x?x64xf32>, tensor<1xi64>) -> tensor<?x?x1xf32>
  %a = graph.add %m, %eps : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?x1xf32>
  %s = graph.sqrt %a : (tensor<?x?x1xf32>) -> tensor<?x?x1xf32>
  %r = graph.reciprocal %s : (tensor<?x?x1xf32>) -> tensor<?x?x1xf32>
  %n = graph.mul %x, %r : (tensor<?x?x64xf32>, tensor<?x?x1xf32>) -> tensor<?x?x64xf32>
  %y = graph.mul %w, %n : (tensor<64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}

// -----

// Tests that a square of a different tensor than the one normalised
// (mean(z * z) but x / sqrt(...)) is not an RMSNorm (the Div form).
// CHECK-LABEL: func.func @different_inputs_div
// CHECK-NOT: graph.rms_norm
// CHECK: graph.div
// CHECK-NOT: graph.rms_norm
// CHECK: return
func.func @different_inputs_div(%x: tensor<?x?x64xf32>, %z: tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
  %w = graph.weight <norm.weight> : tensor<64xf32>
  %eps = graph.constant dense<9.99999997E-7> : tensor<f32>
  %axis = graph.constant dense<2> : tensor<1xi64>
  %p = graph.mul %z, %z : (tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  %m = graph.reduce_mean %p axes(%axis) : (tensor<?x?x64xf32>, tensor<1xi64>) -> tensor<?x?x1xf32>
  %a = graph.add %m, %eps : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?x1xf32>
  %s = graph.sqrt %a : (tensor<?x?x1xf32>) -> tensor<?x?x1xf32>
  %n = graph.div %x, %s : (tensor<?x?x64xf32>, tensor<?x?x1xf32>) -> tensor<?x?x64xf32>
  %y = graph.mul %n, %w : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}

// -----

// Tests that a weight whose size is not the normalised dim (1 entry here,
// which broadcasts) is not taken as the RMSNorm scale.
// CHECK-LABEL: func.func @weight_wrong_size
// CHECK-NOT: graph.rms_norm
// CHECK: graph.mul %{{.+}}, %{{.+}} : (tensor<1xf32>, tensor<?x?x64xf32>)
// CHECK-NOT: graph.rms_norm
// CHECK: return
func.func @weight_wrong_size(%x: tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
  %w = graph.weight <norm.weight> : tensor<1xf32>
  %two = graph.constant dense<2.000000e+00> : tensor<f32>
  %eps = graph.constant dense<9.99999997E-7> : tensor<f32>
  %axis = graph.constant dense<2> : tensor<1xi64>
  %p = graph.pow %x, %two : (tensor<?x?x64xf32>, tensor<f32>) -> tensor<?x?x64xf32>
  %m = graph.reduce_mean %p axes(%axis) : (tensor<?x?x64xf32>, tensor<1xi64>) -> tensor<?x?x1xf32>
  %a = graph.add %m, %eps : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?x1xf32>
  %s = graph.sqrt %a : (tensor<?x?x1xf32>) -> tensor<?x?x1xf32>
  %r = graph.reciprocal %s : (tensor<?x?x1xf32>) -> tensor<?x?x1xf32>
  %n = graph.mul %x, %r : (tensor<?x?x64xf32>, tensor<?x?x1xf32>) -> tensor<?x?x64xf32>
  %y = graph.mul %w, %n : (tensor<1xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}

// -----

// Tests that a weight of the wrong rank ([1, 64], not a [64] vector) is not
// taken as the scale either.
// CHECK-LABEL: func.func @weight_wrong_rank
// CHECK-NOT: graph.rms_norm
// CHECK: return
func.func @weight_wrong_rank(%x: tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
  %w = graph.weight <norm.weight> : tensor<1x64xf32>
  %two = graph.constant dense<2.000000e+00> : tensor<f32>
  %eps = graph.constant dense<9.99999997E-7> : tensor<f32>
  %axis = graph.constant dense<2> : tensor<1xi64>
  %p = graph.pow %x, %two : (tensor<?x?x64xf32>, tensor<f32>) -> tensor<?x?x64xf32>
  %m = graph.reduce_mean %p axes(%axis) : (tensor<?x?x64xf32>, tensor<1xi64>) -> tensor<?x?x1xf32>
  %a = graph.add %m, %eps : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?x1xf32>
  %s = graph.sqrt %a : (tensor<?x?x1xf32>) -> tensor<?x?x1xf32>
  %r = graph.reciprocal %s : (tensor<?x?x1xf32>) -> tensor<?x?x1xf32>
  %n = graph.mul %x, %r : (tensor<?x?x64xf32>, tensor<?x?x1xf32>) -> tensor<?x?x64xf32>
  %y = graph.mul %w, %n : (tensor<1x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}

// -----

// Tests that a mean without keepdims (the [?, ?] result would not broadcast
// against x's features) is not an RMSNorm.
// CHECK-LABEL: func.func @no_keepdims
// CHECK-NOT: graph.rms_norm
// CHECK: return
func.func @no_keepdims(%x: tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
  %w = graph.weight <norm.weight> : tensor<64xf32>
  %two = graph.constant dense<2.000000e+00> : tensor<f32>
  %eps = graph.constant dense<9.99999997E-7> : tensor<f32>
  %axis = graph.constant dense<2> : tensor<1xi64>
  %ax1 = graph.constant dense<2> : tensor<1xi64>
  %p = graph.pow %x, %two : (tensor<?x?x64xf32>, tensor<f32>) -> tensor<?x?x64xf32>
  %m = graph.reduce_mean %p axes(%axis) {keepdims = false} : (tensor<?x?x64xf32>, tensor<1xi64>) -> tensor<?x?xf32>
  %a = graph.add %m, %eps : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
  %s = graph.sqrt %a : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %r = graph.reciprocal %s : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %r3 = graph.unsqueeze %r, %ax1 : (tensor<?x?xf32>, tensor<1xi64>) -> tensor<?x?x1xf32>
  %n = graph.mul %x, %r3 : (tensor<?x?x64xf32>, tensor<?x?x1xf32>) -> tensor<?x?x64xf32>
  %y = graph.mul %w, %n : (tensor<64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}

// -----

// Tests that LayerNorm written out (exporters before opset 17) becomes
// graph.layer_normalization, its bias add included.
// CHECK-LABEL: func.func @decomposed_layer_norm
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x8xf32>)
// CHECK-DAG: %[[W:.+]] = graph.constant dense<[1.0{{.*}}> : tensor<8xf32>
// CHECK-DAG: %[[B:.+]] = graph.constant dense<[5.0{{.*}}> : tensor<8xf32>
// CHECK: %[[N:.+]] = graph.layer_normalization %[[X]], %[[W]] bias(%[[B]]) {axis = 2 : i64}
// CHECK-NOT: graph.reduce_mean
// CHECK: return %[[N]]
func.func @decomposed_layer_norm(%x: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
  %w = graph.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32>
  %b = graph.constant dense<[5.0e-01, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0]> : tensor<8xf32>
  %axes = graph.constant dense<-1> : tensor<1xi64>
  %two = graph.constant dense<2.0> : tensor<f32>
  %eps = graph.constant dense<1.0e-5> : tensor<f32>
  %mean = graph.reduce_mean %x axes(%axes) : (tensor<?x?x8xf32>, tensor<1xi64>) -> tensor<?x?x1xf32>
  %d = graph.sub %x, %mean : (tensor<?x?x8xf32>, tensor<?x?x1xf32>) -> tensor<?x?x8xf32>
  %sq = graph.pow %d, %two : (tensor<?x?x8xf32>, tensor<f32>) -> tensor<?x?x8xf32>
  %var = graph.reduce_mean %sq axes(%axes) : (tensor<?x?x8xf32>, tensor<1xi64>) -> tensor<?x?x1xf32>
  %ve = graph.add %var, %eps : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?x1xf32>
  %std = graph.sqrt %ve : (tensor<?x?x1xf32>) -> tensor<?x?x1xf32>
  %n = graph.div %d, %std : (tensor<?x?x8xf32>, tensor<?x?x1xf32>) -> tensor<?x?x8xf32>
  %s = graph.mul %n, %w : (tensor<?x?x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  %y = graph.add %s, %b : (tensor<?x?x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  return %y : tensor<?x?x8xf32>
}

// -----

// Tests that centring on a different tensor is not a LayerNorm.
// CHECK-LABEL: func.func @not_layer_norm
// CHECK-NOT: graph.layer_normalization
func.func @not_layer_norm(%x: tensor<?x8xf32>, %z: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %w = graph.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32>
  %axes = graph.constant dense<-1> : tensor<1xi64>
  %two = graph.constant dense<2.0> : tensor<f32>
  %eps = graph.constant dense<1.0e-5> : tensor<f32>
  %mean = graph.reduce_mean %z axes(%axes) : (tensor<?x8xf32>, tensor<1xi64>) -> tensor<?x1xf32>
  %d = graph.sub %x, %mean : (tensor<?x8xf32>, tensor<?x1xf32>) -> tensor<?x8xf32>
  %sq = graph.pow %d, %two : (tensor<?x8xf32>, tensor<f32>) -> tensor<?x8xf32>
  %var = graph.reduce_mean %sq axes(%axes) : (tensor<?x8xf32>, tensor<1xi64>) -> tensor<?x1xf32>
  %ve = graph.add %var, %eps : (tensor<?x1xf32>, tensor<f32>) -> tensor<?x1xf32>
  %std = graph.sqrt %ve : (tensor<?x1xf32>) -> tensor<?x1xf32>
  %n = graph.div %d, %std : (tensor<?x8xf32>, tensor<?x1xf32>) -> tensor<?x8xf32>
  %s = graph.mul %n, %w : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  return %s : tensor<?x8xf32>
}

// -----

// Tests that a norm of transposed heads (Gemma3's q/k norm of [b, h, s, d])
// moves above the transpose, and that the transposes around it cancel.
// CHECK-LABEL: func.func @norm_of_transposed_heads
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x4x16xf32>, %[[W:.+]]: tensor<16xf32>)
// CHECK-NEXT: %[[Y:.+]] = graph.rms_norm %[[X]], %[[W]] {epsilon = 9.99999997E-7 : f32} : (tensor<?x?x4x16xf32>, tensor<16xf32>) -> tensor<?x?x4x16xf32>
// CHECK-NEXT: return %[[Y]]
func.func @norm_of_transposed_heads(%x: tensor<?x?x4x16xf32>, %w: tensor<16xf32>) -> tensor<?x?x4x16xf32> {
  %t = graph.transpose %x {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x?x4x16xf32>) -> tensor<?x4x?x16xf32>
  %n = graph.rms_norm %t, %w {epsilon = 9.99999997E-7 : f32} : (tensor<?x4x?x16xf32>, tensor<16xf32>) -> tensor<?x4x?x16xf32>
  %b = graph.transpose %n {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x4x?x16xf32>) -> tensor<?x?x4x16xf32>
  return %b : tensor<?x?x4x16xf32>
}

// -----

// Tests that a norm over the axis a transpose moves stays where it is.
// CHECK-LABEL: func.func @norm_of_moved_axis
// CHECK: graph.transpose
// CHECK-NEXT: graph.rms_norm
func.func @norm_of_moved_axis(%x: tensor<?x16x4xf32>, %w: tensor<16xf32>) -> tensor<?x4x16xf32> {
  %t = graph.transpose %x {perm = array<i64: 0, 2, 1>} : (tensor<?x16x4xf32>) -> tensor<?x4x16xf32>
  %n = graph.rms_norm %t, %w {epsilon = 9.99999997E-7 : f32} : (tensor<?x4x16xf32>, tensor<16xf32>) -> tensor<?x4x16xf32>
  return %n : tensor<?x4x16xf32>
}

// -----

// Tests that an RMSNorm of x - mean(x) (Cohere's bias-free LayerNorm, read
// as an RMSNorm of the centred x) becomes a LayerNorm of x without bias.
// CHECK-LABEL: func.func @centered_rms_norm
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x64xf32>, %[[W:.+]]: tensor<64xf32>)
// CHECK-NEXT: %[[Y:.+]] = graph.layer_normalization %[[X]], %[[W]] {axis = 2 : i64, epsilon = 9.99999997E-7 : f32} : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
// CHECK-NEXT: return %[[Y]]
func.func @centered_rms_norm(%x: tensor<?x?x64xf32>, %w: tensor<64xf32>) -> tensor<?x?x64xf32> {
  %axes = graph.constant dense<2> : tensor<1xi64>
  %m = graph.reduce_mean %x axes(%axes) : (tensor<?x?x64xf32>, tensor<1xi64>) -> tensor<?x?x1xf32>
  %c = graph.sub %x, %m : (tensor<?x?x64xf32>, tensor<?x?x1xf32>) -> tensor<?x?x64xf32>
  %n = graph.rms_norm %c, %w {epsilon = 9.99999997E-7 : f32} : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  return %n : tensor<?x?x64xf32>
}
