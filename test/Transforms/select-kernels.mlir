// RUN: infer-opt --split-input-file --pass-pipeline='builtin.module(exec.program(infer-select-kernels))' %s | FileCheck %s
// RUN: infer-opt --split-input-file --pass-pipeline='builtin.module(exec.program(infer-select-kernels{mma-gemv-min-tokens=4}))' %s | FileCheck %s --check-prefix=MIN4
// RUN: infer-opt --split-input-file --pass-pipeline='builtin.module(exec.program(infer-select-kernels{mma-gemv-min-tokens=0}))' %s | FileCheck %s --check-prefix=NEVER
// RUN: infer-opt --split-input-file --pass-pipeline='builtin.module(exec.program(infer-select-kernels{prefill-kernels=false}))' %s | FileCheck %s --check-prefix=NOPREFILL
// RUN: not infer-opt --split-input-file --pass-pipeline='builtin.module(exec.program(infer-select-kernels{mma-gemv-min-tokens=9}))' %s 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: infer-opt --split-input-file --pass-pipeline='builtin.module(exec.program(infer-select-kernels{quantized-mma=false}))' %s | FileCheck %s --check-prefix=NOQMMA
// RUN: infer-opt --split-input-file --pass-pipeline='builtin.module(exec.program(infer-select-kernels{fp8-gemm=false}))' %s | FileCheck %s --check-prefix=NOFP8
// RUN: infer-opt --split-input-file --pass-pipeline='builtin.module(exec.program(infer-select-kernels{fp8-cache-prefill=false}))' %s | FileCheck %s --check-prefix=NOFP8PRE
// RUN: infer-opt --split-input-file --pass-pipeline='builtin.module(exec.program(infer-select-kernels{fp8-mma=false}))' %s | FileCheck %s --check-prefix=NOFP8MMA

