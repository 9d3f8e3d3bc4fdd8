// RUN: infer-opt --split-input-file --infer-raise-linear %s | FileCheck %s

// Tests that a MatMul of an activation by a 2-D weight becomes graph.linear.
// CHECK-LABEL: func.func @matmul_weight
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x64xf32>)
// CHECK: %[[W:.+]] = graph.weight <q_proj> : tensor<64x128xf32>
// CHECK: %[[Y:.+]] = graph.linear %[[X]], %[[W]] : (tensor<?x?x64xf32>, tensor<64x128xf32>) -> tensor<?x?x128xf32>
// CHECK-NOT: transpose_weight
// CHECK-NEXT: return %[[Y]]
func.func @matmul_weight(%x: tensor<?x?x64xf32>) -> tensor<?x?x128xf32> {
  %w = graph.weight <q_proj> : tensor<64x128xf32>
  %y = graph.matmul %x, %w : (tensor<?x?x64xf32>, tensor<64x128xf32>) -> tensor<?x?x128xf32>
  return %y : tensor<?x?x128xf32>
}

// -----

// Tests that a MatMul by a dense constant (a non-splat graph.constant counts
// as a weight) becomes graph.linear.
// CHECK-LABEL: func.func @matmul_constant_weight
// CHECK-SAME: (%[[X:.+]]: tensor<?x2xf32>)
// CHECK: %[[W:.+]] = graph.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
// CHECK: %[[Y:.+]] = graph.linear %[[X]], %[[W]] : (tensor<?x2xf32>, tensor<2x3xf32>) -> tensor<?x3xf32>
// CHECK-NEXT: return %[[Y]]
func.func @matmul_constant_weight(%x: tensor<?x2xf32>) -> tensor<?x3xf32> {
  %w = graph.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %y = graph.matmul %x, %w : (tensor<?x2xf32>, tensor<2x3xf32>) -> tensor<?x3xf32>
  return %y : tensor<?x3xf32>
}

// -----

// Tests that a MatMul by the Transpose of a [N, K] weight uses the
// transpose_weight layout instead of a Transpose op.
// CHECK-LABEL: func.func @matmul_transposed_weight
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x64xf32>)
// CHECK: %[[W:.+]] = graph.weight <q_proj> : tensor<128x64xf32>
// CHECK-NOT: graph.transpose
// CHECK: %[[Y:.+]] = graph.linear %[[X]], %[[W]] {transpose_weight = true} : (tensor<?x?x64xf32>, tensor<128x64xf32>) -> tensor<?x?x128xf32>
// CHECK-NEXT: return %[[Y]]
func.func @matmul_transposed_weight(%x: tensor<?x?x64xf32>) -> tensor<?x?x128xf32> {
  %w = graph.weight <q_proj> : tensor<128x64xf32>
  %wt = graph.transpose %w {perm = array<i64: 1, 0>} : (tensor<128x64xf32>) -> tensor<64x128xf32>
  %y = graph.matmul %x, %wt : (tensor<?x?x64xf32>, tensor<64x128xf32>) -> tensor<?x?x128xf32>
  return %y : tensor<?x?x128xf32>
}

// -----

// Tests that Gemm with transB and a bias of N entries becomes a linear with a
// bias in the transpose_weight layout.
// CHECK-LABEL: func.func @gemm_transb_bias
// CHECK-SAME: (%[[X:.+]]: tensor<?x64xf32>)
// CHECK-DAG: %[[W:.+]] = graph.weight <fc.weight> : tensor<192x64xf32>
// CHECK-DAG: %[[B:.+]] = graph.weight <fc.bias> : tensor<192xf32>
// CHECK: %[[Y:.+]] = graph.linear %[[X]], %[[W]] bias(%[[B]]) {transpose_weight = true} : (tensor<?x64xf32>, tensor<192x64xf32>, tensor<192xf32>) -> tensor<?x192xf32>
// CHECK-NEXT: return %[[Y]]
func.func @gemm_transb_bias(%x: tensor<?x64xf32>) -> tensor<?x192xf32> {
  %w = graph.weight <fc.weight> : tensor<192x64xf32>
  %b = graph.weight <fc.bias> : tensor<192xf32>
  %y = graph.gemm %x, %w, %b {transB = true} : (tensor<?x64xf32>, tensor<192x64xf32>, tensor<192xf32>) -> tensor<?x192xf32>
  return %y : tensor<?x192xf32>
}

// -----

