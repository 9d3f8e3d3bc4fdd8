// RUN: infer-opt --split-input-file --pass-pipeline='builtin.module(exec.program(infer-elide-identity-gather))' %s | FileCheck %s

// The tail of a step program: the final norm's input rows gathered to the
// logit rows, then the norm and the LM head over those rows. No launch after
// the gather names a buffer sharing bytes with its input ([0, 128 T), at
// most 1,024 bytes up to the bound 8, against everything from 2,048 on):
// elidable.
// CHECK-LABEL: exec.program @tail
// CHECK: exec.gather_rows {{.+}} {elidable = true, features = 64 : i64}
exec.program @tail {
  %arena = exec.arena size #exec.affine<0 * T + 65536> {bound_tokens = 8 : i64}
  %nw = exec.constant dense<1.0> : tensor<64xbf16>
  %head = exec.constant dense<1.0> : tensor<256x64xbf16>
  %h = exec.buffer %arena [#exec.affine<0 * T + 0>] size #exec.affine<128 * T + 0> of bf16
  %idx = exec.buffer %arena [#exec.affine<0 * T + 2048>] size #exec.affine<8 * T + 0> of i64 {per_logit_row}
  %rows = exec.buffer %arena [#exec.affine<0 * T + 4096>] size #exec.affine<128 * T + 0> of bf16 {per_logit_row}
  %n = exec.buffer %arena [#exec.affine<0 * T + 8192>] size #exec.affine<128 * T + 0> of bf16 {per_logit_row}
  %logits = exec.buffer %arena [#exec.affine<0 * T + 16384>] size #exec.affine<512 * T + 0> of bf16 {per_logit_row}
  exec.input "h" into %h
  exec.input "logit_indices" into %idx
  exec.gather_rows %h, %idx -> %rows {features = 64 : i64}
  exec.rms_norm %rows, %nw -> %n {epsilon = 1.0e-6 : f32, features = 64 : i64}
  exec.gemm %n, %head -> %logits {k = 64 : i64, n = 256 : i64, transpose_weight = true}
  exec.output "logits" from %logits
  exec.return
}

// -----

// Tests that a later launch writing over the input's bytes at some T up to
// the bound (%n from 1,152: inside %h's [0, 128 T) from T = 10 on, bound
// 16), with a stale attribute, and an input of another type than the output
// leave the gather launched.
// CHECK-LABEL: exec.program @overwritten
// CHECK: exec.gather_rows %{{[0-9]+}}, %{{[0-9]+}} -> %{{[0-9]+}} {features = 64 : i64}
// CHECK-LABEL: exec.program @other_type
// CHECK: exec.gather_rows %{{[0-9]+}}, %{{[0-9]+}} -> %{{[0-9]+}} {features = 64 : i64}
exec.program @overwritten {
  %arena = exec.arena size #exec.affine<0 * T + 65536> {bound_tokens = 16 : i64}
  %nw = exec.constant dense<1.0> : tensor<64xbf16>
  %h = exec.buffer %arena [#exec.affine<0 * T + 0>] size #exec.affine<128 * T + 0> of bf16
  %idx = exec.buffer %arena [#exec.affine<0 * T + 4096>] size #exec.affine<8 * T + 0> of i64 {per_logit_row}
  %rows = exec.buffer %arena [#exec.affine<0 * T + 8192>] size #exec.affine<128 * T + 0> of bf16 {per_logit_row}
  %n = exec.buffer %arena [#exec.affine<0 * T + 1152>] size #exec.affine<128 * T + 0> of bf16 {per_logit_row}
  exec.input "h" into %h
  exec.input "logit_indices" into %idx
  exec.gather_rows %h, %idx -> %rows {elidable = true, features = 64 : i64}
  exec.rms_norm %rows, %nw -> %n {epsilon = 1.0e-6 : f32, features = 64 : i64}
  exec.output "n" from %n
  exec.return
}

// -----

exec.program @other_type {
  %arena = exec.arena size #exec.affine<0 * T + 65536> {bound_tokens = 8 : i64}
  %h = exec.buffer %arena [#exec.affine<0 * T + 0>] size #exec.affine<256 * T + 0> of f32
  %idx = exec.buffer %arena [#exec.affine<0 * T + 4096>] size #exec.affine<8 * T + 0> of i64 {per_logit_row}
  %rows = exec.buffer %arena [#exec.affine<0 * T + 8192>] size #exec.affine<128 * T + 0> of bf16 {per_logit_row}
  exec.input "h" into %h
  exec.input "logit_indices" into %idx
  exec.gather_rows %h, %idx -> %rows {features = 64 : i64}
  exec.output "rows" from %rows
  exec.return
}
