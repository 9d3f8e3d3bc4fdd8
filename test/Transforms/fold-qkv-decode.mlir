// RUN: infer-opt --split-input-file --pass-pipeline='builtin.module(exec.program(infer-fold-gemm-prologue,infer-fold-gemm-epilogue,infer-fold-kv-rotary,infer-fold-qkv-decode))' %s | FileCheck %s
// RUN: infer-opt --split-input-file --pass-pipeline='builtin.module(exec.program(infer-fold-gemm-prologue,infer-fold-gemm-epilogue,infer-fold-kv-rotary{decode=false},infer-fold-qkv-decode))' %s | FileCheck %s --check-prefix=NODECODE
// NODECODE-NOT: qkv_decode

// A layer's attention half as the step program has it: rms_norm -> qkv GEMM
// ([n, k] bf16 weights, k = 64) -> rotary -> paged attention with
// 8-wide heads. The qkv GEMM folds the norm, the attention folds the rotary
// in decode steps, and batch-1 decode may run the GEMM in the attention's
// kernel too.
// CHECK-LABEL: exec.program @layer
// CHECK: exec.gemm {{.+}} prologue = "rms_norm"
// CHECK: exec.kv_attention {{.+}} {{{.*}}qkv_decode = true, rotary = "decode"
exec.program @layer {
  %arena = exec.arena size #exec.affine<0 * T + 65536> {bound_tokens = 8 : i64}
  %nw = exec.constant dense<1.0> : tensor<64xbf16>
  %wqkv = exec.constant dense<1.0> : tensor<32x64xbf16>
  %freq = exec.constant dense<1.0> : tensor<4xf32>
  %x = exec.buffer %arena [#exec.affine<0 * T + 0>] size #exec.affine<128 * T + 0> of bf16
  %n = exec.buffer %arena [#exec.affine<128 * T + 0>] size #exec.affine<128 * T + 0> of bf16
  %qkv = exec.buffer %arena [#exec.affine<256 * T + 0>] size #exec.affine<64 * T + 0> of bf16
  %out = exec.buffer %arena [#exec.affine<320 * T + 0>] size #exec.affine<32 * T + 0> of bf16
  %rot = exec.buffer %arena [#exec.affine<400 * T + 0>] size #exec.affine<64 * T + 0> of bf16
  %pos = exec.buffer %arena [#exec.affine<352 * T + 0>] size #exec.affine<8 * T + 0> of i64
  %starts = exec.buffer %arena [#exec.affine<360 * T + 0>] size #exec.affine<8 * T + 8> of i64
  %lens = exec.buffer %arena [#exec.affine<368 * T + 8>] size #exec.affine<8 * T + 0> of i64
  %tables = exec.buffer %arena [#exec.affine<376 * T + 8>] size #exec.affine<8 * T + 0> of i64
  %slots = exec.buffer %arena [#exec.affine<384 * T + 8>] size #exec.affine<8 * T + 0> of i64
  exec.input "x" into %x
  exec.input "positions" into %pos
  exec.input "seq_starts" into %starts
  exec.input "context_lens" into %lens
  exec.input "block_tables" into %tables
  exec.input "slot_ids" into %slots
  exec.rms_norm %x, %nw -> %n {epsilon = 1.0e-6 : f32, features = 64 : i64}
  exec.gemm %n, %wqkv -> %qkv {k = 64 : i64, n = 32 : i64, transpose_weight = true}
  exec.rotary %qkv, %freq positions(%pos) -> %rot {head_dim = 8 : i64, num_heads = 4 : i64, rotary_dim = 8 : i64, rotated_heads = 3 : i64}
  exec.kv_attention %rot meta(%starts, %lens, %tables, %slots) -> %out {block_size = 16 : i64, head_dim = 8 : i64, layer = 0 : i64, num_heads = 2 : i64, num_kv_heads = 1 : i64, scale = 5.000000e-01 : f32}
  exec.output "o" from %out
  exec.return
}

// -----

// Tests that heads wider than 64 keep two kernels (no faster fused at 128,
// session 31), and a stale attribute goes.
// CHECK-LABEL: exec.program @wide_heads
// CHECK: exec.kv_attention {{.+}} rotary = "decode"
// CHECK-NOT: qkv_decode
// CHECK: exec.return
exec.program @wide_heads {
  %arena = exec.arena size #exec.affine<0 * T + 65536> {bound_tokens = 8 : i64}
  %nw = exec.constant dense<1.0> : tensor<64xbf16>
  %wqkv = exec.constant dense<1.0> : tensor<384x64xbf16>
  %freq = exec.constant dense<1.0> : tensor<64xf32>
  %x = exec.buffer %arena [#exec.affine<0 * T + 0>] size #exec.affine<128 * T + 0> of bf16
  %n = exec.buffer %arena [#exec.affine<128 * T + 0>] size #exec.affine<128 * T + 0> of bf16
  %qkv = exec.buffer %arena [#exec.affine<256 * T + 0>] size #exec.affine<768 * T + 0> of bf16
  %out = exec.buffer %arena [#exec.affine<1024 * T + 0>] size #exec.affine<256 * T + 0> of bf16
  %rot = exec.buffer %arena [#exec.affine<1400 * T + 0>] size #exec.affine<768 * T + 0> of bf16
  %pos = exec.buffer %arena [#exec.affine<1280 * T + 0>] size #exec.affine<8 * T + 0> of i64
  %starts = exec.buffer %arena [#exec.affine<1288 * T + 0>] size #exec.affine<8 * T + 8> of i64
  %lens = exec.buffer %arena [#exec.affine<1296 * T + 8>] size #exec.affine<8 * T + 0> of i64
  %tables = exec.buffer %arena [#exec.affine<1304 * T + 8>] size #exec.affine<8 * T + 0> of i64
  %slots = exec.buffer %arena [#exec.affine<1312 * T + 8>] size #exec.affine<8 * T + 0> of i64
  exec.input "x" into %x
  exec.input "positions" into %pos
  exec.input "seq_starts" into %starts
  exec.input "context_lens" into %lens
  exec.input "block_tables" into %tables
  exec.input "slot_ids" into %slots
  exec.rms_norm %x, %nw -> %n {epsilon = 1.0e-6 : f32, features = 64 : i64}
  exec.gemm %n, %wqkv -> %qkv {k = 64 : i64, n = 384 : i64, transpose_weight = true}
  exec.rotary %qkv, %freq positions(%pos) -> %rot {head_dim = 128 : i64, num_heads = 3 : i64, rotary_dim = 128 : i64, rotated_heads = 2 : i64}
  exec.kv_attention %rot meta(%starts, %lens, %tables, %slots) -> %out {block_size = 16 : i64, head_dim = 128 : i64, layer = 0 : i64, num_heads = 1 : i64, num_kv_heads = 1 : i64, qkv_decode = true, scale = 5.000000e-01 : f32}
  exec.output "o" from %out
  exec.return
}

// -----

// Tests that a qkv GEMM with no norm before it (nothing to fold: the kernel
// folds one) and one whose output a program output also reads keep two
// kernels.
// CHECK-LABEL: exec.program @refused
// CHECK-NOT: qkv_decode
// CHECK: exec.return
exec.program @refused {
  %arena = exec.arena size #exec.affine<0 * T + 65536> {bound_tokens = 8 : i64}
  %wqkv = exec.constant dense<1.0> : tensor<32x64xbf16>
  %freq = exec.constant dense<1.0> : tensor<4xf32>
  %x = exec.buffer %arena [#exec.affine<0 * T + 0>] size #exec.affine<128 * T + 0> of bf16
  %qkv = exec.buffer %arena [#exec.affine<256 * T + 0>] size #exec.affine<64 * T + 0> of bf16
  %out = exec.buffer %arena [#exec.affine<320 * T + 0>] size #exec.affine<32 * T + 0> of bf16
  %rot = exec.buffer %arena [#exec.affine<600 * T + 0>] size #exec.affine<64 * T + 0> of bf16
  %pos = exec.buffer %arena [#exec.affine<352 * T + 0>] size #exec.affine<8 * T + 0> of i64
  %starts = exec.buffer %arena [#exec.affine<360 * T + 0>] size #exec.affine<8 * T + 8> of i64
  %lens = exec.buffer %arena [#exec.affine<368 * T + 8>] size #exec.affine<8 * T + 0> of i64
  %tables = exec.buffer %arena [#exec.affine<376 * T + 8>] size #exec.affine<8 * T + 0> of i64
  %slots = exec.buffer %arena [#exec.affine<384 * T + 8>] size #exec.affine<8 * T + 0> of i64
  %qkv2 = exec.buffer %arena [#exec.affine<400 * T + 0>] size #exec.affine<64 * T + 0> of bf16
  %rot2 = exec.buffer %arena [#exec.affine<464 * T + 0>] size #exec.affine<64 * T + 0> of bf16
  %out2 = exec.buffer %arena [#exec.affine<528 * T + 0>] size #exec.affine<32 * T + 0> of bf16
  exec.input "x" into %x
  exec.input "positions" into %pos
  exec.input "seq_starts" into %starts
  exec.input "context_lens" into %lens
  exec.input "block_tables" into %tables
  exec.input "slot_ids" into %slots
  exec.gemm %x, %wqkv -> %qkv {k = 64 : i64, n = 32 : i64, transpose_weight = true}
  exec.rotary %qkv, %freq positions(%pos) -> %rot {head_dim = 8 : i64, num_heads = 4 : i64, rotary_dim = 8 : i64, rotated_heads = 3 : i64}
  exec.kv_attention %rot meta(%starts, %lens, %tables, %slots) -> %out {block_size = 16 : i64, head_dim = 8 : i64, layer = 0 : i64, num_heads = 2 : i64, num_kv_heads = 1 : i64, scale = 5.000000e-01 : f32}
  exec.gemm %out, %wqkv -> %qkv2 {k = 64 : i64, n = 32 : i64, transpose_weight = true}
  exec.rotary %qkv2, %freq positions(%pos) -> %rot2 {head_dim = 8 : i64, num_heads = 4 : i64, rotary_dim = 8 : i64, rotated_heads = 3 : i64}
  exec.kv_attention %rot2 meta(%starts, %lens, %tables, %slots) -> %out2 {block_size = 16 : i64, head_dim = 8 : i64, layer = 1 : i64, num_heads = 2 : i64, num_kv_heads = 1 : i64, scale = 5.000000e-01 : f32}
  exec.output "o" from %out2
  exec.output "qkv2" from %qkv2
  exec.return
}
