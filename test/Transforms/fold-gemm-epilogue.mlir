// RUN: infer-opt --split-input-file --pass-pipeline='builtin.module(exec.program(infer-fold-gemm-prologue,infer-fold-gemm-epilogue))' %s | FileCheck %s
// RUN: infer-opt --split-input-file --pass-pipeline='builtin.module(exec.program(infer-fold-gemm-prologue,infer-fold-gemm-epilogue{gated-activation=false argmax=false}))' %s | FileCheck %s --check-prefix=OFF
// OFF-NOT: epilogue =

// The batch-1 row GEMV that does the epilogues runs [n, k] (transpose_weight)
// 16-bit weights with k a multiple of 8: such GEMMs below.

// Tests that a gate/up GEMM whose packed output only the silu after it reads
// gets the epilogue (beside its norm prologue: the GEMV then reads the norm's
// input, apart from the activation's output), and that a stale epilogue on
// the down projection (a residual; no gated activation after it) is removed.
// CHECK-LABEL: exec.program @mlp
// CHECK: exec.gemm %{{.+}} -> %{{.+}} {epilogue = "gated_activation", k = 64 : i64, n = 128 : i64, prologue = "rms_norm", transpose_weight = true}
// CHECK: exec.gemm %{{.+}} residual(%{{.+}}) -> %{{.+}} {k = 64 : i64, n = 64 : i64, prologue = "gated_activation", transpose_weight = true}
exec.program @mlp {
  %arena = exec.arena size #exec.affine<0 * T + 32768>
  %nw = exec.constant dense<1.0> : tensor<64xbf16>
  %w1 = exec.constant dense<1.0> : tensor<128x64xbf16>
  %w2 = exec.constant dense<1.0> : tensor<64x64xbf16>
  %x = exec.buffer %arena [#exec.affine<0 * T + 0>] size #exec.affine<256 * T + 0> of bf16
  %n = exec.buffer %arena [#exec.affine<0 * T + 2048>] size #exec.affine<256 * T + 0> of bf16
  %gu = exec.buffer %arena [#exec.affine<0 * T + 4096>] size #exec.affine<512 * T + 0> of bf16
  %h = exec.buffer %arena [#exec.affine<0 * T + 2048>] size #exec.affine<256 * T + 0> of bf16
  %y = exec.buffer %arena [#exec.affine<0 * T + 16384>] size #exec.affine<256 * T + 0> of bf16
  exec.input "x" into %x
  exec.rms_norm %x, %nw -> %n {epsilon = 1.0e-6 : f32, features = 64 : i64}
  exec.gemm %n, %w1 -> %gu {k = 64 : i64, n = 128 : i64, transpose_weight = true}
  exec.gated_activation %gu -> %h {activation = "silu", features = 64 : i64}
  exec.gemm %h, %w2 residual(%x) -> %y {epilogue = "gated_activation", k = 64 : i64, n = 64 : i64, transpose_weight = true}
  exec.output "y" from %y
  exec.return
}

// -----

// Tests the refusals: a relu gate (no gated-pair kernel), features that are
// not half of n, a second reader of the packed output, a residual on the
// GEMM, and an activation output overlapping the GEMM's input at T = 1
// (%a4 at offset 0 over %x's first 256 bytes).
// CHECK-LABEL: exec.program @refused
// CHECK-NOT: epilogue
exec.program @refused {
  %arena = exec.arena size #exec.affine<0 * T + 65536>
  %w = exec.constant dense<1.0> : tensor<128x64xbf16>
  %x = exec.buffer %arena [#exec.affine<0 * T + 0>] size #exec.affine<256 * T + 0> of bf16
  %r = exec.buffer %arena [#exec.affine<0 * T + 4096>] size #exec.affine<512 * T + 0> of bf16
  %p1 = exec.buffer %arena [#exec.affine<0 * T + 8192>] size #exec.affine<512 * T + 0> of bf16
  %a1 = exec.buffer %arena [#exec.affine<0 * T + 12288>] size #exec.affine<256 * T + 0> of bf16
  %p2 = exec.buffer %arena [#exec.affine<0 * T + 16384>] size #exec.affine<512 * T + 0> of bf16
  %a2 = exec.buffer %arena [#exec.affine<0 * T + 20480>] size #exec.affine<128 * T + 0> of bf16
  %p3 = exec.buffer %arena [#exec.affine<0 * T + 24576>] size #exec.affine<512 * T + 0> of bf16
  %a3 = exec.buffer %arena [#exec.affine<0 * T + 28672>] size #exec.affine<256 * T + 0> of bf16
  %p4 = exec.buffer %arena [#exec.affine<0 * T + 32768>] size #exec.affine<512 * T + 0> of bf16
  %a4 = exec.buffer %arena [#exec.affine<0 * T + 36864>] size #exec.affine<256 * T + 0> of bf16
  %p5 = exec.buffer %arena [#exec.affine<0 * T + 40960>] size #exec.affine<512 * T + 0> of bf16
  %a5 = exec.buffer %arena [#exec.affine<0 * T + 0>] size #exec.affine<256 * T + 0> of bf16
  exec.input "x" into %x
  exec.input "r" into %r
  exec.gemm %x, %w -> %p1 {k = 64 : i64, n = 128 : i64, transpose_weight = true}
  exec.gated_activation %p1 -> %a1 {activation = "relu", features = 64 : i64}
  exec.gemm %x, %w -> %p2 {k = 64 : i64, n = 128 : i64, transpose_weight = true}
  exec.gated_activation %p2 -> %a2 {activation = "silu", features = 32 : i64}
  exec.gemm %x, %w -> %p3 {k = 64 : i64, n = 128 : i64, transpose_weight = true}
  exec.gated_activation %p3 -> %a3 {activation = "silu", features = 64 : i64}
  exec.gemm %x, %w residual(%r) -> %p4 {k = 64 : i64, n = 128 : i64, transpose_weight = true}
  exec.gated_activation %p4 -> %a4 {activation = "gelu", features = 64 : i64}
  exec.gemm %x, %w -> %p5 {k = 64 : i64, n = 128 : i64, transpose_weight = true}
  exec.gated_activation %p5 -> %a5 {activation = "gelu_tanh", features = 64 : i64}
  exec.output "a1" from %a1
  exec.output "a2" from %a2
  exec.output "p3" from %p3
  exec.output "a4" from %a4
  exec.output "a5" from %a5
  exec.return
}

// -----

// Tests the shape the row GEMV does not run: [k, n] weights, 32-bit types,
// k not a multiple of 8.
// CHECK-LABEL: exec.program @no_row_gemv
// CHECK-NOT: epilogue
exec.program @no_row_gemv {
  %arena = exec.arena size #exec.affine<0 * T + 65536>
  %w = exec.constant dense<1.0> : tensor<64x128xbf16>
  %w32 = exec.constant dense<1.0> : tensor<128x64xf32>
  %w12 = exec.constant dense<1.0> : tensor<128x12xbf16>
  %x = exec.buffer %arena [#exec.affine<0 * T + 0>] size #exec.affine<256 * T + 0> of bf16
  %x32 = exec.buffer %arena [#exec.affine<0 * T + 4096>] size #exec.affine<256 * T + 0> of f32
  %p1 = exec.buffer %arena [#exec.affine<0 * T + 8192>] size #exec.affine<512 * T + 0> of bf16
  %a1 = exec.buffer %arena [#exec.affine<0 * T + 12288>] size #exec.affine<256 * T + 0> of bf16
  %p2 = exec.buffer %arena [#exec.affine<0 * T + 16384>] size #exec.affine<512 * T + 0> of f32
  %a2 = exec.buffer %arena [#exec.affine<0 * T + 20480>] size #exec.affine<256 * T + 0> of f32
  %p3 = exec.buffer %arena [#exec.affine<0 * T + 24576>] size #exec.affine<512 * T + 0> of bf16
  %a3 = exec.buffer %arena [#exec.affine<0 * T + 28672>] size #exec.affine<256 * T + 0> of bf16
  exec.input "x" into %x
  exec.input "x32" into %x32
  exec.gemm %x, %w -> %p1 {k = 64 : i64, n = 128 : i64}
  exec.gated_activation %p1 -> %a1 {activation = "silu", features = 64 : i64}
  exec.gemm %x32, %w32 -> %p2 {k = 64 : i64, n = 128 : i64, transpose_weight = true}
  exec.gated_activation %p2 -> %a2 {activation = "silu", features = 64 : i64}
  exec.gemm %x, %w12 -> %p3 {k = 12 : i64, n = 128 : i64, transpose_weight = true}
  exec.gated_activation %p3 -> %a3 {activation = "silu", features = 64 : i64}
  exec.output "a1" from %a1
  exec.output "a2" from %a2
  exec.output "a3" from %a3
  exec.return
}

// -----

// Tests that the LM head writing the program's one output, the per-logit-row
// logits, folds the argmax; a GEMM writing a per-token output does not.
// CHECK-LABEL: exec.program @logits
// CHECK: exec.gemm %{{.+}} -> %{{.+}} {k = 64 : i64, n = 64 : i64, transpose_weight = true}
// CHECK: exec.gemm %{{.+}} -> %{{.+}} {epilogue = "argmax", k = 64 : i64, n = 256 : i64, transpose_weight = true}
exec.program @logits {
  %arena = exec.arena size #exec.affine<0 * T + 65536>
  %w = exec.constant dense<1.0> : tensor<64x64xbf16>
  %head = exec.constant dense<1.0> : tensor<256x64xbf16>
  %x = exec.buffer %arena [#exec.affine<0 * T + 0>] size #exec.affine<128 * T + 0> of bf16
  %h = exec.buffer %arena [#exec.affine<0 * T + 8192>] size #exec.affine<128 * T + 0> of bf16 {per_logit_row}
  %logits = exec.buffer %arena [#exec.affine<0 * T + 16384>] size #exec.affine<512 * T + 0> of bf16 {per_logit_row}
  exec.input "x" into %x
  exec.gemm %x, %w -> %h {k = 64 : i64, n = 64 : i64, transpose_weight = true}
  exec.gemm %h, %head -> %logits {k = 64 : i64, n = 256 : i64, transpose_weight = true}
  exec.output "logits" from %logits
  exec.return
}

// -----

// Tests that logits beside a second program output fold no argmax.
// CHECK-LABEL: exec.program @two_outputs
// CHECK-NOT: epilogue
exec.program @two_outputs {
  %arena = exec.arena size #exec.affine<0 * T + 65536>
  %head = exec.constant dense<1.0> : tensor<256x64xbf16>
  %x = exec.buffer %arena [#exec.affine<0 * T + 0>] size #exec.affine<128 * T + 0> of bf16 {per_logit_row}
  %logits = exec.buffer %arena [#exec.affine<0 * T + 16384>] size #exec.affine<512 * T + 0> of bf16 {per_logit_row}
  exec.input "x" into %x
  exec.gemm %x, %head -> %logits {k = 64 : i64, n = 256 : i64, transpose_weight = true}
  exec.output "logits" from %logits
  exec.output "x" from %x
  exec.return
}