// Tests that Gemm with transB of an explicitly transposed weight cancels out:
// the layout is plain [K, N].
// CHECK-LABEL: func.func @gemm_transb_of_transpose
// CHECK-SAME: (%[[X:.+]]: tensor<?x64xf32>)
// CHECK: %[[W:.+]] = graph.weight <fc.weight> : tensor<64x192xf32>
// CHECK-NOT: graph.transpose
// CHECK: %[[Y:.+]] = graph.linear %[[X]], %[[W]] : (tensor<?x64xf32>, tensor<64x192xf32>) -> tensor<?x192xf32>
// CHECK-NEXT: return %[[Y]]
func.func @gemm_transb_of_transpose(%x: tensor<?x64xf32>) -> tensor<?x192xf32> {
  %w = graph.weight <fc.weight> : tensor<64x192xf32>
  %wt = graph.transpose %w {perm = array<i64: 1, 0>} : (tensor<64x192xf32>) -> tensor<192x64xf32>
  %y = graph.gemm %x, %wt {transB = true} : (tensor<?x64xf32>, tensor<192x64xf32>) -> tensor<?x192xf32>
  return %y : tensor<?x192xf32>
}

// -----

// Tests that an Add of a bias vector of N entries after the MatMul (either
// operand order) is absorbed as the linear's bias.
// CHECK-LABEL: func.func @bias_add_absorbed
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x64xf32>)
// CHECK-DAG: %[[W:.+]] = graph.weight <q_proj.weight> : tensor<64x128xf32>
// CHECK-DAG: %[[B:.+]] = graph.weight <q_proj.bias> : tensor<128xf32>
// CHECK-NOT: graph.add
// CHECK: %[[Y:.+]] = graph.linear %[[X]], %[[W]] bias(%[[B]]) : (tensor<?x?x64xf32>, tensor<64x128xf32>, tensor<128xf32>) -> tensor<?x?x128xf32>
// CHECK-NEXT: return %[[Y]]
func.func @bias_add_absorbed(%x: tensor<?x?x64xf32>) -> tensor<?x?x128xf32> {
  %w = graph.weight <q_proj.weight> : tensor<64x128xf32>
  %b = graph.weight <q_proj.bias> : tensor<128xf32>
  %m = graph.matmul %x, %w : (tensor<?x?x64xf32>, tensor<64x128xf32>) -> tensor<?x?x128xf32>
  %y = graph.add %b, %m : (tensor<128xf32>, tensor<?x?x128xf32>) -> tensor<?x?x128xf32>
  return %y : tensor<?x?x128xf32>
}

// -----

