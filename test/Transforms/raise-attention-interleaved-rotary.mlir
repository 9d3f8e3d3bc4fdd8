// RUN: infer-opt --split-input-file --infer-raise-attention %s | FileCheck %s

// Tests that GPT-J's interleaved rotary (rotate_every_two: stack(-x[..., 1::2],
// x[..., ::2]).flatten(-2), with cos/sin repeated per pair) becomes
// graph.rotary {interleaved = true}; the layout is proven by evaluation.
// CHECK-LABEL: func.func @gptj_rotary
// CHECK-SAME: (%[[Q:.+]]: tensor<?x?x32xf32>
// CHECK: %[[R:.+]] = graph.rotary %[[Q]], %{{.+}} {head_dim = 16 : i64, interleaved = true, num_heads = 2 : i64, rotary_dim = 16 : i64, rotated_heads = 2 : i64}
// CHECK-NOT: graph.cos
// CHECK: return
func.func @gptj_rotary(%q: tensor<?x?x32xf32> {graph.dims = ["batch", "seq", ""]}) -> tensor<?x2x?x16xf32> {
  %split = graph.constant dense<[0, 0, 2, 16]> : tensor<4xi64>
  %q4 = graph.reshape %q, %split : (tensor<?x?x32xf32>, tensor<4xi64>) -> tensor<?x?x2x16xf32>
  %x = graph.transpose %q4 {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x?x2x16xf32>) -> tensor<?x2x?x16xf32>
  // Angles: positions 0..seq-1 times inv_freq (theta 10000, head_dim 16).
  %shape = graph.shape %q {start = 1 : i64, end = 2 : i64} : (tensor<?x?x32xf32>) -> tensor<1xi64>
  %seq = graph.squeeze %shape : (tensor<1xi64>) -> tensor<i64>
  %c0 = graph.constant dense<0> : tensor<i64>
  %c1 = graph.constant dense<1> : tensor<i64>
  %pos = graph.range %c0, %seq, %c1 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  %posf = graph.cast %pos : (tensor<?xi64>) -> tensor<?xf32>
  %ax1 = graph.constant dense<1> : tensor<1xi64>
  %col = graph.unsqueeze %posf, %ax1 : (tensor<?xf32>, tensor<1xi64>) -> tensor<?x1xf32>
  %inv = graph.constant dense<[1.000000000e+00, 3.162277639e-01, 1.000000015e-01, 3.162277490e-02, 9.999999776e-03, 3.162277630e-03, 1.000000047e-03, 3.162277571e-04]> : tensor<8xf32>
  %angles = graph.mul %col, %inv : (tensor<?x1xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  // repeat_interleave(2) of cos and sin, as [1, 1, seq, 16].
  %ax2 = graph.constant dense<2> : tensor<1xi64>
  %reps = graph.constant dense<[1, 1, 2]> : tensor<3xi64>
  %flat = graph.constant dense<[-1, 16]> : tensor<2xi64>
  %ax01 = graph.constant dense<[0, 1]> : tensor<2xi64>
  %cos8 = graph.cos %angles : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %cos81 = graph.unsqueeze %cos8, %ax2 : (tensor<?x8xf32>, tensor<1xi64>) -> tensor<?x8x1xf32>
  %cos82 = graph.tile %cos81, %reps : (tensor<?x8x1xf32>, tensor<3xi64>) -> tensor<?x8x2xf32>
  %cos16 = graph.reshape %cos82, %flat : (tensor<?x8x2xf32>, tensor<2xi64>) -> tensor<?x16xf32>
  %cos = graph.unsqueeze %cos16, %ax01 : (tensor<?x16xf32>, tensor<2xi64>) -> tensor<1x1x?x16xf32>
  %sin8 = graph.sin %angles : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %sin81 = graph.unsqueeze %sin8, %ax2 : (tensor<?x8xf32>, tensor<1xi64>) -> tensor<?x8x1xf32>
  %sin82 = graph.tile %sin81, %reps : (tensor<?x8x1xf32>, tensor<3xi64>) -> tensor<?x8x2xf32>
  %sin16 = graph.reshape %sin82, %flat : (tensor<?x8x2xf32>, tensor<2xi64>) -> tensor<?x16xf32>
  %sin = graph.unsqueeze %sin16, %ax01 : (tensor<?x16xf32>, tensor<2xi64>) -> tensor<1x1x?x16xf32>
  // rotate_every_two(x).
  %s0 = graph.constant dense<0> : tensor<1xi64>
  %s1 = graph.constant dense<1> : tensor<1xi64>
  %e16 = graph.constant dense<16> : tensor<1xi64>
  %ax3 = graph.constant dense<3> : tensor<1xi64>
  %st2 = graph.constant dense<2> : tensor<1xi64>
  %even = graph.slice %x, %s0, %e16, %ax3, %st2 : (tensor<?x2x?x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2x?x8xf32>
  %odd = graph.slice %x, %s1, %e16, %ax3, %st2 : (tensor<?x2x?x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2x?x8xf32>
  %nodd = graph.neg %odd : (tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32>
  %ax4 = graph.constant dense<4> : tensor<1xi64>
  %a = graph.unsqueeze %nodd, %ax4 : (tensor<?x2x?x8xf32>, tensor<1xi64>) -> tensor<?x2x?x8x1xf32>
  %b = graph.unsqueeze %even, %ax4 : (tensor<?x2x?x8xf32>, tensor<1xi64>) -> tensor<?x2x?x8x1xf32>
  %st = graph.concat %a, %b {axis = 4 : i64} : (tensor<?x2x?x8x1xf32>, tensor<?x2x?x8x1xf32>) -> tensor<?x2x?x8x2xf32>
  %back = graph.constant dense<[0, 0, 0, 16]> : tensor<4xi64>
  %rot = graph.reshape %st, %back : (tensor<?x2x?x8x2xf32>, tensor<4xi64>) -> tensor<?x2x?x16xf32>
  %xc = graph.mul %x, %cos : (tensor<?x2x?x16xf32>, tensor<1x1x?x16xf32>) -> tensor<?x2x?x16xf32>
  %rs = graph.mul %rot, %sin : (tensor<?x2x?x16xf32>, tensor<1x1x?x16xf32>) -> tensor<?x2x?x16xf32>
  %out = graph.add %xc, %rs : (tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) -> tensor<?x2x?x16xf32>
  return %out : tensor<?x2x?x16xf32>
}

// -----

// Tests that a rotation whose pairs do not match its cos/sin layout (GPT-J's
// rotate_every_two with Llama's half-split tables) is not raised: neither
// layout proves equal, so the graph stays as it is.
// CHECK-LABEL: func.func @mixed_layouts
// CHECK-NOT: graph.rotary
// CHECK: graph.cos
func.func @mixed_layouts(%q: tensor<?x?x32xf32> {graph.dims = ["batch", "seq", ""]}) -> tensor<?x2x?x16xf32> {
  %split = graph.constant dense<[0, 0, 2, 16]> : tensor<4xi64>
  %q4 = graph.reshape %q, %split : (tensor<?x?x32xf32>, tensor<4xi64>) -> tensor<?x?x2x16xf32>
  %x = graph.transpose %q4 {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x?x2x16xf32>) -> tensor<?x2x?x16xf32>
  // Angles: positions 0..seq-1 times inv_freq (theta 10000, head_dim 16).
  %shape = graph.shape %q {start = 1 : i64, end = 2 : i64} : (tensor<?x?x32xf32>) -> tensor<1xi64>
  %seq = graph.squeeze %shape : (tensor<1xi64>) -> tensor<i64>
  %c0 = graph.constant dense<0> : tensor<i64>
  %c1 = graph.constant dense<1> : tensor<i64>
  %pos = graph.range %c0, %seq, %c1 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  %posf = graph.cast %pos : (tensor<?xi64>) -> tensor<?xf32>
  %ax1 = graph.constant dense<1> : tensor<1xi64>
  %col = graph.unsqueeze %posf, %ax1 : (tensor<?xf32>, tensor<1xi64>) -> tensor<?x1xf32>
  %inv = graph.constant dense<[1.000000000e+00, 3.162277639e-01, 1.000000015e-01, 3.162277490e-02, 9.999999776e-03, 3.162277630e-03, 1.000000047e-03, 3.162277571e-04]> : tensor<8xf32>
  %angles = graph.mul %col, %inv : (tensor<?x1xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  // repeat_interleave(2) of cos and sin, as [1, 1, seq, 16].
  %ax2 = graph.constant dense<2> : tensor<1xi64>
  %reps = graph.constant dense<[1, 1, 2]> : tensor<3xi64>
  %flat = graph.constant dense<[-1, 16]> : tensor<2xi64>
  %ax01 = graph.constant dense<[0, 1]> : tensor<2xi64>
  %cos8 = graph.cos %angles : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %cos16 = graph.concat %cos8, %cos8 {axis = 1 : i64} : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x16xf32>
  %cos = graph.unsqueeze %cos16, %ax01 : (tensor<?x16xf32>, tensor<2xi64>) -> tensor<1x1x?x16xf32>
  %sin8 = graph.sin %angles : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %sin16 = graph.concat %sin8, %sin8 {axis = 1 : i64} : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x16xf32>
  %sin = graph.unsqueeze %sin16, %ax01 : (tensor<?x16xf32>, tensor<2xi64>) -> tensor<1x1x?x16xf32>
  // rotate_every_two(x).
  %s0 = graph.constant dense<0> : tensor<1xi64>
  %s1 = graph.constant dense<1> : tensor<1xi64>
  %e16 = graph.constant dense<16> : tensor<1xi64>
  %ax3 = graph.constant dense<3> : tensor<1xi64>
  %st2 = graph.constant dense<2> : tensor<1xi64>
  %even = graph.slice %x, %s0, %e16, %ax3, %st2 : (tensor<?x2x?x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2x?x8xf32>
  %odd = graph.slice %x, %s1, %e16, %ax3, %st2 : (tensor<?x2x?x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2x?x8xf32>
  %nodd = graph.neg %odd : (tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32>
  %ax4 = graph.constant dense<4> : tensor<1xi64>
  %a = graph.unsqueeze %nodd, %ax4 : (tensor<?x2x?x8xf32>, tensor<1xi64>) -> tensor<?x2x?x8x1xf32>
  %b = graph.unsqueeze %even, %ax4 : (tensor<?x2x?x8xf32>, tensor<1xi64>) -> tensor<?x2x?x8x1xf32>
  %st = graph.concat %a, %b {axis = 4 : i64} : (tensor<?x2x?x8x1xf32>, tensor<?x2x?x8x1xf32>) -> tensor<?x2x?x8x2xf32>
  %back = graph.constant dense<[0, 0, 0, 16]> : tensor<4xi64>
  %rot = graph.reshape %st, %back : (tensor<?x2x?x8x2xf32>, tensor<4xi64>) -> tensor<?x2x?x16xf32>
  %xc = graph.mul %x, %cos : (tensor<?x2x?x16xf32>, tensor<1x1x?x16xf32>) -> tensor<?x2x?x16xf32>
  %rs = graph.mul %rot, %sin : (tensor<?x2x?x16xf32>, tensor<1x1x?x16xf32>) -> tensor<?x2x?x16xf32>
  %out = graph.add %xc, %rs : (tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) -> tensor<?x2x?x16xf32>
  return %out : tensor<?x2x?x16xf32>
}

