// RUN: infer-opt --split-input-file --pass-pipeline='builtin.module(exec.program(infer-fold-gemm-prologue{max-rows=8}))' %s | FileCheck %s
// RUN: infer-opt --split-input-file --pass-pipeline='builtin.module(exec.program(infer-fold-gemm-prologue{max-rows=8 weight-dtype=bf16}))' %s | FileCheck %s --check-prefix=BF16

// Tests that a GEMM right after the rms_norm and the gated activation that
// write its input (its only reader, the same type, features = k, the
// prologue's input apart from the GEMM's output up to T = 8) gets the
// prologue; the first GEMM (after an exec.input) gets none, and a stale
// attribute on it is removed.
// CHECK-LABEL: exec.program @mlp
// CHECK: exec.gemm %[[N:.+]], %{{.+}} -> %[[GU:[^ ]+]] {k = 64 : i64, n = 128 : i64, prologue = "rms_norm"}
// CHECK: exec.gemm %{{.+}}, %{{.+}} residual(%{{.+}}) -> %{{.+}} {k = 64 : i64, n = 64 : i64, prologue = "gated_activation"}
// CHECK: exec.gemm %{{.+}}, %{{.+}} -> %{{.+}} {k = 64 : i64, n = 64 : i64}
exec.program @mlp {
  %arena = exec.arena size #exec.affine<0 * T + 32768>
  %nw = exec.constant dense<1.0> : tensor<64xf32>
  %w1 = exec.constant dense<1.0> : tensor<64x128xf32>
  %w2 = exec.constant dense<1.0> : tensor<64x64xf32>
  %x = exec.buffer %arena [#exec.affine<0 * T + 0>] size #exec.affine<256 * T + 0> of f32
  %n = exec.buffer %arena [#exec.affine<0 * T + 2048>] size #exec.affine<256 * T + 0> of f32
  %gu = exec.buffer %arena [#exec.affine<0 * T + 4096>] size #exec.affine<512 * T + 0> of f32
  %h = exec.buffer %arena [#exec.affine<0 * T + 2048>] size #exec.affine<256 * T + 0> of f32
  %y = exec.buffer %arena [#exec.affine<0 * T + 16384>] size #exec.affine<256 * T + 0> of f32
  %z = exec.buffer %arena [#exec.affine<0 * T + 4096>] size #exec.affine<256 * T + 0> of f32
  exec.input "x" into %x
  exec.rms_norm %x, %nw -> %n {epsilon = 1.0e-6 : f32, features = 64 : i64}
  exec.gemm %n, %w1 -> %gu {k = 64 : i64, n = 128 : i64}
  exec.gated_activation %gu -> %h {activation = "silu", features = 64 : i64}
  exec.gemm %h, %w2 residual(%x) -> %y {k = 64 : i64, n = 64 : i64}
  exec.gemm %y, %w2 -> %z {k = 64 : i64, n = 64 : i64, prologue = "rms_norm"}
  exec.output "z" from %z
  exec.return
}

// -----

// Tests that no prologue folds when the norm's output has a second reader
// (q and k projections of one norm), when a program output reads it, when
// features differ from k, or when the prologue's input and the GEMM's output
// overlap at some T <= 8 (%x ends at 256 * T, %o2 starts at 1024: they meet
// from T = 5 on).
// CHECK-LABEL: exec.program @refused
// CHECK: exec.gemm %{{.+}} -> %{{.+}} {k = 64 : i64, n = 64 : i64}
// CHECK-NEXT: exec.gemm %{{.+}} -> %{{.+}} {k = 64 : i64, n = 64 : i64}
// CHECK: exec.gemm %{{.+}} -> %{{.+}} {k = 64 : i64, n = 64 : i64}
// CHECK: exec.gemm %{{.+}} -> %{{.+}} {k = 32 : i64, n = 64 : i64}
// CHECK: exec.gemm %{{.+}} -> %[[O2:[^ ]+]] {k = 64 : i64, n = 64 : i64}
// CHECK-NOT: prologue
exec.program @refused {
  %arena = exec.arena size #exec.affine<0 * T + 65536>
  %nw = exec.constant dense<1.0> : tensor<64xf32>
  %w = exec.constant dense<1.0> : tensor<64x64xf32>
  %x = exec.buffer %arena [#exec.affine<0 * T + 0>] size #exec.affine<256 * T + 0> of f32
  %n = exec.buffer %arena [#exec.affine<0 * T + 8192>] size #exec.affine<256 * T + 0> of f32
  %q = exec.buffer %arena [#exec.affine<0 * T + 16384>] size #exec.affine<256 * T + 0> of f32
  %k = exec.buffer %arena [#exec.affine<0 * T + 24576>] size #exec.affine<256 * T + 0> of f32
  %n2 = exec.buffer %arena [#exec.affine<0 * T + 32768>] size #exec.affine<256 * T + 0> of f32
  %o = exec.buffer %arena [#exec.affine<0 * T + 40960>] size #exec.affine<256 * T + 0> of f32
  %n3 = exec.buffer %arena [#exec.affine<0 * T + 49152>] size #exec.affine<256 * T + 0> of f32
  %o1 = exec.buffer %arena [#exec.affine<0 * T + 57344>] size #exec.affine<256 * T + 0> of f32
  %n4 = exec.buffer %arena [#exec.affine<0 * T + 8192>] size #exec.affine<256 * T + 0> of f32
  %o2 = exec.buffer %arena [#exec.affine<0 * T + 1024>] size #exec.affine<256 * T + 0> of f32
  exec.input "x" into %x
  exec.rms_norm %x, %nw -> %n {epsilon = 1.0e-6 : f32, features = 64 : i64}
  exec.gemm %n, %w -> %q {k = 64 : i64, n = 64 : i64}
  exec.gemm %n, %w -> %k {k = 64 : i64, n = 64 : i64}
  exec.rms_norm %x, %nw -> %n2 {epsilon = 1.0e-6 : f32, features = 64 : i64}
  exec.gemm %n2, %w -> %o {k = 64 : i64, n = 64 : i64}
  exec.rms_norm %x, %nw -> %n3 {epsilon = 1.0e-6 : f32, features = 64 : i64}
  exec.gemm %n3, %w -> %o1 {k = 32 : i64, n = 64 : i64}
  exec.rms_norm %x, %nw -> %n4 {epsilon = 1.0e-6 : f32, features = 64 : i64}
  exec.gemm %n4, %w -> %o2 {k = 64 : i64, n = 64 : i64}
  exec.output "q" from %q
  exec.output "k" from %k
  exec.output "n2" from %n2
  exec.output "o" from %o
  exec.output "o1" from %o1
  exec.output "o2" from %o2
  exec.return
}

// -----

// Tests that an RMS norm's f32 weight before a bf16 GEMM folds only where the
// artifact stores float weights as bf16 (infer-compile --dtype bf16).
// CHECK-LABEL: exec.program @bf16
// CHECK: exec.gemm %{{.+}} -> %{{.+}} {k = 64 : i64, n = 64 : i64}
// BF16-LABEL: exec.program @bf16
// BF16: exec.gemm %{{.+}} -> %{{.+}} {k = 64 : i64, n = 64 : i64, prologue = "rms_norm"}
exec.program @bf16 {
  %arena = exec.arena size #exec.affine<0 * T + 8192>
  %nw = exec.weight "norm.weight" : tensor<64xf32>
  %w = exec.weight "proj.weight" : tensor<64x64xf32>
  %x = exec.buffer %arena [#exec.affine<0 * T + 0>] size #exec.affine<128 * T + 0> of bf16
  %n = exec.buffer %arena [#exec.affine<0 * T + 2048>] size #exec.affine<128 * T + 0> of bf16
  %y = exec.buffer %arena [#exec.affine<0 * T + 4096>] size #exec.affine<128 * T + 0> of bf16
  exec.input "x" into %x
  exec.rms_norm %x, %nw -> %n {epsilon = 1.0e-6 : f32, features = 64 : i64}
  exec.gemm %n, %w -> %y {k = 64 : i64, n = 64 : i64}
  exec.output "y" from %y
  exec.return
}
