// RUN: infer-opt --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(exec.program(infer-step-entry{block-size=16 max-seq-len=64}))' %s | FileCheck %s

// Tests a llama-style program: the ids become "token_ids", five i64 metadata
// inputs follow (block_tables is B = 64 / 16 = 4 entries per sequence, S <= T),
// rotary reads the positions and each attention becomes a kv_attention of
// its layer, numbered in program order, keeping its sliding window.
// CHECK-LABEL: exec.program @llama
// CHECK: %[[ARENA:.+]] = exec.arena
// CHECK-NEXT: %[[IDS:.+]] = exec.buffer %[[ARENA]] size <8 * T + 0> of i64
// CHECK-NEXT: exec.input "token_ids" into %[[IDS]]
// CHECK-NEXT: %[[POS:.+]] = exec.buffer %[[ARENA]] size <8 * T + 0> of i64
// CHECK-NEXT: exec.input "positions" into %[[POS]]
// CHECK-NEXT: %[[STARTS:.+]] = exec.buffer %[[ARENA]] size <8 * T + 8> of i64
// CHECK-NEXT: exec.input "seq_starts" into %[[STARTS]]
// CHECK-NEXT: %[[LENS:.+]] = exec.buffer %[[ARENA]] size <8 * T + 0> of i64
// CHECK-NEXT: exec.input "context_lens" into %[[LENS]]
// CHECK-NEXT: %[[TABLES:.+]] = exec.buffer %[[ARENA]] size <32 * T + 0> of i64
// CHECK-NEXT: exec.input "block_tables" into %[[TABLES]]
// CHECK-NEXT: %[[SLOTS:.+]] = exec.buffer %[[ARENA]] size <8 * T + 0> of i64
// CHECK-NEXT: exec.input "slot_ids" into %[[SLOTS]]
// CHECK: exec.rotary %[[QKV:.+]], %[[FREQ:.+]] positions(%[[POS]]) -> %[[ROT:.+]] {head_dim
// CHECK: exec.kv_attention %[[ROT]] meta(%[[STARTS]], %[[LENS]], %[[TABLES]], %[[SLOTS]]) -> %[[O0:.+]] {block_size = 16 : i64, head_dim = 4 : i64, layer = 0 : i64, num_heads = 2 : i64, num_kv_heads = 1 : i64, scale = 5.000000e-01 : f32}
// CHECK: exec.rotary %[[O0]], %[[FREQ]] positions(%[[POS]]) -> %[[ROT1:.+]] {head_dim
// CHECK: exec.kv_attention %[[ROT1]] meta(%[[STARTS]], %[[LENS]], %[[TABLES]], %[[SLOTS]]) -> %{{.+}} {block_size = 16 : i64, head_dim = 4 : i64, layer = 1 : i64, num_heads = 2 : i64, num_kv_heads = 1 : i64, scale = 5.000000e-01 : f32, window = 4 : i64}
// CHECK-NOT: exec.attention
exec.program @llama {
  %arena = exec.arena
  %ids = exec.buffer %arena size #exec.affine<8 * T + 0> of i64
  exec.input "input_ids" into %ids
  %table = exec.weight "embed" : tensor<4x16xf32>
  %x = exec.buffer %arena size #exec.affine<64 * T + 0> of f32
  exec.embedding %table, %ids -> %x {hidden = 16 : i64}
  %freq = exec.constant dense<[1.0, 0.1]> : tensor<2xf32>
  %rot = exec.buffer %arena size #exec.affine<64 * T + 0> of f32
  exec.rotary %x, %freq -> %rot {head_dim = 4 : i64, num_heads = 4 : i64, rotary_dim = 4 : i64, rotated_heads = 3 : i64}
  %o0 = exec.buffer %arena size #exec.affine<32 * T + 0> of f32
  exec.attention %rot -> %o0 {causal = true, head_dim = 4 : i64, num_heads = 2 : i64, num_kv_heads = 1 : i64, scale = 5.000000e-01 : f32}
  %rot1 = exec.buffer %arena size #exec.affine<64 * T + 0> of f32
  exec.rotary %o0, %freq -> %rot1 {head_dim = 4 : i64, num_heads = 4 : i64, rotary_dim = 4 : i64, rotated_heads = 3 : i64}
  %o1 = exec.buffer %arena size #exec.affine<32 * T + 0> of f32
  exec.attention %rot1 -> %o1 {causal = true, head_dim = 4 : i64, num_heads = 2 : i64, num_kv_heads = 1 : i64, scale = 5.000000e-01 : f32, window = 4 : i64}
  exec.output "logits" from %o1
  exec.return
}

// -----