// Tests that Conv1D-style flattening around a GEMM (x [b, s, K] reshaped to
// [b*s, K], Gemm, reshaped back to [b, s, N] from x's shape) folds to one
// linear on x, after the interpreter has checked the reshapes restore x's
// token dims (the weights are constants: the interpreter runs them).
// CHECK-LABEL: func.func @flatten_around_linear
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x4xf32>
// CHECK-DAG: %[[W:.+]] = graph.constant dense<{{.+}}> : tensor<4x3xf32>
// CHECK-DAG: %[[B:.+]] = graph.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>
// CHECK: %[[Y:.+]] = graph.linear %[[X]], %[[W]] bias(%[[B]]) : (tensor<?x?x4xf32>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<?x?x3xf32>
// CHECK-NEXT: return %[[Y]]
func.func @flatten_around_linear(%x: tensor<?x?x4xf32> {graph.dims = ["batch", "seq", ""]}) -> tensor<?x?x3xf32> {
  %w = graph.constant dense<[[0.5, -1.0, 2.0], [1.5, 0.25, -0.5], [-2.0, 1.0, 0.75], [0.125, -0.25, 1.0]]> : tensor<4x3xf32>
  %b = graph.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %flat = graph.constant dense<[-1, 4]> : tensor<2xi64>
  %n = graph.constant dense<3> : tensor<1xi64>
  %bs = graph.shape %x {end = 2 : i64} : (tensor<?x?x4xf32>) -> tensor<2xi64>
  %target = graph.concat %bs, %n {axis = 0 : i64} : (tensor<2xi64>, tensor<1xi64>) -> tensor<3xi64>
  %x2 = graph.reshape %x, %flat : (tensor<?x?x4xf32>, tensor<2xi64>) -> tensor<?x4xf32>
  %g = graph.gemm %x2, %w, %b : (tensor<?x4xf32>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  %y = graph.reshape %g, %target : (tensor<?x3xf32>, tensor<3xi64>) -> tensor<?x?x3xf32>
  return %y : tensor<?x?x3xf32>
}

// -----

// Tests that a reshape back to [s, b, N] (batch and sequence swapped) is not
// folded: the interpreter shows it does not restore x's token dims.
// CHECK-LABEL: func.func @flatten_swapped_dims
// CHECK: graph.reshape
// CHECK: %[[L:.+]] = graph.linear %{{.+}}, %{{.+}} bias(%{{.+}}) : (tensor<?x4xf32>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
// CHECK: %[[Y:.+]] = graph.reshape %[[L]], %{{.+}} : (tensor<?x3xf32>, tensor<3xi64>) -> tensor<?x?x3xf32>
// CHECK-NEXT: return %[[Y]]
func.func @flatten_swapped_dims(%x: tensor<?x?x4xf32> {graph.dims = ["batch", "seq", ""]}) -> tensor<?x?x3xf32> {
  %w = graph.constant dense<[[0.5, -1.0, 2.0], [1.5, 0.25, -0.5], [-2.0, 1.0, 0.75], [0.125, -0.25, 1.0]]> : tensor<4x3xf32>
  %b = graph.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %flat = graph.constant dense<[-1, 4]> : tensor<2xi64>
  %n = graph.constant dense<3> : tensor<1xi64>
  %batch = graph.shape %x {end = 1 : i64} : (tensor<?x?x4xf32>) -> tensor<1xi64>
  %seq = graph.shape %x {end = 2 : i64, start = 1 : i64} : (tensor<?x?x4xf32>) -> tensor<1xi64>
  %target = graph.concat %seq, %batch, %n {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
  %x2 = graph.reshape %x, %flat : (tensor<?x?x4xf32>, tensor<2xi64>) -> tensor<?x4xf32>
  %g = graph.gemm %x2, %w, %b : (tensor<?x4xf32>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  %y = graph.reshape %g, %target : (tensor<?x3xf32>, tensor<3xi64>) -> tensor<?x?x3xf32>
  return %y : tensor<?x?x3xf32>
}

// -----

// Tests that a MatMul of two activations (the attention scores q·kᵀ) is not a
// linear.
// CHECK-LABEL: func.func @matmul_two_activations
// CHECK-NOT: graph.linear
// CHECK: graph.matmul
// CHECK-NOT: graph.linear
// CHECK: return
func.func @matmul_two_activations(%q: tensor<?x4x?x16xf32>, %k: tensor<?x4x16x?xf32>) -> tensor<?x4x?x?xf32> {
  %s = graph.matmul %q, %k : (tensor<?x4x?x16xf32>, tensor<?x4x16x?xf32>) -> tensor<?x4x?x?xf32>
  return %s : tensor<?x4x?x?xf32>
}

// -----

// Tests that a MatMul by the transpose of an activation is not a linear either.
// CHECK-LABEL: func.func @matmul_transposed_activation
// CHECK-NOT: graph.linear
// CHECK: graph.matmul
// CHECK: return
func.func @matmul_transposed_activation(%x: tensor<?x64xf32>, %y: tensor<128x64xf32>) -> tensor<?x128xf32> {
  %yt = graph.transpose %y {perm = array<i64: 1, 0>} : (tensor<128x64xf32>) -> tensor<64x128xf32>
  %m = graph.matmul %x, %yt : (tensor<?x64xf32>, tensor<64x128xf32>) -> tensor<?x128xf32>
  return %m : tensor<?x128xf32>
}

// -----

// Tests that a Gemm with alpha != 1 is not a linear (linear has no scale).
// CHECK-LABEL: func.func @gemm_alpha
// CHECK-NOT: graph.linear
// CHECK: graph.gemm %{{.+}}, %{{.+}}, %{{.+}} {alpha = 5.000000e-01 : f32, transB = true}
// CHECK-NOT: graph.linear
// CHECK: return
func.func @gemm_alpha(%x: tensor<?x64xf32>) -> tensor<?x192xf32> {
  %w = graph.weight <fc.weight> : tensor<192x64xf32>
  %b = graph.weight <fc.bias> : tensor<192xf32>
  %y = graph.gemm %x, %w, %b {alpha = 0.5 : f32, transB = true} : (tensor<?x64xf32>, tensor<192x64xf32>, tensor<192xf32>) -> tensor<?x192xf32>
  return %y : tensor<?x192xf32>
}

// -----

// Tests that a Gemm with beta != 1 (a scaled bias) is not a linear.
// CHECK-LABEL: func.func @gemm_beta
// CHECK-NOT: graph.linear
// CHECK: graph.gemm
// CHECK: return
func.func @gemm_beta(%x: tensor<?x64xf32>) -> tensor<?x192xf32> {
  %w = graph.weight <fc.weight> : tensor<192x64xf32>
  %b = graph.weight <fc.bias> : tensor<192xf32>
  %y = graph.gemm %x, %w, %b {beta = 2.0 : f32, transB = true} : (tensor<?x64xf32>, tensor<192x64xf32>, tensor<192xf32>) -> tensor<?x192xf32>
  return %y : tensor<?x192xf32>
}

// -----

// Tests that a Gemm with transA is not a linear.
// CHECK-LABEL: func.func @gemm_transa
// CHECK-NOT: graph.linear
// CHECK: graph.gemm
// CHECK: return
func.func @gemm_transa(%x: tensor<64x?xf32>) -> tensor<?x192xf32> {
  %w = graph.weight <fc.weight> : tensor<64x192xf32>
  %y = graph.gemm %x, %w {transA = true} : (tensor<64x?xf32>, tensor<64x192xf32>) -> tensor<?x192xf32>
  return %y : tensor<?x192xf32>
}

// -----

// Tests that a Gemm whose C is a [1]-entry vector (it broadcasts, but is not a
// bias of N entries) is not a linear.
// CHECK-LABEL: func.func @gemm_bias_wrong_size
// CHECK-NOT: graph.linear
// CHECK: graph.gemm
// CHECK: return
func.func @gemm_bias_wrong_size(%x: tensor<?x64xf32>) -> tensor<?x192xf32> {
  %w = graph.weight <fc.weight> : tensor<192x64xf32>
  %b = graph.weight <fc.bias> : tensor<1xf32>
  %y = graph.gemm %x, %w, %b {transB = true} : (tensor<?x64xf32>, tensor<192x64xf32>, tensor<1xf32>) -> tensor<?x192xf32>
  return %y : tensor<?x192xf32>
}

// -----

// Tests that an Add of a vector of the wrong size (1 entry, broadcast) stays an
// Add after the linear; so does an Add of an activation.
// CHECK-LABEL: func.func @bias_add_wrong_size
// CHECK: %[[L:.+]] = graph.linear %{{.+}}, %{{.+}} : (tensor<?x?x64xf32>, tensor<64x128xf32>) -> tensor<?x?x128xf32>
// CHECK: %[[A:.+]] = graph.add %[[L]], %{{.+}} : (tensor<?x?x128xf32>, tensor<1xf32>)
// CHECK: %[[L2:.+]] = graph.linear %{{.+}}, %{{.+}} : (tensor<?x?x64xf32>, tensor<64x128xf32>) -> tensor<?x?x128xf32>
// CHECK: graph.add %[[L2]], %{{.+}} : (tensor<?x?x128xf32>, tensor<?x?x128xf32>)
func.func @bias_add_wrong_size(%x: tensor<?x?x64xf32>, %r: tensor<?x?x128xf32>) -> (tensor<?x?x128xf32>, tensor<?x?x128xf32>) {
  %w = graph.weight <q_proj.weight> : tensor<64x128xf32>
  %b = graph.weight <q_proj.bias> : tensor<1xf32>
  %m = graph.matmul %x, %w : (tensor<?x?x64xf32>, tensor<64x128xf32>) -> tensor<?x?x128xf32>
  %y = graph.add %m, %b : (tensor<?x?x128xf32>, tensor<1xf32>) -> tensor<?x?x128xf32>
  %m2 = graph.matmul %x, %w : (tensor<?x?x64xf32>, tensor<64x128xf32>) -> tensor<?x?x128xf32>
  %z = graph.add %m2, %r : (tensor<?x?x128xf32>, tensor<?x?x128xf32>) -> tensor<?x?x128xf32>
  return %y, %z : tensor<?x?x128xf32>, tensor<?x?x128xf32>
}

// -----

// Tests that a bias Add is not absorbed when the product has another use (the
// un-biased product would be lost).
// CHECK-LABEL: func.func @bias_add_product_reused
// CHECK: %[[L:.+]] = graph.linear %{{.+}}, %{{.+}} : (tensor<?x?x64xf32>, tensor<64x128xf32>) -> tensor<?x?x128xf32>
// CHECK: %[[A:.+]] = graph.add %[[L]], %{{.+}}
// CHECK: return %[[A]], %[[L]]
func.func @bias_add_product_reused(%x: tensor<?x?x64xf32>) -> (tensor<?x?x128xf32>, tensor<?x?x128xf32>) {
  %w = graph.weight <q_proj.weight> : tensor<64x128xf32>
  %b = graph.weight <q_proj.bias> : tensor<128xf32>
  %m = graph.matmul %x, %w : (tensor<?x?x64xf32>, tensor<64x128xf32>) -> tensor<?x?x128xf32>
  %y = graph.add %m, %b : (tensor<?x?x128xf32>, tensor<128xf32>) -> tensor<?x?x128xf32>
  return %y, %m : tensor<?x?x128xf32>, tensor<?x?x128xf32>
}