// The decode GEMV kernels each GEMM gets, by shape (runtime/cuda/abi/GemvGeometry.h):
// [n, k] bf16 with k = 64: infer_gemv, the row GEMV with its 4-row form, the
// tensor-core GEMV for steps of 3 (the default) to 8 tokens with k over 8 warps;
// k = 14,336 (Llama-3-8B's down projection): one staged row for the row GEMV,
// 3 for the tensor-core one;
// n = 128,256 (its LM head): the tensor-core GEMV's warps take whole tiles
// (splits 1); f32 and [k, n] weights: infer_gemv alone. A stale attribute goes.
// With mma-gemv-min-tokens = 4 the tensor-core GEMV starts at 4 tokens, and
// the down projection, which stages 3, has none; with 0 no GEMM has it; past
// kGemvMmaRows (8) the pass fails.
// CHECK-LABEL: exec.program @gemms
// CHECK: exec.gemm {{.+}} {gemv_grid = array<i64: 4, 1, 1>, k = 64 : i64, mma_gemv = array<i64: 3, 8, 8>, n = 128 : i64, row_gemv_rows = 4 : i64, transpose_weight = true}
// CHECK: exec.gemm {{.+}} {gemv_grid = array<i64: {{[0-9]+}}, {{[0-9]+}}, 1>, k = 14336 : i64, mma_gemv = array<i64: 3, 3, 8>, n = 4096 : i64, row_gemv_rows = 1 : i64, transpose_weight = true}
// CHECK: exec.gemm {{.+}} {gemv_grid = array<i64: {{[0-9]+}}, {{[0-9]+}}, 1>, k = 4096 : i64, mma_gemv = array<i64: 3, 8, 1>, n = 128256 : i64, row_gemv_rows = 4 : i64, transpose_weight = true}
// CHECK: exec.gemm {{.+}} {gemv_grid = array<i64: 4, 1, 1>, k = 64 : i64, n = 128 : i64, transpose_weight = true}
// CHECK: exec.gemm {{.+}} {gemv_grid = array<i64: 2, 1, 1>, k = 64 : i64, n = 128 : i64}
// MIN4-LABEL: exec.program @gemms
// MIN4: exec.gemm {{.+}} k = 64 : i64, mma_gemv = array<i64: 4, 8, 8>, n = 128 : i64
// MIN4: exec.gemm {{.+}} {gemv_grid = array<i64: {{[0-9]+}}, {{[0-9]+}}, 1>, k = 14336 : i64, n = 4096 : i64, row_gemv_rows = 1 : i64
// MIN4: exec.gemm {{.+}} k = 4096 : i64, mma_gemv = array<i64: 4, 8, 1>, n = 128256
// NEVER-LABEL: exec.program @gemms
// NEVER-NOT: mma_gemv
// NEVER: exec.return
// BAD: error: mma-gemv-min-tokens must be 0 (never) to 8, not 9
exec.program @gemms {
  %arena = exec.arena size #exec.affine<0 * T + 4194304>
  %w1 = exec.constant dense<1.0> : tensor<128x64xbf16>
  %x = exec.buffer %arena [#exec.affine<0 * T + 0>] size #exec.affine<28672 * T + 0> of bf16
  %y1 = exec.buffer %arena [#exec.affine<0 * T + 65536>] size #exec.affine<256 * T + 0> of bf16
  %y2 = exec.buffer %arena [#exec.affine<0 * T + 131072>] size #exec.affine<8192 * T + 0> of bf16
  %y3 = exec.buffer %arena [#exec.affine<0 * T + 262144>] size #exec.affine<256512 * T + 0> of bf16
  %x32 = exec.buffer %arena [#exec.affine<0 * T + 3000000>] size #exec.affine<256 * T + 0> of f32
  %y4 = exec.buffer %arena [#exec.affine<0 * T + 3100000>] size #exec.affine<512 * T + 0> of f32
  %y5 = exec.buffer %arena [#exec.affine<0 * T + 3200000>] size #exec.affine<256 * T + 0> of bf16
  exec.input "x" into %x
  exec.input "x32" into %x32
  exec.gemm %x, %w1 -> %y1 {k = 64 : i64, n = 128 : i64, transpose_weight = true}
  exec.gemm %x, %w1 -> %y2 {k = 14336 : i64, n = 4096 : i64, transpose_weight = true}
  exec.gemm %x, %w1 -> %y3 {k = 4096 : i64, n = 128256 : i64, transpose_weight = true}
  exec.gemm %x32, %w1 -> %y4 {k = 64 : i64, n = 128 : i64, mma_gemv = array<i64: 3, 8, 8>, row_gemv_rows = 4 : i64, transpose_weight = true}
  exec.gemm %x, %w1 -> %y5 {k = 64 : i64, n = 128 : i64}
  exec.output "y1" from %y1
  exec.output "y2" from %y2
  exec.output "y3" from %y3
  exec.output "y4" from %y4
  exec.output "y5" from %y5
  exec.return
}

// -----

// The tensor-core prefill kernel each paged attention gets: wgmma at 128-wide
// bf16 heads, mma.sync at 64; none with a window, in f32, at 8-wide heads
// (not a multiple of 16); an FP8 cache's 128-wide heads get mma.sync (the
// kernel that decodes E4M3 as it loads; never wgmma).
// CHECK-LABEL: exec.program @attentions
// CHECK: exec.kv_attention {{.+}} head_dim = 128 : i64, {{.+}} prefill_kernel = "wgmma"
// CHECK: exec.kv_attention {{.+}} head_dim = 64 : i64, {{.+}} prefill_kernel = "mma"
// CHECK-NOT: prefill_kernel
// CHECK: exec.kv_attention {{.+}} k_cache_scale = 2.000000e-02 : f32, {{.+}} prefill_kernel = "mma"
// CHECK: exec.return
// With prefill-kernels=false none has one (every step on infer_kv_attention's
// one block per token); the GEMMs keep their GEMVs.
// NOPREFILL: mma_gemv = array<i64: 3, 8, 8>
// NOPREFILL-LABEL: exec.program @attentions
// NOPREFILL-NOT: prefill_kernel
// NOPREFILL: exec.return
// With fp8-cache-prefill=false the FP8 cache has none (the general path).
// NOFP8PRE-LABEL: exec.program @attentions
// NOFP8PRE: exec.kv_attention {{.+}} head_dim = 64 : i64, {{.+}} prefill_kernel = "mma"
// NOFP8PRE-NOT: prefill_kernel
// NOFP8PRE: exec.return
exec.program @attentions {
  %arena = exec.arena size #exec.affine<0 * T + 1048576>
  %qkv = exec.buffer %arena [#exec.affine<0 * T + 0>] size #exec.affine<2048 * T + 0> of bf16
  %o1 = exec.buffer %arena [#exec.affine<2048 * T + 0>] size #exec.affine<512 * T + 0> of bf16
  %o2 = exec.buffer %arena [#exec.affine<2560 * T + 0>] size #exec.affine<512 * T + 0> of bf16
  %o3 = exec.buffer %arena [#exec.affine<3072 * T + 0>] size #exec.affine<512 * T + 0> of bf16
  %qkv32 = exec.buffer %arena [#exec.affine<3584 * T + 0>] size #exec.affine<4096 * T + 0> of f32
  %o4 = exec.buffer %arena [#exec.affine<7680 * T + 0>] size #exec.affine<1024 * T + 0> of f32
  %o5 = exec.buffer %arena [#exec.affine<8704 * T + 0>] size #exec.affine<512 * T + 0> of bf16
  %o6 = exec.buffer %arena [#exec.affine<9216 * T + 0>] size #exec.affine<512 * T + 0> of bf16
  %starts = exec.buffer %arena [#exec.affine<9728 * T + 0>] size #exec.affine<8 * T + 8> of i64
  %lens = exec.buffer %arena [#exec.affine<9736 * T + 8>] size #exec.affine<8 * T + 0> of i64
  %tables = exec.buffer %arena [#exec.affine<9744 * T + 8>] size #exec.affine<8 * T + 0> of i64
  %slots = exec.buffer %arena [#exec.affine<9752 * T + 8>] size #exec.affine<8 * T + 0> of i64
  exec.input "qkv" into %qkv
  exec.input "qkv32" into %qkv32
  exec.input "seq_starts" into %starts
  exec.input "context_lens" into %lens
  exec.input "block_tables" into %tables
  exec.input "slot_ids" into %slots
  exec.kv_attention %qkv meta(%starts, %lens, %tables, %slots) -> %o1 {block_size = 16 : i64, head_dim = 128 : i64, layer = 0 : i64, num_heads = 2 : i64, num_kv_heads = 1 : i64, scale = 1.0e-01 : f32}
  exec.kv_attention %qkv meta(%starts, %lens, %tables, %slots) -> %o2 {block_size = 16 : i64, head_dim = 64 : i64, layer = 1 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 1.0e-01 : f32}
  exec.kv_attention %qkv meta(%starts, %lens, %tables, %slots) -> %o3 {block_size = 16 : i64, head_dim = 128 : i64, layer = 2 : i64, num_heads = 2 : i64, num_kv_heads = 1 : i64, prefill_kernel = "wgmma", scale = 1.0e-01 : f32, window = 64 : i64}
  exec.kv_attention %qkv32 meta(%starts, %lens, %tables, %slots) -> %o4 {block_size = 16 : i64, head_dim = 128 : i64, layer = 3 : i64, num_heads = 2 : i64, num_kv_heads = 1 : i64, scale = 1.0e-01 : f32}
  exec.kv_attention %qkv meta(%starts, %lens, %tables, %slots) -> %o5 {block_size = 16 : i64, head_dim = 8 : i64, layer = 4 : i64, num_heads = 32 : i64, num_kv_heads = 16 : i64, scale = 1.0e-01 : f32}
  exec.kv_attention %qkv meta(%starts, %lens, %tables, %slots) -> %o6 {block_size = 16 : i64, head_dim = 128 : i64, k_cache_scale = 2.0e-02 : f32, layer = 5 : i64, num_heads = 2 : i64, num_kv_heads = 1 : i64, scale = 1.0e-01 : f32, v_cache_scale = 2.0e-02 : f32}
  exec.output "o1" from %o1
  exec.output "o2" from %o2
  exec.output "o3" from %o3
  exec.output "o4" from %o4
  exec.output "o5" from %o5
  exec.output "o6" from %o6
  exec.return
}

// -----

// The tensor-core int4 decode GEMV (runtime/cuda/abi/QuantizedGemvGeometry.h):
// int4 with bf16 activations, k and the group multiples of 128 take k steps
// of 128; of 64 (not 128) steps of 64; a group of 32, f32 activations and
// fp8 weights keep infer_quantized_gemm. A stale attribute goes; with
// quantized-mma=false none has one.
// The FP8 GEMM of large steps (QuantizedFp8Gemm.h), by default: fp8 with
// bf16 activations, k % 16 and n % 8 zero; not in f32, not for k = 4,104.
// A stale one goes; with fp8-gemm=false none has one. Beside it the fp8
// decode steps take the FP8 tensor cores where k is a multiple of 64 and the
// activations bf16 (mma_block_k = 64); with fp8-mma=false they do not.
// CHECK-LABEL: exec.program @quantized
// CHECK: exec.quantized_gemm {{.+}} {group_size = 128 : i64, k = 4096 : i64, mma_block_k = 128 : i64, n = 4096 : i64, scheme = "int4"}
// CHECK: exec.quantized_gemm {{.+}} {group_size = 64 : i64, k = 192 : i64, mma_block_k = 64 : i64, n = 64 : i64, scheme = "int4"}
// CHECK-NOT: mma_block_k
// CHECK: exec.quantized_gemm {{.+}} {fp8_gemm, group_size = 0 : i64, k = 4096 : i64, mma_block_k = 64 : i64, n = 4096 : i64, scheme = "fp8"}
// CHECK-NEXT: exec.quantized_gemm {{.+}} {group_size = 0 : i64, k = 4096 : i64, n = 4096 : i64, scheme = "fp8"}
// CHECK-NEXT: exec.quantized_gemm {{.+}} {group_size = 0 : i64, k = 4104 : i64, n = 64 : i64, scheme = "fp8"}
// CHECK: exec.return
// NOQMMA-LABEL: exec.program @quantized
// NOQMMA-NOT: mma_block_k
// NOQMMA: exec.return
// NOFP8MMA-LABEL: exec.program @quantized
// NOFP8MMA: exec.quantized_gemm {{.+}} {group_size = 128 : i64, k = 4096 : i64, mma_block_k = 128 : i64, n = 4096 : i64, scheme = "int4"}
// NOFP8MMA: exec.quantized_gemm {{.+}} {fp8_gemm, group_size = 0 : i64, k = 4096 : i64, n = 4096 : i64, scheme = "fp8"}
// NOFP8MMA-NEXT: exec.quantized_gemm {{.+}} {group_size = 0 : i64, k = 4096 : i64, n = 4096 : i64, scheme = "fp8"}
// NOFP8-LABEL: exec.program @quantized
// NOFP8-NOT: fp8_gemm
// NOFP8: exec.return
exec.program @quantized {
  %arena = exec.arena size #exec.affine<0 * T + 1048576>
  %q = exec.constant dense<0> : tensor<4096x2048xui8>
  %s = exec.constant dense<1.0> : tensor<4096x32xf32>
  %x = exec.buffer %arena [#exec.affine<0 * T + 0>] size #exec.affine<8192 * T + 0> of bf16
  %y1 = exec.buffer %arena [#exec.affine<8192 * T + 0>] size #exec.affine<8192 * T + 0> of bf16
  %y2 = exec.buffer %arena [#exec.affine<16384 * T + 0>] size #exec.affine<128 * T + 0> of bf16
  %y3 = exec.buffer %arena [#exec.affine<16512 * T + 0>] size #exec.affine<128 * T + 0> of bf16
  %x32 = exec.buffer %arena [#exec.affine<16640 * T + 0>] size #exec.affine<16384 * T + 0> of f32
  %y4 = exec.buffer %arena [#exec.affine<33024 * T + 0>] size #exec.affine<16384 * T + 0> of f32
  %y5 = exec.buffer %arena [#exec.affine<49408 * T + 0>] size #exec.affine<8192 * T + 0> of bf16
  %y6 = exec.buffer %arena [#exec.affine<57600 * T + 0>] size #exec.affine<16384 * T + 0> of f32
  %y7 = exec.buffer %arena [#exec.affine<73984 * T + 0>] size #exec.affine<128 * T + 0> of bf16
  exec.input "x" into %x
  exec.input "x32" into %x32
  exec.quantized_gemm %x, %q, %s -> %y1 {group_size = 128 : i64, k = 4096 : i64, n = 4096 : i64, scheme = "int4"}
  exec.quantized_gemm %x, %q, %s -> %y2 {group_size = 64 : i64, k = 192 : i64, n = 64 : i64, scheme = "int4"}
  exec.quantized_gemm %x, %q, %s -> %y3 {group_size = 32 : i64, k = 192 : i64, n = 64 : i64, scheme = "int4", mma_block_k = 64 : i64}
  exec.quantized_gemm %x32, %q, %s -> %y4 {group_size = 128 : i64, k = 4096 : i64, n = 4096 : i64, scheme = "int4"}
  exec.quantized_gemm %x, %q, %s -> %y5 {group_size = 0 : i64, k = 4096 : i64, n = 4096 : i64, scheme = "fp8"}
  exec.quantized_gemm %x32, %q, %s -> %y6 {group_size = 0 : i64, k = 4096 : i64, n = 4096 : i64, scheme = "fp8", fp8_gemm}
  exec.quantized_gemm %x, %q, %s -> %y7 {group_size = 0 : i64, k = 4104 : i64, n = 64 : i64, scheme = "fp8"}
  exec.output "y1" from %y1
  exec.output "y2" from %y2
  exec.output "y3" from %y3
  exec.output "y4" from %y4
  exec.output "y5" from %y5
  exec.output "y6" from %y6
  exec.output "y7" from %y7
  exec.return
}