// Tests that a learned position table reads the step's positions.
// CHECK-LABEL: exec.program @gpt2
// CHECK: exec.input "token_ids"
// CHECK-NEXT: %[[POS:.+]] = exec.buffer %{{.+}} size <8 * T + 0> of i64
// CHECK-NEXT: exec.input "positions" into %[[POS]]
// CHECK: exec.embedding %{{.+}}, %{{.+}} positions(%{{.+}}) position_ids(%[[POS]]) -> %{{.+}} {hidden = 16 : i64, position_offset = 2 : i64}
exec.program @gpt2 {
  %arena = exec.arena
  %ids = exec.buffer %arena size #exec.affine<8 * T + 0> of i64
  exec.input "input_ids" into %ids
  %table = exec.weight "embed" : tensor<4x16xf32>
  %ptable = exec.weight "pos" : tensor<8x16xf32>
  %x = exec.buffer %arena size #exec.affine<64 * T + 0> of f32
  exec.embedding %table, %ids positions(%ptable) -> %x {hidden = 16 : i64, position_offset = 2 : i64}
  exec.output "logits" from %x
  exec.return
}

// -----

// Tests that a non-causal attention is rejected (it cannot be served from a cache).
exec.program @bidirectional {
  %arena = exec.arena
  %ids = exec.buffer %arena size #exec.affine<8 * T + 0> of i64
  exec.input "input_ids" into %ids
  %x = exec.buffer %arena size #exec.affine<48 * T + 0> of f32
  %o = exec.buffer %arena size #exec.affine<16 * T + 0> of f32
  // expected-error @+1 {{step entry: only causal attention can read a KV cache}}
  exec.attention %x -> %o {causal = false, head_dim = 4 : i64, num_heads = 1 : i64, num_kv_heads = 1 : i64, scale = 5.000000e-01 : f32}
  exec.output "logits" from %o
  exec.return
}

// -----

// Tests that a program with a second input (an attention mask) is rejected.
// expected-error @+1 {{step entry: expected one input (the token ids), found 2}}
exec.program @masked {
  %arena = exec.arena
  %ids = exec.buffer %arena size #exec.affine<8 * T + 0> of i64
  exec.input "input_ids" into %ids
  %mask = exec.buffer %arena size #exec.affine<8 * T + 0> of i64
  exec.input "attention_mask" into %mask
  exec.output "logits" from %ids
  exec.return
}

// -----

// Tests that layers with different KV shapes are rejected (one cache layout).
exec.program @mixed {
  %arena = exec.arena
  %ids = exec.buffer %arena size #exec.affine<8 * T + 0> of i64
  exec.input "input_ids" into %ids
  %x = exec.buffer %arena size #exec.affine<48 * T + 0> of f32
  %o0 = exec.buffer %arena size #exec.affine<16 * T + 0> of f32
  exec.attention %x -> %o0 {causal = true, head_dim = 4 : i64, num_heads = 1 : i64, num_kv_heads = 1 : i64, scale = 5.000000e-01 : f32}
  %y = exec.buffer %arena size #exec.affine<96 * T + 0> of f32
  %o1 = exec.buffer %arena size #exec.affine<32 * T + 0> of f32
  // expected-error @+1 {{step entry: layer 1 has 1 KV heads of 8, unlike the layers before it}}
  exec.attention %y -> %o1 {causal = true, head_dim = 8 : i64, num_heads = 1 : i64, num_kv_heads = 1 : i64, scale = 5.000000e-01 : f32}
  exec.output "logits" from %o1
  exec.return
}

// -----

// Tests that the LM head runs on the logit rows only: a per-logit-row
// "logit_indices" input, the hidden rows gathered before the head GEMM, and
// the logits sized per logit row (R) instead of per token.
// CHECK-LABEL: exec.program @head
// CHECK: exec.input "slot_ids"
// CHECK-NEXT: %[[IDX:.+]] = exec.buffer %{{.+}} size <8 * T + 0> of i64 {per_logit_row}
// CHECK-NEXT: exec.input "logit_indices" into %[[IDX]]
// CHECK-NEXT: %[[ROWS:.+]] = exec.buffer %{{.+}} size <64 * T + 0> of f32 {per_logit_row}
// CHECK: %[[X:.+]] = exec.buffer %{{.+}} size <64 * T + 0> of f32
// CHECK-NOT: per_logit_row
// CHECK: %[[LOGITS:.+]] = exec.buffer %{{.+}} size <32 * T + 0> of f32 {per_logit_row}
// CHECK-NEXT: exec.gather_rows %[[X]], %[[IDX]] -> %[[ROWS]] {features = 16 : i64}
// CHECK-NEXT: exec.gemm %[[ROWS]], %{{.+}} -> %[[LOGITS]] {k = 16 : i64, n = 8 : i64}
exec.program @head {
  %arena = exec.arena
  %ids = exec.buffer %arena size #exec.affine<8 * T + 0> of i64
  exec.input "input_ids" into %ids
  %table = exec.weight "embed" : tensor<4x16xf32>
  %x = exec.buffer %arena size #exec.affine<64 * T + 0> of f32
  exec.embedding %table, %ids -> %x {hidden = 16 : i64}
  %w = exec.weight "head" : tensor<16x8xf32>
  %logits = exec.buffer %arena size #exec.affine<32 * T + 0> of f32
  exec.gemm %x, %w -> %logits {k = 16 : i64, n = 8 : i64}
  exec.output "logits" from %logits
  exec.return
}

