// RUN: infer-opt --split-input-file %s | FileCheck %s
// RUN: infer-opt --split-input-file %s | infer-opt --split-input-file | FileCheck %s

// Tests that a planned program with every launch kind prints and parses back.
// CHECK-LABEL: exec.program @forward
// CHECK: %[[ARENA:.+]] = exec.arena size <0 * T + 65536> {bound_tokens = 16 : i64, peak_live_bytes = 4096 : i64}
// CHECK: %[[IDS:.+]] = exec.buffer %[[ARENA]][<0 * T + 0>] size <8 * T + 0> of i64
// CHECK: exec.input "input_ids" into %[[IDS]]
// CHECK: %[[TABLE:.+]] = exec.weight "embed" : tensor<512x64xf32>
// CHECK: exec.embedding %[[TABLE]], %[[IDS]] positions(%{{.+}}) -> %[[X:.+]] {hidden = 64 : i64, position_offset = 2 : i64}
// CHECK: exec.rms_norm %[[X]], %{{.+}} -> %{{.+}} {epsilon = 9.99999997E-7 : f32, features = 64 : i64}
// CHECK: exec.layer_norm %[[X]], %{{.+}} bias(%{{.+}}) -> %{{.+}} {epsilon = 9.99999974E-6 : f32, features = 64 : i64}
// CHECK: exec.gemm %{{.+}}, %{{.+}} bias(%{{.+}}) residual(%[[X]]) -> %{{.+}} {k = 64 : i64, n = 64 : i64, transpose_weight = true}
// CHECK: exec.rotary %{{.+}}, %{{.+}} -> %{{.+}} {head_dim = 16 : i64, num_heads = 8 : i64, rotary_dim = 16 : i64, rotated_heads = 6 : i64}
// CHECK: exec.attention %{{.+}} -> %{{.+}} {causal = true, head_dim = 16 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 2.500000e-01 : f32}
// CHECK: exec.gated_activation %{{.+}} -> %{{.+}} {activation = "silu", features = 160 : i64}
// CHECK: exec.elementwise ins(%{{.+}}) outs(%{{.+}}) {
// CHECK: graph.gelu
// CHECK: exec.yield %{{.+}} : tensor<?x?x64xf32>
// CHECK: exec.output "logits" from %{{.+}}
// CHECK-NEXT: exec.return
exec.program @forward {
  %arena = exec.arena size #exec.affine<0 * T + 65536> {bound_tokens = 16 : i64, peak_live_bytes = 4096 : i64}
  %ids = exec.buffer %arena [#exec.affine<0 * T + 0>] size #exec.affine<8 * T + 0> of i64
  exec.input "input_ids" into %ids
  %table = exec.weight "embed" : tensor<512x64xf32>
  %pos = exec.weight "pos" : tensor<258x64xf32>
  %x = exec.buffer %arena [#exec.affine<0 * T + 256>] size #exec.affine<256 * T + 0> of f32
  exec.embedding %table, %ids positions(%pos) -> %x {hidden = 64 : i64, position_offset = 2 : i64}
  %w = exec.weight "norm" : tensor<64xf32>
  %n = exec.buffer %arena [#exec.affine<0 * T + 8192>] size #exec.affine<256 * T + 0> of f32
  exec.rms_norm %x, %w -> %n {epsilon = 9.99999997E-7 : f32, features = 64 : i64}
  exec.layer_norm %x, %w bias(%w) -> %n {epsilon = 1.0e-5 : f32, features = 64 : i64}
  %proj = exec.weight "proj" : tensor<64x64xf32>
  %b = exec.weight "bias" : tensor<64xf32>
  %y = exec.buffer %arena [#exec.affine<0 * T + 16384>] size #exec.affine<256 * T + 0> of f32
  exec.gemm %n, %proj bias(%b) residual(%x) -> %y {k = 64 : i64, n = 64 : i64, transpose_weight = true}
  %freq = exec.constant dense<[1.0, 0.1]> : tensor<2xf32>
  %qkv = exec.buffer %arena [#exec.affine<0 * T + 24576>] size #exec.affine<512 * T + 0> of f32
  exec.rotary %qkv, %freq -> %qkv {head_dim = 16 : i64, num_heads = 8 : i64, rotary_dim = 16 : i64, rotated_heads = 6 : i64}
  exec.attention %qkv -> %y {causal = true, head_dim = 16 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 2.500000e-01 : f32}
  %gu = exec.buffer %arena [#exec.affine<0 * T + 32768>] size #exec.affine<1280 * T + 0> of f32
  exec.gated_activation %gu -> %y {activation = "silu", features = 160 : i64}
  exec.elementwise ins(%y) outs(%n) {
  ^bb0(%a: tensor<?x?x64xf32>):
    %g = graph.gelu %a {approximate = "tanh"} : (tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
    exec.yield %g : tensor<?x?x64xf32>
  }
  exec.output "logits" from %n
  exec.return
}

// -----

// Tests that an unplanned program (no offsets, no arena size) is valid.
// CHECK-LABEL: exec.program @unplanned
// CHECK: %[[ARENA:.+]] = exec.arena
// CHECK-NEXT: exec.buffer %[[ARENA]] size <4 * T + 16> of f32
exec.program @unplanned {
  %arena = exec.arena
  %a = exec.buffer %arena size #exec.affine<4 * T + 16> of f32
  exec.output "a" from %a
  exec.return
}
