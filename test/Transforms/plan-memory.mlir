// RUN: infer-opt --split-input-file --pass-pipeline='builtin.module(exec.program(infer-plan-memory{max-batch-tokens=4}))' %s | FileCheck %s

// Tests that buffers whose lifetimes are disjoint share bytes: a chain of
// norms keeps only two [T, 64] f32 buffers (1 KiB each at T = 4) live, so
// %a and %c share offset 0 and %b and %d share 1024; the arena is 2 KiB.
// CHECK-LABEL: exec.program @chain
// CHECK: exec.arena size <0 * T + 2048> {bound_tokens = 4 : i64, peak_live_bytes = 2048 : i64}
// CHECK: %[[A:.+]] = exec.buffer %{{.+}}[<0 * T + 0>] size <256 * T + 0> of f32
// CHECK: %[[B:.+]] = exec.buffer %{{.+}}[<0 * T + 1024>] size <256 * T + 0> of f32
// CHECK: %[[C:.+]] = exec.buffer %{{.+}}[<0 * T + 0>] size <256 * T + 0> of f32
// CHECK: %[[D:.+]] = exec.buffer %{{.+}}[<0 * T + 1024>] size <256 * T + 0> of f32
exec.program @chain {
  %arena = exec.arena
  %w = exec.constant dense<1.0> : tensor<64xf32>
  %a = exec.buffer %arena size #exec.affine<256 * T + 0> of f32
  %b = exec.buffer %arena size #exec.affine<256 * T + 0> of f32
  %c = exec.buffer %arena size #exec.affine<256 * T + 0> of f32
  %d = exec.buffer %arena size #exec.affine<256 * T + 0> of f32
  exec.input "x" into %a
  exec.rms_norm %a, %w -> %b {epsilon = 1.0e-6 : f32, features = 64 : i64}
  exec.rms_norm %b, %w -> %c {epsilon = 1.0e-6 : f32, features = 64 : i64}
  exec.rms_norm %c, %w -> %d {epsilon = 1.0e-6 : f32, features = 64 : i64}
  exec.output "y" from %d
  exec.return
}

// -----

// Tests that buffers live at the same time never overlap: %x is read by the
// last op (a residual), so it keeps its bytes while %h and %g come and go;
// the 4 * T + 10 byte buffer is rounded up to 256 bytes; the peak counts
// every buffer live at the widest op.
// CHECK-LABEL: exec.program @residual
// CHECK: exec.arena size <0 * T + 3328> {bound_tokens = 4 : i64, peak_live_bytes = 3328 : i64}
// CHECK: %[[X:.+]] = exec.buffer %{{.+}}[<0 * T + 2048>] size <256 * T + 0> of f32
// CHECK: %[[H:.+]] = exec.buffer %{{.+}}[<0 * T + 0>] size <512 * T + 0> of f32
// CHECK: %[[G:.+]] = exec.buffer %{{.+}}[<0 * T + 3072>] size <4 * T + 10> of f32
// CHECK: %[[Y:.+]] = exec.buffer %{{.+}}[<0 * T + 0>] size <256 * T + 0> of f32
exec.program @residual {
  %arena = exec.arena
  %w = exec.constant dense<1.0> : tensor<64x128xf32>
  %x = exec.buffer %arena size #exec.affine<256 * T + 0> of f32
  %h = exec.buffer %arena size #exec.affine<512 * T + 0> of f32
  %g = exec.buffer %arena size #exec.affine<4 * T + 10> of f32
  %y = exec.buffer %arena size #exec.affine<256 * T + 0> of f32
  exec.input "x" into %x
  exec.gemm %x, %w -> %h {k = 64 : i64, n = 128 : i64}
  exec.gated_activation %h -> %g {activation = "silu", features = 1 : i64}
  exec.gemm %g, %w residual(%x) -> %y {k = 64 : i64, n = 64 : i64}
  exec.output "y" from %y
  exec.return
}

// -----

