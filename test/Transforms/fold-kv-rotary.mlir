// RUN: infer-opt --split-input-file --pass-pipeline='builtin.module(exec.program(infer-fold-kv-rotary))' %s | FileCheck %s
// RUN: infer-opt --split-input-file --pass-pipeline='builtin.module(exec.program(infer-fold-kv-rotary{kv-write=true}))' %s | FileCheck %s --check-prefix=WRITE
// RUN: infer-opt --split-input-file --pass-pipeline='builtin.module(exec.program(infer-fold-kv-rotary{decode=false}))' %s | FileCheck %s --check-prefix=NONE
// NONE-NOT: rotary =

// The rotary (raw qkv [0, 100 T) -> rotated [100 T, 200 T)) before a paged
// attention (-> [200 T, 264 T)), the shape a decode kernel replaces, and the
// ways the pass must refuse to (ported from codegen's BufferChecksTest when
// the decision moved into the IR).
// Tests that the rotary's raw rows apart from the attention's output at every T up to the bound, its output read by the attention alone: "decode" (with kv-write: "decode_or_kv_write").
// CHECK-LABEL: exec.program @decode
// CHECK: exec.kv_attention {{.+}} rotary = "decode"
// WRITE: exec.kv_attention {{.+}} rotary = "decode_or_kv_write"
exec.program @decode {
  %arena = exec.arena size #exec.affine<0 * T + 65536> {bound_tokens = 8 : i64}
  %freq = exec.constant dense<1.0> : tensor<2xf32>
  %raw = exec.buffer %arena [#exec.affine<0 * T + 0>] size #exec.affine<100 * T + 0> of bf16
  %rot = exec.buffer %arena [#exec.affine<100 * T + 0>] size #exec.affine<100 * T + 0> of bf16
  %out = exec.buffer %arena [#exec.affine<200 * T + 0>] size #exec.affine<64 * T + 0> of bf16
  %other = exec.buffer %arena [#exec.affine<264 * T + 0>] size #exec.affine<100 * T + 0> of bf16
  %pos = exec.buffer %arena [#exec.affine<364 * T + 0>] size #exec.affine<8 * T + 0> of i64
  %starts = exec.buffer %arena [#exec.affine<372 * T + 0>] size #exec.affine<8 * T + 8> of i64
  %lens = exec.buffer %arena [#exec.affine<380 * T + 8>] size #exec.affine<8 * T + 0> of i64
  %tables = exec.buffer %arena [#exec.affine<388 * T + 8>] size #exec.affine<8 * T + 0> of i64
  %slots = exec.buffer %arena [#exec.affine<396 * T + 8>] size #exec.affine<8 * T + 0> of i64
  exec.input "token_ids" into %raw
  exec.input "positions" into %pos
  exec.input "seq_starts" into %starts
  exec.input "context_lens" into %lens
  exec.input "block_tables" into %tables
  exec.input "slot_ids" into %slots
  exec.rotary %raw, %freq positions(%pos) -> %rot {head_dim = 4 : i64, num_heads = 4 : i64, rotary_dim = 4 : i64, rotated_heads = 3 : i64}
  exec.kv_attention %rot meta(%starts, %lens, %tables, %slots) -> %out {block_size = 16 : i64, head_dim = 8 : i64, layer = 0 : i64, num_heads = 2 : i64, num_kv_heads = 1 : i64, rotary = "decode", scale = 5.000000e-01 : f32}
  exec.output "o" from %out
  exec.return
}

// -----

// Tests that another launch reading the rotated rows leaves no decode kernel (with kv-write: "kv_write").
// CHECK-LABEL: exec.program @other_reader
// CHECK: exec.kv_attention
// CHECK-NOT: rotary =
// CHECK: exec.return
// WRITE: exec.kv_attention {{.+}} rotary = "kv_write"
exec.program @other_reader {
  %arena = exec.arena size #exec.affine<0 * T + 65536> {bound_tokens = 8 : i64}
  %freq = exec.constant dense<1.0> : tensor<2xf32>
  %raw = exec.buffer %arena [#exec.affine<0 * T + 0>] size #exec.affine<100 * T + 0> of bf16
  %rot = exec.buffer %arena [#exec.affine<100 * T + 0>] size #exec.affine<100 * T + 0> of bf16
  %out = exec.buffer %arena [#exec.affine<200 * T + 0>] size #exec.affine<64 * T + 0> of bf16
  %other = exec.buffer %arena [#exec.affine<264 * T + 0>] size #exec.affine<100 * T + 0> of bf16
  %pos = exec.buffer %arena [#exec.affine<364 * T + 0>] size #exec.affine<8 * T + 0> of i64
  %starts = exec.buffer %arena [#exec.affine<372 * T + 0>] size #exec.affine<8 * T + 8> of i64
  %lens = exec.buffer %arena [#exec.affine<380 * T + 8>] size #exec.affine<8 * T + 0> of i64
  %tables = exec.buffer %arena [#exec.affine<388 * T + 8>] size #exec.affine<8 * T + 0> of i64
  %slots = exec.buffer %arena [#exec.affine<396 * T + 8>] size #exec.affine<8 * T + 0> of i64
  exec.input "token_ids" into %raw
  exec.input "positions" into %pos
  exec.input "seq_starts" into %starts
  exec.input "context_lens" into %lens
  exec.input "block_tables" into %tables
  exec.input "slot_ids" into %slots
  exec.rotary %raw, %freq positions(%pos) -> %rot {head_dim = 4 : i64, num_heads = 4 : i64, rotary_dim = 4 : i64, rotated_heads = 3 : i64}
  exec.kv_attention %rot meta(%starts, %lens, %tables, %slots) -> %out {block_size = 16 : i64, head_dim = 8 : i64, layer = 0 : i64, num_heads = 2 : i64, num_kv_heads = 1 : i64, rotary = "decode", scale = 5.000000e-01 : f32}
  exec.copy %rot -> %other {in_features = 12 : i64, length = 12 : i64, offset = 0 : i64}
  exec.output "o" from %out
  exec.output "other" from %other
  exec.return
}

// -----

// Tests that rotated rows a program output reads leave no decode kernel (with kv-write: "kv_write").
// CHECK-LABEL: exec.program @program_output
// CHECK: exec.kv_attention
// CHECK-NOT: rotary =
// CHECK: exec.return
// WRITE: exec.kv_attention {{.+}} rotary = "kv_write"
exec.program @program_output {
  %arena = exec.arena size #exec.affine<0 * T + 65536> {bound_tokens = 8 : i64}
  %freq = exec.constant dense<1.0> : tensor<2xf32>
  %raw = exec.buffer %arena [#exec.affine<0 * T + 0>] size #exec.affine<100 * T + 0> of bf16
  %rot = exec.buffer %arena [#exec.affine<100 * T + 0>] size #exec.affine<100 * T + 0> of bf16
  %out = exec.buffer %arena [#exec.affine<200 * T + 0>] size #exec.affine<64 * T + 0> of bf16
  %other = exec.buffer %arena [#exec.affine<264 * T + 0>] size #exec.affine<100 * T + 0> of bf16
  %pos = exec.buffer %arena [#exec.affine<364 * T + 0>] size #exec.affine<8 * T + 0> of i64
  %starts = exec.buffer %arena [#exec.affine<372 * T + 0>] size #exec.affine<8 * T + 8> of i64
  %lens = exec.buffer %arena [#exec.affine<380 * T + 8>] size #exec.affine<8 * T + 0> of i64
  %tables = exec.buffer %arena [#exec.affine<388 * T + 8>] size #exec.affine<8 * T + 0> of i64
  %slots = exec.buffer %arena [#exec.affine<396 * T + 8>] size #exec.affine<8 * T + 0> of i64
  exec.input "token_ids" into %raw
  exec.input "positions" into %pos
  exec.input "seq_starts" into %starts
  exec.input "context_lens" into %lens
  exec.input "block_tables" into %tables
  exec.input "slot_ids" into %slots
  exec.rotary %raw, %freq positions(%pos) -> %rot {head_dim = 4 : i64, num_heads = 4 : i64, rotary_dim = 4 : i64, rotated_heads = 3 : i64}
  exec.kv_attention %rot meta(%starts, %lens, %tables, %slots) -> %out {block_size = 16 : i64, head_dim = 8 : i64, layer = 0 : i64, num_heads = 2 : i64, num_kv_heads = 1 : i64, rotary = "decode", scale = 5.000000e-01 : f32}
  exec.output "o" from %out
  exec.output "rotated" from %rot
  exec.return
}

// -----

// Tests that an output at a fixed [300, 300 + 64 T), apart from the raw rows [0, 100 T) at T = 1 and 2 but overlapping from T = 4 on, leaves no decode kernel at bound 8 (with kv-write: "kv_write").
// CHECK-LABEL: exec.program @overlap
// CHECK: exec.kv_attention
// CHECK-NOT: rotary =
// CHECK: exec.return
// WRITE: exec.kv_attention {{.+}} rotary = "kv_write"
exec.program @overlap {
  %arena = exec.arena size #exec.affine<0 * T + 65536> {bound_tokens = 8 : i64}
  %freq = exec.constant dense<1.0> : tensor<2xf32>
  %raw = exec.buffer %arena [#exec.affine<0 * T + 0>] size #exec.affine<100 * T + 0> of bf16
  %rot = exec.buffer %arena [#exec.affine<100 * T + 0>] size #exec.affine<100 * T + 0> of bf16
  %out = exec.buffer %arena [#exec.affine<0 * T + 300>] size #exec.affine<64 * T + 0> of bf16
  %other = exec.buffer %arena [#exec.affine<264 * T + 0>] size #exec.affine<100 * T + 0> of bf16
  %pos = exec.buffer %arena [#exec.affine<364 * T + 0>] size #exec.affine<8 * T + 0> of i64
  %starts = exec.buffer %arena [#exec.affine<372 * T + 0>] size #exec.affine<8 * T + 8> of i64
  %lens = exec.buffer %arena [#exec.affine<380 * T + 8>] size #exec.affine<8 * T + 0> of i64
  %tables = exec.buffer %arena [#exec.affine<388 * T + 8>] size #exec.affine<8 * T + 0> of i64
  %slots = exec.buffer %arena [#exec.affine<396 * T + 8>] size #exec.affine<8 * T + 0> of i64
  exec.input "token_ids" into %raw
  exec.input "positions" into %pos
  exec.input "seq_starts" into %starts
  exec.input "context_lens" into %lens
  exec.input "block_tables" into %tables
  exec.input "slot_ids" into %slots
  exec.rotary %raw, %freq positions(%pos) -> %rot {head_dim = 4 : i64, num_heads = 4 : i64, rotary_dim = 4 : i64, rotated_heads = 3 : i64}
  exec.kv_attention %rot meta(%starts, %lens, %tables, %slots) -> %out {block_size = 16 : i64, head_dim = 8 : i64, layer = 0 : i64, num_heads = 2 : i64, num_kv_heads = 1 : i64, rotary = "decode", scale = 5.000000e-01 : f32}
  exec.output "o" from %out
  exec.return
}

// -----

// Tests that the same output is fine at bound 2: "decode" (with kv-write: "decode_or_kv_write").
// CHECK-LABEL: exec.program @overlap_small_bound
// CHECK: exec.kv_attention {{.+}} rotary = "decode"
// WRITE: exec.kv_attention {{.+}} rotary = "decode_or_kv_write"
exec.program @overlap_small_bound {
  %arena = exec.arena size #exec.affine<0 * T + 65536> {bound_tokens = 2 : i64}
  %freq = exec.constant dense<1.0> : tensor<2xf32>
  %raw = exec.buffer %arena [#exec.affine<0 * T + 0>] size #exec.affine<100 * T + 0> of bf16
  %rot = exec.buffer %arena [#exec.affine<100 * T + 0>] size #exec.affine<100 * T + 0> of bf16
  %out = exec.buffer %arena [#exec.affine<0 * T + 300>] size #exec.affine<64 * T + 0> of bf16
  %other = exec.buffer %arena [#exec.affine<264 * T + 0>] size #exec.affine<100 * T + 0> of bf16
  %pos = exec.buffer %arena [#exec.affine<364 * T + 0>] size #exec.affine<8 * T + 0> of i64
  %starts = exec.buffer %arena [#exec.affine<372 * T + 0>] size #exec.affine<8 * T + 8> of i64
  %lens = exec.buffer %arena [#exec.affine<380 * T + 8>] size #exec.affine<8 * T + 0> of i64
  %tables = exec.buffer %arena [#exec.affine<388 * T + 8>] size #exec.affine<8 * T + 0> of i64
  %slots = exec.buffer %arena [#exec.affine<396 * T + 8>] size #exec.affine<8 * T + 0> of i64
  exec.input "token_ids" into %raw
  exec.input "positions" into %pos
  exec.input "seq_starts" into %starts
  exec.input "context_lens" into %lens
  exec.input "block_tables" into %tables
  exec.input "slot_ids" into %slots
  exec.rotary %raw, %freq positions(%pos) -> %rot {head_dim = 4 : i64, num_heads = 4 : i64, rotary_dim = 4 : i64, rotated_heads = 3 : i64}
  exec.kv_attention %rot meta(%starts, %lens, %tables, %slots) -> %out {block_size = 16 : i64, head_dim = 8 : i64, layer = 0 : i64, num_heads = 2 : i64, num_kv_heads = 1 : i64, rotary = "decode", scale = 5.000000e-01 : f32}
  exec.output "o" from %out
  exec.return
}

// -----

// Tests that a rotary in place (input = output) is fine: "decode" (with kv-write: "decode_or_kv_write").
// CHECK-LABEL: exec.program @in_place
// CHECK: exec.kv_attention {{.+}} rotary = "decode"
// WRITE: exec.kv_attention {{.+}} rotary = "decode_or_kv_write"
exec.program @in_place {
  %arena = exec.arena size #exec.affine<0 * T + 65536> {bound_tokens = 8 : i64}
  %freq = exec.constant dense<1.0> : tensor<2xf32>
  %raw = exec.buffer %arena [#exec.affine<0 * T + 0>] size #exec.affine<100 * T + 0> of bf16
  %rot = exec.buffer %arena [#exec.affine<100 * T + 0>] size #exec.affine<100 * T + 0> of bf16
  %out = exec.buffer %arena [#exec.affine<200 * T + 0>] size #exec.affine<64 * T + 0> of bf16
  %other = exec.buffer %arena [#exec.affine<264 * T + 0>] size #exec.affine<100 * T + 0> of bf16
  %pos = exec.buffer %arena [#exec.affine<364 * T + 0>] size #exec.affine<8 * T + 0> of i64
  %starts = exec.buffer %arena [#exec.affine<372 * T + 0>] size #exec.affine<8 * T + 8> of i64
  %lens = exec.buffer %arena [#exec.affine<380 * T + 8>] size #exec.affine<8 * T + 0> of i64
  %tables = exec.buffer %arena [#exec.affine<388 * T + 8>] size #exec.affine<8 * T + 0> of i64
  %slots = exec.buffer %arena [#exec.affine<396 * T + 8>] size #exec.affine<8 * T + 0> of i64
  exec.input "token_ids" into %raw
  exec.input "positions" into %pos
  exec.input "seq_starts" into %starts
  exec.input "context_lens" into %lens
  exec.input "block_tables" into %tables
  exec.input "slot_ids" into %slots
  exec.rotary %rot, %freq positions(%pos) -> %rot {head_dim = 4 : i64, num_heads = 4 : i64, rotary_dim = 4 : i64, rotated_heads = 3 : i64}
  exec.kv_attention %rot meta(%starts, %lens, %tables, %slots) -> %out {block_size = 16 : i64, head_dim = 8 : i64, layer = 0 : i64, num_heads = 2 : i64, num_kv_heads = 1 : i64, rotary = "decode", scale = 5.000000e-01 : f32}
  exec.output "o" from %out
  exec.return
}

// -----

// Tests that a rotary reading a weight (not an arena buffer) leaves no decode kernel (with kv-write: "kv_write").
// CHECK-LABEL: exec.program @weight_input
// CHECK: exec.kv_attention
// CHECK-NOT: rotary =
// CHECK: exec.return
// WRITE: exec.kv_attention {{.+}} rotary = "kv_write"
exec.program @weight_input {
  %arena = exec.arena size #exec.affine<0 * T + 65536> {bound_tokens = 8 : i64}
  %freq = exec.constant dense<1.0> : tensor<2xf32>
  %w = exec.weight "qkv" : tensor<4x4xf32>
  %raw = exec.buffer %arena [#exec.affine<0 * T + 0>] size #exec.affine<100 * T + 0> of bf16
  %rot = exec.buffer %arena [#exec.affine<100 * T + 0>] size #exec.affine<100 * T + 0> of bf16
  %out = exec.buffer %arena [#exec.affine<200 * T + 0>] size #exec.affine<64 * T + 0> of bf16
  %other = exec.buffer %arena [#exec.affine<264 * T + 0>] size #exec.affine<100 * T + 0> of bf16
  %pos = exec.buffer %arena [#exec.affine<364 * T + 0>] size #exec.affine<8 * T + 0> of i64
  %starts = exec.buffer %arena [#exec.affine<372 * T + 0>] size #exec.affine<8 * T + 8> of i64
  %lens = exec.buffer %arena [#exec.affine<380 * T + 8>] size #exec.affine<8 * T + 0> of i64
  %tables = exec.buffer %arena [#exec.affine<388 * T + 8>] size #exec.affine<8 * T + 0> of i64
  %slots = exec.buffer %arena [#exec.affine<396 * T + 8>] size #exec.affine<8 * T + 0> of i64
  exec.input "token_ids" into %raw
  exec.input "positions" into %pos
  exec.input "seq_starts" into %starts
  exec.input "context_lens" into %lens
  exec.input "block_tables" into %tables
  exec.input "slot_ids" into %slots
  exec.rotary %w, %freq positions(%pos) -> %rot {head_dim = 4 : i64, num_heads = 4 : i64, rotary_dim = 4 : i64, rotated_heads = 3 : i64}
  exec.kv_attention %rot meta(%starts, %lens, %tables, %slots) -> %out {block_size = 16 : i64, head_dim = 8 : i64, layer = 0 : i64, num_heads = 2 : i64, num_kv_heads = 1 : i64, rotary = "decode", scale = 5.000000e-01 : f32}
  exec.output "o" from %out
  exec.return
}

// -----

// Tests that a launch between the rotary and the attention removes the (stale) attribute.
// CHECK-LABEL: exec.program @not_adjacent
// WRITE-LABEL: exec.program @not_adjacent
// WRITE-NOT: rotary =
// WRITE: exec.return
// CHECK: exec.kv_attention
// CHECK-NOT: rotary =
// CHECK: exec.return
exec.program @not_adjacent {
  %arena = exec.arena size #exec.affine<0 * T + 65536> {bound_tokens = 8 : i64}
  %freq = exec.constant dense<1.0> : tensor<2xf32>
  %raw = exec.buffer %arena [#exec.affine<0 * T + 0>] size #exec.affine<100 * T + 0> of bf16
  %rot = exec.buffer %arena [#exec.affine<100 * T + 0>] size #exec.affine<100 * T + 0> of bf16
  %out = exec.buffer %arena [#exec.affine<200 * T + 0>] size #exec.affine<64 * T + 0> of bf16
  %other = exec.buffer %arena [#exec.affine<264 * T + 0>] size #exec.affine<100 * T + 0> of bf16
  %pos = exec.buffer %arena [#exec.affine<364 * T + 0>] size #exec.affine<8 * T + 0> of i64
  %starts = exec.buffer %arena [#exec.affine<372 * T + 0>] size #exec.affine<8 * T + 8> of i64
  %lens = exec.buffer %arena [#exec.affine<380 * T + 8>] size #exec.affine<8 * T + 0> of i64
  %tables = exec.buffer %arena [#exec.affine<388 * T + 8>] size #exec.affine<8 * T + 0> of i64
  %slots = exec.buffer %arena [#exec.affine<396 * T + 8>] size #exec.affine<8 * T + 0> of i64
  exec.input "token_ids" into %raw
  exec.input "positions" into %pos
  exec.input "seq_starts" into %starts
  exec.input "context_lens" into %lens
  exec.input "block_tables" into %tables
  exec.input "slot_ids" into %slots
  exec.rotary %raw, %freq positions(%pos) -> %rot {head_dim = 4 : i64, num_heads = 4 : i64, rotary_dim = 4 : i64, rotated_heads = 3 : i64}
  exec.copy %raw -> %other {in_features = 12 : i64, length = 12 : i64, offset = 0 : i64}
  exec.kv_attention %rot meta(%starts, %lens, %tables, %slots) -> %out {block_size = 16 : i64, head_dim = 8 : i64, layer = 0 : i64, num_heads = 2 : i64, num_kv_heads = 1 : i64, rotary = "decode", scale = 5.000000e-01 : f32}
  exec.output "o" from %out
  exec.output "other" from %other
  exec.return
}

// -----

// Tests that a rotary output of another type than the attention's removes the attribute.
// CHECK-LABEL: exec.program @other_type
// WRITE-LABEL: exec.program @other_type
// WRITE-NOT: rotary =
// WRITE: exec.return
// CHECK: exec.kv_attention
// CHECK-NOT: rotary =
// CHECK: exec.return
exec.program @other_type {
  %arena = exec.arena size #exec.affine<0 * T + 65536> {bound_tokens = 8 : i64}
  %freq = exec.constant dense<1.0> : tensor<2xf32>
  %raw = exec.buffer %arena [#exec.affine<0 * T + 0>] size #exec.affine<100 * T + 0> of bf16
  %rot = exec.buffer %arena [#exec.affine<100 * T + 0>] size #exec.affine<100 * T + 0> of bf16
  %out = exec.buffer %arena [#exec.affine<200 * T + 0>] size #exec.affine<64 * T + 0> of f16
  %other = exec.buffer %arena [#exec.affine<264 * T + 0>] size #exec.affine<100 * T + 0> of bf16
  %pos = exec.buffer %arena [#exec.affine<364 * T + 0>] size #exec.affine<8 * T + 0> of i64
  %starts = exec.buffer %arena [#exec.affine<372 * T + 0>] size #exec.affine<8 * T + 8> of i64
  %lens = exec.buffer %arena [#exec.affine<380 * T + 8>] size #exec.affine<8 * T + 0> of i64
  %tables = exec.buffer %arena [#exec.affine<388 * T + 8>] size #exec.affine<8 * T + 0> of i64
  %slots = exec.buffer %arena [#exec.affine<396 * T + 8>] size #exec.affine<8 * T + 0> of i64
  exec.input "token_ids" into %raw
  exec.input "positions" into %pos
  exec.input "seq_starts" into %starts
  exec.input "context_lens" into %lens
  exec.input "block_tables" into %tables
  exec.input "slot_ids" into %slots
  exec.rotary %raw, %freq positions(%pos) -> %rot {head_dim = 4 : i64, num_heads = 4 : i64, rotary_dim = 4 : i64, rotated_heads = 3 : i64}
  exec.kv_attention %rot meta(%starts, %lens, %tables, %slots) -> %out {block_size = 16 : i64, head_dim = 8 : i64, layer = 0 : i64, num_heads = 2 : i64, num_kv_heads = 1 : i64, rotary = "decode", scale = 5.000000e-01 : f32}
  exec.output "o" from %out
  exec.return
}

// -----

// Tests that 32-bit heads have no decode kernel: only the KV write may rotate.
// CHECK-LABEL: exec.program @f32_heads
// CHECK-NOT: rotary =
// CHECK: exec.return
// WRITE-LABEL: exec.program @f32_heads
// WRITE: exec.kv_attention {{.+}} rotary = "kv_write"
exec.program @f32_heads {
  %arena = exec.arena size #exec.affine<0 * T + 65536> {bound_tokens = 8 : i64}
  %freq = exec.constant dense<1.0> : tensor<2xf32>
  %raw = exec.buffer %arena [#exec.affine<0 * T + 0>] size #exec.affine<100 * T + 0> of f32
  %rot = exec.buffer %arena [#exec.affine<100 * T + 0>] size #exec.affine<100 * T + 0> of f32
  %out = exec.buffer %arena [#exec.affine<200 * T + 0>] size #exec.affine<64 * T + 0> of f32
  %other = exec.buffer %arena [#exec.affine<264 * T + 0>] size #exec.affine<100 * T + 0> of f32
  %pos = exec.buffer %arena [#exec.affine<364 * T + 0>] size #exec.affine<8 * T + 0> of i64
  %starts = exec.buffer %arena [#exec.affine<372 * T + 0>] size #exec.affine<8 * T + 8> of i64
  %lens = exec.buffer %arena [#exec.affine<380 * T + 8>] size #exec.affine<8 * T + 0> of i64
  %tables = exec.buffer %arena [#exec.affine<388 * T + 8>] size #exec.affine<8 * T + 0> of i64
  %slots = exec.buffer %arena [#exec.affine<396 * T + 8>] size #exec.affine<8 * T + 0> of i64
  exec.input "token_ids" into %raw
  exec.input "positions" into %pos
  exec.input "seq_starts" into %starts
  exec.input "context_lens" into %lens
  exec.input "block_tables" into %tables
  exec.input "slot_ids" into %slots
  exec.rotary %raw, %freq positions(%pos) -> %rot {head_dim = 4 : i64, num_heads = 4 : i64, rotary_dim = 4 : i64, rotated_heads = 3 : i64}
  exec.kv_attention %rot meta(%starts, %lens, %tables, %slots) -> %out {block_size = 16 : i64, head_dim = 8 : i64, layer = 0 : i64, num_heads = 2 : i64, num_kv_heads = 1 : i64, rotary = "decode", scale = 5.000000e-01 : f32}
  exec.output "o" from %out
  exec.return
}


// -----

// Tests that a sliding window has no decode kernel.
// CHECK-LABEL: exec.program @window
// CHECK-NOT: rotary =
// CHECK: exec.return
// WRITE-LABEL: exec.program @window
// WRITE: exec.kv_attention {{.+}} rotary = "kv_write"
exec.program @window {
  %arena = exec.arena size #exec.affine<0 * T + 65536> {bound_tokens = 8 : i64}
  %freq = exec.constant dense<1.0> : tensor<2xf32>
  %raw = exec.buffer %arena [#exec.affine<0 * T + 0>] size #exec.affine<100 * T + 0> of bf16
  %rot = exec.buffer %arena [#exec.affine<100 * T + 0>] size #exec.affine<100 * T + 0> of bf16
  %out = exec.buffer %arena [#exec.affine<200 * T + 0>] size #exec.affine<64 * T + 0> of bf16
  %other = exec.buffer %arena [#exec.affine<264 * T + 0>] size #exec.affine<100 * T + 0> of bf16
  %pos = exec.buffer %arena [#exec.affine<364 * T + 0>] size #exec.affine<8 * T + 0> of i64
  %starts = exec.buffer %arena [#exec.affine<372 * T + 0>] size #exec.affine<8 * T + 8> of i64
  %lens = exec.buffer %arena [#exec.affine<380 * T + 8>] size #exec.affine<8 * T + 0> of i64
  %tables = exec.buffer %arena [#exec.affine<388 * T + 8>] size #exec.affine<8 * T + 0> of i64
  %slots = exec.buffer %arena [#exec.affine<396 * T + 8>] size #exec.affine<8 * T + 0> of i64
  exec.input "token_ids" into %raw
  exec.input "positions" into %pos
  exec.input "seq_starts" into %starts
  exec.input "context_lens" into %lens
  exec.input "block_tables" into %tables
  exec.input "slot_ids" into %slots
  exec.rotary %raw, %freq positions(%pos) -> %rot {head_dim = 4 : i64, num_heads = 4 : i64, rotary_dim = 4 : i64, rotated_heads = 3 : i64}
  exec.kv_attention %rot meta(%starts, %lens, %tables, %slots) -> %out {block_size = 16 : i64, head_dim = 8 : i64, layer = 0 : i64, num_heads = 2 : i64, num_kv_heads = 1 : i64, rotary = "decode", scale = 5.000000e-01 : f32, window = 4 : i64}
  exec.output "o" from %out
  exec.return
}


// -----

// Tests that heads of 12 (not a multiple of 8) have no decode kernel.
// CHECK-LABEL: exec.program @wide_heads
// CHECK-NOT: rotary =
// CHECK: exec.return
// WRITE-LABEL: exec.program @wide_heads
// WRITE: exec.kv_attention {{.+}} rotary = "kv_write"
exec.program @wide_heads {
  %arena = exec.arena size #exec.affine<0 * T + 65536> {bound_tokens = 8 : i64}
  %freq = exec.constant dense<1.0> : tensor<2xf32>
  %raw = exec.buffer %arena [#exec.affine<0 * T + 0>] size #exec.affine<100 * T + 0> of bf16
  %rot = exec.buffer %arena [#exec.affine<100 * T + 0>] size #exec.affine<100 * T + 0> of bf16
  %out = exec.buffer %arena [#exec.affine<200 * T + 0>] size #exec.affine<64 * T + 0> of bf16
  %other = exec.buffer %arena [#exec.affine<264 * T + 0>] size #exec.affine<100 * T + 0> of bf16
  %pos = exec.buffer %arena [#exec.affine<364 * T + 0>] size #exec.affine<8 * T + 0> of i64
  %starts = exec.buffer %arena [#exec.affine<372 * T + 0>] size #exec.affine<8 * T + 8> of i64
  %lens = exec.buffer %arena [#exec.affine<380 * T + 8>] size #exec.affine<8 * T + 0> of i64
  %tables = exec.buffer %arena [#exec.affine<388 * T + 8>] size #exec.affine<8 * T + 0> of i64
  %slots = exec.buffer %arena [#exec.affine<396 * T + 8>] size #exec.affine<8 * T + 0> of i64
  exec.input "token_ids" into %raw
  exec.input "positions" into %pos
  exec.input "seq_starts" into %starts
  exec.input "context_lens" into %lens
  exec.input "block_tables" into %tables
  exec.input "slot_ids" into %slots
  exec.rotary %raw, %freq positions(%pos) -> %rot {head_dim = 4 : i64, num_heads = 4 : i64, rotary_dim = 4 : i64, rotated_heads = 3 : i64}
  exec.kv_attention %rot meta(%starts, %lens, %tables, %slots) -> %out {block_size = 16 : i64, head_dim = 12 : i64, layer = 0 : i64, num_heads = 2 : i64, num_kv_heads = 1 : i64, rotary = "decode", scale = 5.000000e-01 : f32}
  exec.output "o" from %out
  exec.return
}


// -----

// Tests that an FP8 cache (its own KV write) takes neither.
// CHECK-LABEL: exec.program @fp8_cache
// CHECK-NOT: rotary =
// CHECK: exec.return
// WRITE-LABEL: exec.program @fp8_cache
// WRITE-NOT: rotary =
// WRITE: exec.return
exec.program @fp8_cache {
  %arena = exec.arena size #exec.affine<0 * T + 65536> {bound_tokens = 8 : i64}
  %freq = exec.constant dense<1.0> : tensor<2xf32>
  %raw = exec.buffer %arena [#exec.affine<0 * T + 0>] size #exec.affine<100 * T + 0> of bf16
  %rot = exec.buffer %arena [#exec.affine<100 * T + 0>] size #exec.affine<100 * T + 0> of bf16
  %out = exec.buffer %arena [#exec.affine<200 * T + 0>] size #exec.affine<64 * T + 0> of bf16
  %other = exec.buffer %arena [#exec.affine<264 * T + 0>] size #exec.affine<100 * T + 0> of bf16
  %pos = exec.buffer %arena [#exec.affine<364 * T + 0>] size #exec.affine<8 * T + 0> of i64
  %starts = exec.buffer %arena [#exec.affine<372 * T + 0>] size #exec.affine<8 * T + 8> of i64
  %lens = exec.buffer %arena [#exec.affine<380 * T + 8>] size #exec.affine<8 * T + 0> of i64
  %tables = exec.buffer %arena [#exec.affine<388 * T + 8>] size #exec.affine<8 * T + 0> of i64
  %slots = exec.buffer %arena [#exec.affine<396 * T + 8>] size #exec.affine<8 * T + 0> of i64
  exec.input "token_ids" into %raw
  exec.input "positions" into %pos
  exec.input "seq_starts" into %starts
  exec.input "context_lens" into %lens
  exec.input "block_tables" into %tables
  exec.input "slot_ids" into %slots
  exec.rotary %raw, %freq positions(%pos) -> %rot {head_dim = 4 : i64, num_heads = 4 : i64, rotary_dim = 4 : i64, rotated_heads = 3 : i64}
  exec.kv_attention %rot meta(%starts, %lens, %tables, %slots) -> %out {block_size = 16 : i64, head_dim = 8 : i64, k_cache_scale = 2.000000e-02 : f32, layer = 0 : i64, num_heads = 2 : i64, num_kv_heads = 1 : i64, rotary = "decode", scale = 5.000000e-01 : f32}
  exec.output "o" from %out
  exec.return
}

