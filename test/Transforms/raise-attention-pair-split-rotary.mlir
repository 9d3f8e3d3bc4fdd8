// RUN: infer-opt --split-input-file --infer-raise-attention %s | FileCheck %s

// Tests DeepSeek-V3's rotary: e = x[..., 0::2], o = x[..., 1::2], then
// concat(e·cos - o·sin, o·cos + e·sin): the pairs (2i, 2i+1) rotated and
// written as halves. It becomes the half-split graph.rotary of x with its
// pairs moved apart first (reshape, transpose, reshape); the proof checks it.
// CHECK-LABEL: func.func @pair_split_rotary
// CHECK-SAME: (%[[Q:.+]]: tensor<?x?x16xf32>
// CHECK: %[[P:.+]] = graph.reshape %[[Q]], %{{.+}} : (tensor<?x?x16xf32>, tensor<5xi64>) -> tensor<?x?x2x4x2xf32>
// CHECK: %[[H:.+]] = graph.transpose %[[P]] {perm = array<i64: 0, 1, 2, 4, 3>}
// CHECK: %[[D:.+]] = graph.reshape %[[H]], %{{.+}} -> tensor<?x?x16xf32>
// CHECK: graph.rotary %[[D]], %{{.+}} {head_dim = 8 : i64, num_heads = 2 : i64, rotary_dim = 8 : i64, rotated_heads = 2 : i64}
// CHECK-NOT: graph.sin
// CHECK: return
func.func @pair_split_rotary(%q: tensor<?x?x16xf32> {graph.dims = ["batch", "seq", ""]}) -> tensor<?x2x?x8xf32> {
  %split = graph.constant dense<[0, 0, 2, 8]> : tensor<4xi64>
  %q4 = graph.reshape %q, %split : (tensor<?x?x16xf32>, tensor<4xi64>) -> tensor<?x?x2x8xf32>
  %x = graph.transpose %q4 {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x?x2x8xf32>) -> tensor<?x2x?x8xf32>
  // Angles: positions 0..seq-1 times inv_freq; cos and sin of [1, 1, seq, 4].
  %shape = graph.shape %q {start = 1 : i64, end = 2 : i64} : (tensor<?x?x16xf32>) -> tensor<1xi64>
  %seq = graph.squeeze %shape : (tensor<1xi64>) -> tensor<i64>
  %c0 = graph.constant dense<0> : tensor<i64>
  %c1 = graph.constant dense<1> : tensor<i64>
  %pos = graph.range %c0, %seq, %c1 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  %posf = graph.cast %pos : (tensor<?xi64>) -> tensor<?xf32>
  %ax1 = graph.constant dense<1> : tensor<1xi64>
  %col = graph.unsqueeze %posf, %ax1 : (tensor<?xf32>, tensor<1xi64>) -> tensor<?x1xf32>
  %inv = graph.constant dense<[1.0, 0.1, 0.01, 0.001]> : tensor<4xf32>
  %angles = graph.mul %col, %inv : (tensor<?x1xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %ax01 = graph.constant dense<[0, 1]> : tensor<2xi64>
  %cos4 = graph.cos %angles : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %cos = graph.unsqueeze %cos4, %ax01 : (tensor<?x4xf32>, tensor<2xi64>) -> tensor<1x1x?x4xf32>
  %sin4 = graph.sin %angles : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %sin = graph.unsqueeze %sin4, %ax01 : (tensor<?x4xf32>, tensor<2xi64>) -> tensor<1x1x?x4xf32>
  %s0 = graph.constant dense<0> : tensor<1xi64>
  %s1 = graph.constant dense<1> : tensor<1xi64>
  %end = graph.constant dense<9223372036854775807> : tensor<1xi64>
  %ax3 = graph.constant dense<3> : tensor<1xi64>
  %st2 = graph.constant dense<2> : tensor<1xi64>
  %e = graph.slice %x, %s0, %end, %ax3, %st2 : (tensor<?x2x?x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2x?x4xf32>
  %o = graph.slice %x, %s1, %end, %ax3, %st2 : (tensor<?x2x?x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2x?x4xf32>
  %ec = graph.mul %e, %cos : (tensor<?x2x?x4xf32>, tensor<1x1x?x4xf32>) -> tensor<?x2x?x4xf32>
  %os = graph.mul %o, %sin : (tensor<?x2x?x4xf32>, tensor<1x1x?x4xf32>) -> tensor<?x2x?x4xf32>
  %first = graph.sub %ec, %os : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
  %oc = graph.mul %o, %cos : (tensor<?x2x?x4xf32>, tensor<1x1x?x4xf32>) -> tensor<?x2x?x4xf32>
  %es = graph.mul %e, %sin : (tensor<?x2x?x4xf32>, tensor<1x1x?x4xf32>) -> tensor<?x2x?x4xf32>
  %second = graph.add %oc, %es : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
  %out = graph.concat %first, %second {axis = 3 : i64} : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x8xf32>
  return %out : tensor<?x2x?x8xf32>
}

// -----

// Tests that the same shape with the signs swapped (not a rotation of the
// pairs) stays as it is: the proof fails.
// CHECK-LABEL: func.func @not_a_rotation
// CHECK-NOT: graph.rotary
// CHECK: graph.concat
func.func @not_a_rotation(%q: tensor<?x?x16xf32> {graph.dims = ["batch", "seq", ""]}) -> tensor<?x2x?x8xf32> {
  %split = graph.constant dense<[0, 0, 2, 8]> : tensor<4xi64>
  %q4 = graph.reshape %q, %split : (tensor<?x?x16xf32>, tensor<4xi64>) -> tensor<?x?x2x8xf32>
  %x = graph.transpose %q4 {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x?x2x8xf32>) -> tensor<?x2x?x8xf32>
  %shape = graph.shape %q {start = 1 : i64, end = 2 : i64} : (tensor<?x?x16xf32>) -> tensor<1xi64>
  %seq = graph.squeeze %shape : (tensor<1xi64>) -> tensor<i64>
  %c0 = graph.constant dense<0> : tensor<i64>
  %c1 = graph.constant dense<1> : tensor<i64>
  %pos = graph.range %c0, %seq, %c1 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  %posf = graph.cast %pos : (tensor<?xi64>) -> tensor<?xf32>
  %ax1 = graph.constant dense<1> : tensor<1xi64>
  %col = graph.unsqueeze %posf, %ax1 : (tensor<?xf32>, tensor<1xi64>) -> tensor<?x1xf32>
  %inv = graph.constant dense<[1.0, 0.1, 0.01, 0.001]> : tensor<4xf32>
  %angles = graph.mul %col, %inv : (tensor<?x1xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %ax01 = graph.constant dense<[0, 1]> : tensor<2xi64>
  %cos4 = graph.cos %angles : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %cos = graph.unsqueeze %cos4, %ax01 : (tensor<?x4xf32>, tensor<2xi64>) -> tensor<1x1x?x4xf32>
  %sin4 = graph.sin %angles : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %sin = graph.unsqueeze %sin4, %ax01 : (tensor<?x4xf32>, tensor<2xi64>) -> tensor<1x1x?x4xf32>
  %s0 = graph.constant dense<0> : tensor<1xi64>
  %s1 = graph.constant dense<1> : tensor<1xi64>
  %end = graph.constant dense<9223372036854775807> : tensor<1xi64>
  %ax3 = graph.constant dense<3> : tensor<1xi64>
  %st2 = graph.constant dense<2> : tensor<1xi64>
  %e = graph.slice %x, %s0, %end, %ax3, %st2 : (tensor<?x2x?x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2x?x4xf32>
  %o = graph.slice %x, %s1, %end, %ax3, %st2 : (tensor<?x2x?x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2x?x4xf32>
  %ec = graph.mul %e, %cos : (tensor<?x2x?x4xf32>, tensor<1x1x?x4xf32>) -> tensor<?x2x?x4xf32>
  %os = graph.mul %o, %sin : (tensor<?x2x?x4xf32>, tensor<1x1x?x4xf32>) -> tensor<?x2x?x4xf32>
  %first = graph.sub %ec, %os : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
  %oc = graph.mul %o, %cos : (tensor<?x2x?x4xf32>, tensor<1x1x?x4xf32>) -> tensor<?x2x?x4xf32>
  %es = graph.mul %e, %sin : (tensor<?x2x?x4xf32>, tensor<1x1x?x4xf32>) -> tensor<?x2x?x4xf32>
  %second = graph.sub %oc, %es : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
  %out = graph.concat %first, %second {axis = 3 : i64} : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x8xf32>
  return %out : tensor<?x2x?x8xf32>
}