// Tests that the input of a rotary lives through the paged attention that
// reads the rotary's output (the cuda backend's infer_kv_decode reads it
// there, in the rotary's place): %qkv (last read by the rotary) and the
// attention's output %o do not share bytes; %o takes the positions' place,
// which the rotary was the last to read.
// CHECK-LABEL: exec.program @rotary_into_kv_attention
// CHECK: exec.buffer %{{.+}}[<0 * T + 2048>] size <8 * T + 0> of i64
// CHECK: exec.buffer %{{.+}}[<0 * T + 0>] size <256 * T + 0> of bf16
// CHECK-NEXT: exec.buffer %{{.+}}[<0 * T + 1024>] size <256 * T + 0> of bf16
// CHECK-NEXT: exec.buffer %{{.+}}[<0 * T + 2048>] size <256 * T + 0> of bf16
exec.program @rotary_into_kv_attention {
  %arena = exec.arena
  %f = exec.constant dense<1.0> : tensor<4xf32>
  %pos = exec.buffer %arena size #exec.affine<8 * T + 0> of i64
  %starts = exec.buffer %arena size #exec.affine<8 * T + 8> of i64
  %lens = exec.buffer %arena size #exec.affine<8 * T + 0> of i64
  %tables = exec.buffer %arena size #exec.affine<64 * T + 0> of i64
  %slots = exec.buffer %arena size #exec.affine<8 * T + 0> of i64
  %qkv = exec.buffer %arena size #exec.affine<256 * T + 0> of bf16
  %rot = exec.buffer %arena size #exec.affine<256 * T + 0> of bf16
  %o = exec.buffer %arena size #exec.affine<256 * T + 0> of bf16
  exec.input "positions" into %pos
  exec.input "seq_starts" into %starts
  exec.input "context_lens" into %lens
  exec.input "block_tables" into %tables
  exec.input "slot_ids" into %slots
  exec.input "qkv" into %qkv
  exec.rotary %qkv, %f positions(%pos) -> %rot {head_dim = 8 : i64, num_heads = 16 : i64, rotary_dim = 8 : i64, rotated_heads = 12 : i64}
  exec.kv_attention %rot meta(%starts, %lens, %tables, %slots) -> %o {block_size = 16 : i64, head_dim = 8 : i64, layer = 0 : i64, num_heads = 8 : i64, num_kv_heads = 4 : i64, scale = 0.35 : f32}
  exec.output "o" from %o
  exec.return
}

// -----

// Tests that the input of a norm that a GEMM reads lives through that GEMM
// (the cuda backend folds the norm into it, reading the norm's input there),
// and the input of a gather_rows as long as its rows so extended (the cuda
// backend skips a gather whose rows are the identity, a decode step's, and
// the LM head folding the norm then reads the gather's input): %x (last read
// by the gather) shares bytes with neither %n nor %logits, and %logits not
// with %rows, which the norm was the last to read.
// CHECK-LABEL: exec.program @gather_before_head
// CHECK: %[[X:.+]] = exec.buffer %{{.+}}[<0 * T + 0>] size <256 * T + 0> of f32
// CHECK: %[[ROWS:.+]] = exec.buffer %{{.+}}[<0 * T + 1024>] size <256 * T + 0> of f32 {per_logit_row}
// CHECK-NEXT: %[[N:.+]] = exec.buffer %{{.+}}[<0 * T + 2048>] size <256 * T + 0> of f32 {per_logit_row}
// CHECK-NEXT: %[[LOGITS:.+]] = exec.buffer %{{.+}}[<0 * T + 3072>] size <128 * T + 0> of f32 {per_logit_row}
exec.program @gather_before_head {
  %arena = exec.arena
  %g = exec.constant dense<1.0> : tensor<64xf32>
  %w = exec.constant dense<1.0> : tensor<64x32xf32>
  %x = exec.buffer %arena size #exec.affine<256 * T + 0> of f32
  %idx = exec.buffer %arena size #exec.affine<8 * T + 0> of i64 {per_logit_row}
  exec.input "x" into %x
  exec.input "logit_indices" into %idx
  %rows = exec.buffer %arena size #exec.affine<256 * T + 0> of f32 {per_logit_row}
  %n = exec.buffer %arena size #exec.affine<256 * T + 0> of f32 {per_logit_row}
  %logits = exec.buffer %arena size #exec.affine<128 * T + 0> of f32 {per_logit_row}
  exec.gather_rows %x, %idx -> %rows {features = 64 : i64}
  exec.rms_norm %rows, %g -> %n {epsilon = 1.0e-6 : f32, features = 64 : i64}
  exec.gemm %n, %w -> %logits {k = 64 : i64, n = 32 : i64}
  exec.output "logits" from %logits
  exec.return
}