// -----

// Tests that a final norm only the LM head reads runs on the logit rows: the
// gather moves before it (it reads the gathered rows and writes a
// per-logit-row buffer), so a batch-1 LM head can fold it.
// CHECK-LABEL: exec.program @norm_head
// CHECK: exec.input "logit_indices" into %[[IDX:[^ ]+]]
// CHECK-NEXT: %[[ROWS:.+]] = exec.buffer %{{.+}} size <64 * T + 0> of f32 {per_logit_row}
// CHECK: %[[X:.+]] = exec.buffer %{{.+}} size <64 * T + 0> of f32
// CHECK: %[[NORMED:.+]] = exec.buffer %{{.+}} size <64 * T + 0> of f32 {per_logit_row}
// CHECK-NEXT: exec.gather_rows %[[X]], %[[IDX]] -> %[[ROWS]] {features = 16 : i64}
// CHECK-NEXT: exec.rms_norm %[[ROWS]], %{{.+}} -> %[[NORMED]]
// CHECK: exec.gemm %[[NORMED]], %{{.+}} -> %{{.+}} {k = 16 : i64, n = 8 : i64}
// CHECK-NOT: gather_rows
exec.program @norm_head {
  %arena = exec.arena
  %ids = exec.buffer %arena size #exec.affine<8 * T + 0> of i64
  exec.input "input_ids" into %ids
  %table = exec.weight "embed" : tensor<4x16xf32>
  %x = exec.buffer %arena size #exec.affine<64 * T + 0> of f32
  exec.embedding %table, %ids -> %x {hidden = 16 : i64}
  %g = exec.weight "norm" : tensor<16xf32>
  %normed = exec.buffer %arena size #exec.affine<64 * T + 0> of f32
  exec.rms_norm %x, %g -> %normed {features = 16 : i64, epsilon = 1.0e-06 : f32}
  %w = exec.weight "head" : tensor<16x8xf32>
  %logits = exec.buffer %arena size #exec.affine<32 * T + 0> of f32
  exec.gemm %normed, %w -> %logits {k = 16 : i64, n = 8 : i64}
  exec.output "logits" from %logits
  exec.return
}

// -----

// Tests that a norm whose output something else reads as well stays per
// token, the gather after it.
// CHECK-LABEL: exec.program @shared_norm
// CHECK: exec.rms_norm %{{.+}}, %{{.+}} -> %[[NORMED:[^ ]+]]
// CHECK: exec.gather_rows %[[NORMED]]
exec.program @shared_norm {
  %arena = exec.arena
  %ids = exec.buffer %arena size #exec.affine<8 * T + 0> of i64
  exec.input "input_ids" into %ids
  %table = exec.weight "embed" : tensor<4x16xf32>
  %x = exec.buffer %arena size #exec.affine<64 * T + 0> of f32
  exec.embedding %table, %ids -> %x {hidden = 16 : i64}
  %g = exec.weight "norm" : tensor<16xf32>
  %normed = exec.buffer %arena size #exec.affine<64 * T + 0> of f32
  exec.rms_norm %x, %g -> %normed {features = 16 : i64, epsilon = 1.0e-06 : f32}
  %w = exec.weight "head" : tensor<16x8xf32>
  %logits = exec.buffer %arena size #exec.affine<32 * T + 0> of f32
  %other = exec.buffer %arena size #exec.affine<32 * T + 0> of f32
  exec.gemm %normed, %w -> %other {k = 16 : i64, n = 8 : i64}
  exec.gemm %normed, %w -> %logits {k = 16 : i64, n = 8 : i64}
  exec.output "logits" from %logits
  exec.return
}

// -----

// Tests that logits made any other way (here a GEMM with a residual, which
// reads a per-token buffer) keep all T rows: no gather, no logit_indices.
// CHECK-LABEL: exec.program @residual_head
// CHECK-NOT: logit_indices
// CHECK-NOT: gather_rows
// CHECK-NOT: per_logit_row
// CHECK: exec.return
exec.program @residual_head {
  %arena = exec.arena
  %ids = exec.buffer %arena size #exec.affine<8 * T + 0> of i64
  exec.input "input_ids" into %ids
  %table = exec.weight "embed" : tensor<4x8xf32>
  %x = exec.buffer %arena size #exec.affine<32 * T + 0> of f32
  exec.embedding %table, %ids -> %x {hidden = 8 : i64}
  %w = exec.weight "head" : tensor<8x8xf32>
  %logits = exec.buffer %arena size #exec.affine<32 * T + 0> of f32
  exec.gemm %x, %w residual(%x) -> %logits {k = 8 : i64, n = 8 : i64}
  exec.output "logits" from %logits
  exec.return
}
