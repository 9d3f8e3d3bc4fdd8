// RUN: infer-opt --split-input-file --verify-diagnostics --infer-convert-graph-to-exec %s | FileCheck %s

// Tests a llama block: token-major tensors get buffers of F * 4 * T bytes
// (input ids 8 * T), weights keep the artifact writer's names (packs as
// "a+b"), the rotary table becomes an inline constant, each fused op its
// launch, and the entry's names bind exec.input / exec.output.
// CHECK-LABEL: exec.program @main_graph
// CHECK: %[[ARENA:.+]] = exec.arena
// CHECK-NEXT: %[[IDS:.+]] = exec.buffer %[[ARENA]] size <8 * T + 0> of i64
// CHECK-NEXT: exec.input "input_ids" into %[[IDS]]
// CHECK-NEXT: %[[TABLE:.+]] = exec.weight "embed" : tensor<4x8xf32>
// CHECK-NEXT: %[[X:.+]] = exec.buffer %[[ARENA]] size <32 * T + 0> of f32
// CHECK-NEXT: exec.embedding %[[TABLE]], %[[IDS]] -> %[[X]] {hidden = 8 : i64}
// CHECK-NEXT: %[[NW:.+]] = exec.weight "norm" : tensor<8xf32>
// CHECK-NEXT: %[[N:.+]] = exec.buffer %[[ARENA]] size <32 * T + 0> of f32
// CHECK-NEXT: exec.rms_norm %[[X]], %[[NW]] -> %[[N]] {epsilon = 9.99999997E-7 : f32, features = 8 : i64}
// CHECK-NEXT: %[[QKV_W:.+]] = exec.weight "wq+wkv" : tensor<8x16xf32>
// CHECK-NEXT: %[[QKV:.+]] = exec.buffer %[[ARENA]] size <64 * T + 0> of f32
// CHECK-NEXT: exec.gemm %[[N]], %[[QKV_W]] -> %[[QKV]] {k = 8 : i64, n = 16 : i64}
// CHECK-NEXT: %[[FREQ:.+]] = exec.constant dense<[1.000000e+00, 1.000000e-01]> : tensor<2xf32>
// CHECK-NEXT: %[[ROT:.+]] = exec.buffer %[[ARENA]] size <64 * T + 0> of f32
// CHECK-NEXT: exec.rotary %[[QKV]], %[[FREQ]] -> %[[ROT]] {head_dim = 4 : i64, num_heads = 4 : i64, rotary_dim = 4 : i64, rotated_heads = 3 : i64}
// CHECK-NEXT: %[[ATT:.+]] = exec.buffer %[[ARENA]] size <32 * T + 0> of f32
// CHECK-NEXT: exec.attention %[[ROT]] -> %[[ATT]] {causal = true, head_dim = 4 : i64, num_heads = 2 : i64, num_kv_heads = 1 : i64, scale = 5.000000e-01 : f32}
// CHECK-NEXT: %[[OW:.+]] = exec.weight "wo" : tensor<8x8xf32>
// CHECK-NEXT: %[[Y:.+]] = exec.buffer %[[ARENA]] size <32 * T + 0> of f32
// CHECK-NEXT: exec.gemm %[[ATT]], %[[OW]] residual(%[[X]]) -> %[[Y]] {k = 8 : i64, n = 8 : i64}
// CHECK-NEXT: %[[H:.+]] = exec.buffer %[[ARENA]] size <16 * T + 0> of f32
// CHECK-NEXT: exec.gated_activation %[[Y]] -> %[[H]] {activation = "silu", features = 4 : i64}
// CHECK-NEXT: exec.output "logits" from %[[H]]
// CHECK-NEXT: exec.return
// CHECK-NOT: func.func
func.func @main_graph(%ids: tensor<?x?xi64> {graph.name = "input_ids"}) -> (tensor<?x?x4xf32> {graph.name = "logits"}) {
  %freq = graph.constant dense<[1.0, 0.1]> : tensor<2xf32>
  %table = graph.weight <embed> : tensor<4x8xf32>
  %nw = graph.weight <norm> : tensor<8xf32>
  %wq = graph.weight <wq> : tensor<8x8xf32>
  %wkv = graph.weight <wkv> : tensor<8x8xf32>
  %qkv_w = graph.pack_weights %wq, %wkv {axis = 1 : i64} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x16xf32>
  %wo = graph.weight <wo> : tensor<8x8xf32>
  %x = graph.embedding %table, %ids : (tensor<4x8xf32>, tensor<?x?xi64>) -> tensor<?x?x8xf32>
  %n = graph.rms_norm %x, %nw {epsilon = 9.99999997E-7 : f32} : (tensor<?x?x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  %qkv = graph.linear %n, %qkv_w : (tensor<?x?x8xf32>, tensor<8x16xf32>) -> tensor<?x?x16xf32>
  %rot = graph.rotary %qkv, %freq {head_dim = 4 : i64, num_heads = 4 : i64, rotary_dim = 4 : i64, rotated_heads = 3 : i64} : (tensor<?x?x16xf32>, tensor<2xf32>) -> tensor<?x?x16xf32>
  %att = graph.attention %rot {causal = true, head_dim = 4 : i64, num_heads = 2 : i64, num_kv_heads = 1 : i64, scale = 5.000000e-01 : f32} : (tensor<?x?x16xf32>) -> tensor<?x?x8xf32>
  %y = graph.linear %att, %wo residual(%x) : (tensor<?x?x8xf32>, tensor<8x8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  %h = graph.gated_activation %y {activation = "silu"} : (tensor<?x?x8xf32>) -> tensor<?x?x4xf32>
  return %h : tensor<?x?x4xf32>
}

{-#
  dialect_resources: {
    graph: {
      embed: "0x040000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
      norm: "0x040000000000000000000000000000000000000000000000000000000000000000000000",
      wq: "0x0400000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
      wkv: "0x0400000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
      wo: "0x0400000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    }
  }
#-}

// -----

// Tests a gpt2-style block: layer norm with bias, a transposed GEMM with bias,
// and a fusion group that becomes an exec.elementwise carrying its region.
// CHECK-LABEL: exec.program @gpt2
// CHECK: exec.layer_norm %[[X:.+]], %[[S:.+]] bias(%[[B:.+]]) -> %[[N:.+]] {epsilon = 9.99999974E-6 : f32, features = 4 : i64}
// CHECK: exec.gemm %[[N]], %{{.+}} bias(%[[B]]) -> %[[U:.+]] {k = 4 : i64, n = 4 : i64, transpose_weight = true}
// CHECK: %[[G:.+]] = exec.buffer %{{.+}} size <16 * T + 0> of f32
// CHECK-NEXT: exec.elementwise ins(%[[U]]) outs(%[[G]]) {
// CHECK-NEXT: ^bb0(%[[A:.+]]: tensor<?x?x4xf32>):
// CHECK-NEXT: %[[R:.+]] = graph.gelu %[[A]] {approximate = "tanh"}
// CHECK-NEXT: exec.yield %[[R]] : tensor<?x?x4xf32>
// CHECK: exec.output "output0" from %[[G]]
func.func @gpt2(%x: tensor<?x?x4xf32>) -> tensor<?x?x4xf32> {
  %s = graph.constant dense<1.0> : tensor<4xf32>
  %b = graph.constant dense<0.5> : tensor<4xf32>
  %w = graph.constant dense<0.25> : tensor<4x4xf32>
  %n = graph.layer_normalization %x, %s bias(%b) {axis = 2 : i64} : (tensor<?x?x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x?x4xf32>
  %u = graph.linear %n, %w bias(%b) {transpose_weight = true} : (tensor<?x?x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<?x?x4xf32>
  %g = graph.fusion_group %u : (tensor<?x?x4xf32>) -> tensor<?x?x4xf32> {
  ^bb0(%a: tensor<?x?x4xf32>):
    %r = graph.gelu %a {approximate = "tanh"} : (tensor<?x?x4xf32>) -> tensor<?x?x4xf32>
    graph.yield %r : tensor<?x?x4xf32>
  }
  return %g : tensor<?x?x4xf32>
}

// -----

// Tests that an op the lowering does not support is an error naming it.
func.func @unsupported(%x: tensor<?x?x4xf32>) -> tensor<?x?x4xf32> {
  // expected-error @+1 {{exec lowering: 'graph.relu' is not supported (it lowers graph.embedding, rms_norm, layer_normalization, linear, quantized_linear, rotary, attention, gated_activation, moe, gather_features, reshape, slice (static, last axis), fusion_group, weight, pack_weights, quantize_weight, constant)}}
  %y = graph.relu %x : (tensor<?x?x4xf32>) -> tensor<?x?x4xf32>
  return %y : tensor<?x?x4xf32>
}

// -----

// Tests that a tensor that is neither token-major nor static cannot be sized.
// expected-error @+1 {{exec lowering: 'tensor<?x4x?xf32>' is neither [batch, seq, static dims...], [batch * seq, static dims...] nor static}}
func.func @unsized(%x: tensor<?x4x?xf32>) -> tensor<?x4x?xf32> {
  return %x : tensor<?x4x?xf32>
}

// -----

// Tests that reshapes and a last-axis slice (a gpt-neox qkv split) become
// exec.copy launches: a reshape is a whole-row copy, the slice a strided row
// copy; their shape/bound operands leave no exec.constant behind.
// CHECK-LABEL: exec.program @split
// CHECK: %[[X:.+]] = exec.buffer %{{.+}} size <48 * T + 0> of f32
// CHECK-NEXT: exec.input "input0" into %[[X]]
// CHECK-NEXT: %[[H:.+]] = exec.buffer %{{.+}} size <48 * T + 0> of f32
// CHECK-NEXT: exec.copy %[[X]] -> %[[H]] {in_features = 6 : i64, length = 6 : i64, offset = 0 : i64}
// CHECK-NEXT: %[[K:.+]] = exec.buffer %{{.+}} size <16 * T + 0> of f32
// CHECK-NEXT: exec.copy %[[H]] -> %[[K]] {in_features = 6 : i64, length = 2 : i64, offset = 2 : i64}
// CHECK-NEXT: %[[F:.+]] = exec.buffer %{{.+}} size <16 * T + 0> of f32
// CHECK-NEXT: exec.copy %[[K]] -> %[[F]] {in_features = 4 : i64, length = 4 : i64, offset = 0 : i64}
// CHECK-NEXT: exec.output "output0" from %[[F]]
// CHECK-NOT: exec.constant
func.func @split(%x: tensor<?x?x12xf32>) -> tensor<?x?x4xf32> {
  %s4 = graph.constant dense<[0, 0, 2, 6]> : tensor<4xi64>
  %s3 = graph.constant dense<[0, 0, 4]> : tensor<3xi64>
  %start = graph.constant dense<2> : tensor<1xi64>
  %end = graph.constant dense<4> : tensor<1xi64>
  %axis = graph.constant dense<3> : tensor<1xi64>
  %step = graph.constant dense<1> : tensor<1xi64>
  %h = graph.reshape %x, %s4 : (tensor<?x?x12xf32>, tensor<4xi64>) -> tensor<?x?x2x6xf32>
  %k = graph.slice %h, %start, %end, %axis, %step : (tensor<?x?x2x6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x2x2xf32>
  %f = graph.reshape %k, %s3 : (tensor<?x?x2x2xf32>, tensor<3xi64>) -> tensor<?x?x4xf32>
  return %f : tensor<?x?x4xf32>
}

// -----

// Tests that a slice of a non-last axis is rejected.
func.func @slice_axis(%x: tensor<?x?x2x6xf32>) -> tensor<?x?x1x6xf32> {
  %start = graph.constant dense<0> : tensor<1xi64>
  %end = graph.constant dense<1> : tensor<1xi64>
  %axis = graph.constant dense<2> : tensor<1xi64>
  %step = graph.constant dense<1> : tensor<1xi64>
  // expected-error @+1 {{exec lowering: graph.slice must be a constant unit-step slice of one static last axis}}
  %y = graph.slice %x, %start, %end, %axis, %step : (tensor<?x?x2x6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x1x6xf32>
  return %y : tensor<?x?x1x6xf32>
}

// -----

// Tests that tokens flattened to [batch * seq, features] (Qwen2-MoE's shared expert) get buffers
// of T rows like [batch, seq, features], and that the ops computing only the target shape of the
// reshape back (graph.shape of the input, a concat) are not lowered: a reshape copies bytes.
// CHECK-LABEL: exec.program @flat_tokens
// CHECK: %[[X:.+]] = exec.buffer %{{.+}} size <32 * T + 0> of f32
// CHECK-NEXT: exec.input "x" into %[[X]]
// CHECK-NEXT: %[[FLAT:.+]] = exec.buffer %{{.+}} size <32 * T + 0> of f32
// CHECK-NEXT: exec.copy %[[X]] -> %[[FLAT]] {in_features = 8 : i64, length = 8 : i64, offset = 0 : i64}
// CHECK-NEXT: %[[W:.+]] = exec.weight "w" : tensor<8x8xf32>
// CHECK-NEXT: %[[Y:.+]] = exec.buffer %{{.+}} size <32 * T + 0> of f32
// CHECK-NEXT: exec.gemm %[[FLAT]], %[[W]] -> %[[Y]] {k = 8 : i64, n = 8 : i64}
// CHECK-NEXT: %[[BACK:.+]] = exec.buffer %{{.+}} size <32 * T + 0> of f32
// CHECK-NEXT: exec.copy %[[Y]] -> %[[BACK]]
// CHECK-NEXT: exec.output "y" from %[[BACK]]
func.func @flat_tokens(%x: tensor<?x?x8xf32> {graph.name = "x"}) -> (tensor<?x?x8xf32> {graph.name = "y"}) {
  %w = graph.weight <w> : tensor<8x8xf32>
  %flat_shape = graph.constant dense<[-1, 8]> : tensor<2xi64>
  %flat = graph.reshape %x, %flat_shape : (tensor<?x?x8xf32>, tensor<2xi64>) -> tensor<?x8xf32>
  %y = graph.linear %flat, %w : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %bs = graph.shape %x {end = 2 : i64} : (tensor<?x?x8xf32>) -> tensor<2xi64>
  %f = graph.constant dense<8> : tensor<1xi64>
  %back_shape = graph.concat %bs, %f {axis = 0 : i64} : (tensor<2xi64>, tensor<1xi64>) -> tensor<3xi64>
  %back = graph.reshape %y, %back_shape : (tensor<?x8xf32>, tensor<3xi64>) -> tensor<?x?x8xf32>
  return %back : tensor<?x?x8xf32>
}

// -----

// Tests graph.gather_features: one exec.copy per input into the same buffer,
// with an i64 map of the features it writes (-1: another input's), or a
// plain row copy when one input gives the whole row in order.
// CHECK-LABEL: exec.program @gather
// CHECK: %[[A:.+]] = exec.buffer %{{.+}} size <16 * T + 0> of f32
// CHECK: %[[B:.+]] = exec.buffer %{{.+}} size <8 * T + 0> of f32
// CHECK: %[[K:.+]] = exec.buffer %{{.+}} size <24 * T + 0> of f32
// CHECK-NEXT: %[[MA:.+]] = exec.constant dense<[0, 1, -1, -1, 2, 3]> : tensor<6xi64>
// CHECK-NEXT: exec.copy %[[A]] map(%[[MA]]) -> %[[K]] {in_features = 4 : i64, length = 6 : i64, offset = 0 : i64}
// CHECK-NEXT: %[[MB:.+]] = exec.constant dense<[-1, -1, 0, 1, -1, -1]> : tensor<6xi64>
// CHECK-NEXT: exec.copy %[[B]] map(%[[MB]]) -> %[[K]] {in_features = 2 : i64, length = 6 : i64, offset = 0 : i64}
// CHECK: %[[S:.+]] = exec.buffer %{{.+}} size <8 * T + 0> of f32
// CHECK-NEXT: exec.copy %[[A]] -> %[[S]] {in_features = 4 : i64, length = 2 : i64, offset = 1 : i64}
func.func @gather(%a: tensor<?x?x4xf32> {graph.name = "a"}, %b: tensor<?x?x2xf32> {graph.name = "b"}) -> (tensor<?x?x6xf32> {graph.name = "k"}, tensor<?x?x2xf32> {graph.name = "s"}) {
  %k = graph.gather_features %a, %b {map = array<i64: 0, 1, 4, 5, 2, 3>} : (tensor<?x?x4xf32>, tensor<?x?x2xf32>) -> tensor<?x?x6xf32>
  %s = graph.gather_features %a {map = array<i64: 1, 2>} : (tensor<?x?x4xf32>) -> tensor<?x?x2xf32>
  return %k, %s : tensor<?x?x6xf32>, tensor<?x?x2xf32>
}

// -----

// Tests a quantized linear: the quantize_weight's results become two
// exec.weight buffers under the artifact writer's names ("<source>:int4g32"
// and its ":scales"), the linear an exec.quantized_gemm with the scheme.
// CHECK-LABEL: exec.program @quantized
// CHECK: %[[Q:.+]] = exec.weight "wq+wk:int4g4" : tensor<16x4xui8>
// CHECK-NEXT: %[[S:.+]] = exec.weight "wq+wk:int4g4:scales" : tensor<16x2xf32>
// CHECK-NEXT: %[[Y:.+]] = exec.buffer %{{.+}} size <64 * T + 0> of f32
// CHECK-NEXT: exec.quantized_gemm %{{.+}}, %[[Q]], %[[S]] residual(%{{.+}}) -> %[[Y]] {group_size = 4 : i64, k = 8 : i64, n = 16 : i64, scheme = "int4"}
func.func @quantized(%x: tensor<?x?x8xf32> {graph.dims = ["batch", "seq", ""]}, %r: tensor<?x?x16xf32> {graph.dims = ["batch", "seq", ""]}) -> tensor<?x?x16xf32> {
  %wq = graph.weight <wq> : tensor<8x8xf32>
  %wk = graph.weight <wk> : tensor<8x8xf32>
  %w = graph.pack_weights %wq, %wk {axis = 1 : i64, transpose} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<16x8xf32>
  %q, %s = graph.quantize_weight %w {scheme = "int4", group_size = 4 : i64} : (tensor<16x8xf32>) -> (tensor<16x4xui8>, tensor<16x2xf32>)
  %y = graph.quantized_linear %x, %q, %s residual(%r) {scheme = "int4", group_size = 4 : i64} : (tensor<?x?x8xf32>, tensor<16x4xui8>, tensor<16x2xf32>, tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  return %y : tensor<?x?x16xf32>
}
