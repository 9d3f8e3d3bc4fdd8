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
