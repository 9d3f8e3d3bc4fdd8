//===- Passes.td - exec dialect passes ---------------------*- tablegen -*-===//
//
// Passes over exec programs (docs/exec.md): memory planning, the step
// entry (docs/kv-cache.md) and the kernel fusions they leave decided in the IR.
//
//===----------------------------------------------------------------------===//

#ifndef INFER_DIALECTS_EXEC_TRANSFORMS_PASSES_TD
#define INFER_DIALECTS_EXEC_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def PlanMemoryPass : Pass<"infer-plan-memory", "::infer::exec::ProgramOp"> {
  let summary = "Assigns every exec.buffer an arena offset from buffer lifetimes";
  let description = [{
    A buffer is live from the first to the last op (in program order) that
    uses it. Buffers whose lifetimes do not overlap share bytes; overlapping
    ones never do (an op's inputs and its output are live at the same op, so
    a launch never writes over what it reads). Sizes are evaluated at
    T = `max-batch-tokens` and packed greedily (largest first, best fit,
    256-byte aligned). The plan is made at the bound: offsets and the arena
    size are constants, valid for every T <= bound; the arena records
    `bound_tokens` and `peak_live_bytes` (the most bytes live at one op).
    Guarantees: every buffer has an offset, lies inside the arena, and
    shares no byte with a buffer live at the same time.

    Before:
    ```mlir
    %arena = exec.arena
    %a = exec.buffer %arena size #exec.affine<256 * T + 0> of f32
    ```
    After (`max-batch-tokens=8`):
    ```mlir
    %arena = exec.arena size #exec.affine<0 * T + 2048> {bound_tokens = 8 : i64, peak_live_bytes = 2048 : i64}
    %a = exec.buffer %arena [#exec.affine<0 * T + 0>] size #exec.affine<256 * T + 0> of f32
    ```
  }];
  let options = [
    Option<"maxBatchTokens", "max-batch-tokens", "int64_t", /*default=*/"8192",
           "The bound on T (batch * seq) the arena is planned for">
  ];
  let dependentDialects = ["::infer::exec::ExecDialect"];
}

def StepEntryPass : Pass<"infer-step-entry", "::infer::exec::ProgramOp"> {
  let summary = "Turns a lowered forward program into the paged-KV `step` entry";
  let description = [{
    Runs on an unplanned program (before `--infer-plan-memory`) whose one
    input is the [batch, seq] token ids. The result serves a packed batch:
    T new tokens of S <= T sequences, seen as batch 1 x seq T, so every
    token-major buffer is unchanged (docs/kv-cache.md, "The step program").

    * the ids input is renamed `token_ids`; five i64 inputs follow it:
      `positions` [T], `seq_starts` [S+1], `context_lens` [S],
      `block_tables` [S, B] and `slot_ids` [T], sized for S = T
      (`8 * T`, `8 * T + 8`, `8 * T`, `8 * B * T`, `8 * T` bytes), with
      B = ceil(`max-seq-len` / `block-size`);
    * `exec.rotary` takes `positions`, an `exec.embedding` with a learned
      position table takes them as `position_ids`;
    * the i-th causal `exec.attention` becomes `exec.kv_attention` with
      `layer = i` and the metadata buffers: it writes this step's K and V
      into the runtime-owned cache of that layer and attends over it.

    Fails (naming the op) on a program with other inputs, a non-causal
    attention, per-token rotary caches, or layers whose KV heads or head
    sizes differ (one cache layout serves all layers).

    Before:
    ```mlir
    exec.input "input_ids" into %ids
    exec.rotary %qkv, %freq -> %r {...}
    exec.attention %r -> %o {causal = true, ...}
    ```
    After (`block-size=16 max-seq-len=64`):
    ```mlir
    exec.input "token_ids" into %ids
    %pos = exec.buffer %arena size #exec.affine<8 * T + 0> of i64
    exec.input "positions" into %pos
    ...
    %bt = exec.buffer %arena size #exec.affine<32 * T + 0> of i64
    exec.input "block_tables" into %bt
    ...
    exec.rotary %qkv, %freq positions(%pos) -> %r {...}
    exec.kv_attention %r meta(%starts, %lens, %bt, %slots) -> %o {block_size = 16 : i64, layer = 0 : i64, ...}
    ```
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"16",
           "Tokens per KV-cache block">,
    Option<"maxSeqLen", "max-seq-len", "int64_t", /*default=*/"4096",
           "The longest sequence (sets B, the block-table width)">
  ];
  let dependentDialects = ["::infer::exec::ExecDialect"];
}

def FoldGemmProloguePass : Pass<"infer-fold-gemm-prologue", "::infer::exec::ProgramOp"> {
  let summary = "Marks the GEMMs whose decode GEMV may compute the launch before them";
  let description = [{
    Runs on a planned program (after `--infer-plan-memory`). An `exec.gemm`
    gets `prologue = "rms_norm"` or `"gated_activation"` when the launch just
    before it (buffers, weights and constants aside) is that op and
      * writes the GEMM's input, in the GEMM's element type (an RMS norm's
        weight too, as the artifact stores it: a float weight in
        `weight-dtype` when that is given, as `infer-compile --dtype` does),
        over `features` = k;
      * nothing else reads that input: no other launch, no program output;
      * each buffer the prologue reads lies apart from the GEMM's output at
        every T from 1 to `max-rows` (the GEMV reads them while it writes).
    Every other GEMM loses the attribute. The cuda backend's decode GEMVs
    (infer_gemv_fused, infer_gemv_rows, the qkv-decode kernel) then read the
    prologue's inputs instead of the GEMM's; the prologue launch still runs
    for steps of more rows. The cpu backend ignores the attribute.

    Before:
    ```mlir
    exec.rms_norm %x, %nw -> %h {epsilon = 1.0e-06 : f32, features = 64 : i64}
    exec.gemm %h, %w -> %y {k = 64 : i64, n = 128 : i64}
    ```
    After:
    ```mlir
    exec.rms_norm %x, %nw -> %h {epsilon = 1.0e-06 : f32, features = 64 : i64}
    exec.gemm %h, %w -> %y {k = 64 : i64, n = 128 : i64, prologue = "rms_norm"}
    ```
  }];
  let options = [
    Option<"maxRows", "max-rows", "int64_t", /*default=*/"8",
           "The most token rows a decode GEMV runs (the cuda backend's kGemvMaxRows)">,
    Option<"weightDtype", "weight-dtype", "std::string", /*default=*/"\"\"",
           "fp32, bf16 or fp16: the type the artifact stores float weights in (none: as declared)">
  ];
  let dependentDialects = ["::infer::exec::ExecDialect"];
}

def FoldGemmEpiloguePass : Pass<"infer-fold-gemm-epilogue", "::infer::exec::ProgramOp"> {
  let summary = "Marks the GEMMs whose batch-1 GEMV writes the gated activation after them or folds the logits' argmax";
  let description = [{
    Runs after `--infer-fold-gemm-prologue`. The batch-1 row GEMV of the cuda
    backend (infer_gemv_rows) runs a GEMM with [n, k] weights
    (`transpose_weight`) of a 16-bit type whose k is a multiple of 8 and
    whose input row fits its staging; only such a GEMM gets an epilogue.
    With `gated-activation`, one without a residual gets
    `epilogue = "gated_activation"` when the launch just after it is a silu,
    gelu or gelu_tanh `exec.gated_activation` that
      * reads the GEMM's whole output as its one packed [gate | up] input
        (n = 2 x features), in the GEMM's element type;
      * is the only reader of that output (no other launch, no program output);
      * writes an output apart, at T = 1, from every buffer the GEMV reads:
        the GEMM's operands, or with a `prologue` the prologue launch's
        inputs in place of the GEMM's input.
    The GEMV then writes the activation's output and the activation launch is
    skipped in steps of one token; it runs as before in larger steps.
    With `argmax`, a GEMM without an epilogue that writes the program's one
    output, a `per_logit_row` buffer (the step program's logits), gets
    `epilogue = "argmax"`: its batch-1 GEMV also folds each row's argmax,
    which the greedy sampler reads instead of scanning the logits.
    Every other GEMM loses the attribute. The cpu backend ignores it.

    Before:
    ```mlir
    exec.gemm %h, %w -> %gu {k = 64 : i64, n = 320 : i64, prologue = "rms_norm", transpose_weight = true}
    exec.gated_activation %gu -> %a {activation = "silu", features = 160 : i64}
    ```
    After:
    ```mlir
    exec.gemm %h, %w -> %gu {epilogue = "gated_activation", k = 64 : i64, n = 320 : i64, prologue = "rms_norm", transpose_weight = true}
    exec.gated_activation %gu -> %a {activation = "silu", features = 160 : i64}
    ```
  }];
  let options = [
    Option<"gatedActivation", "gated-activation", "bool", /*default=*/"true",
           "Fold the gated activation after a GEMM">,
    Option<"argmax", "argmax", "bool", /*default=*/"true",
           "Fold the logits' argmax into the LM head">
  ];
  let dependentDialects = ["::infer::exec::ExecDialect"];
}

def FoldKvRotaryPass : Pass<"infer-fold-kv-rotary", "::infer::exec::ProgramOp"> {
  let summary = "Decides which kernels of a paged attention do the rotary before it";
  let description = [{
    Runs on a planned step program. An `exec.kv_attention` without FP8 cache
    scales whose one input is the output of the `exec.rotary` just before
    it, in the attention's element type, may do that rotary:
      * with `decode`, in decode steps: one kernel (infer_kv_decode) reads
        the raw rows, rotates them, writes the cache and attends. It needs
        no other launch and no program output reading the rotated rows, the
        rotary's input to be its output (in place) or apart from the
        attention's output at every T up to the arena's `bound_tokens`, and
        a head the kernel has: a 16-bit type, head_dim a multiple of 8 up
        to 128, no sliding window, no ALiBi;
      * with `kv-write`, in every step the decode kernel does not run: the
        KV write kernel (infer_rotary_kv_write) rotates what it writes.
    The attribute says which: `rotary = "decode"`, `"kv_write"` or
    `"decode_or_kv_write"`; the rotary launch runs in the other steps. Every
    other paged attention loses it. The cpu backend ignores the attribute.

    Before:
    ```mlir
    exec.rotary %qkv, %freq positions(%pos) -> %r {...}
    exec.kv_attention %r meta(%starts, %lens, %tables, %slots) -> %o {...}
    ```
    After:
    ```mlir
    exec.rotary %qkv, %freq positions(%pos) -> %r {...}
    exec.kv_attention %r meta(%starts, %lens, %tables, %slots) -> %o {..., rotary = "decode", ...}
    ```
  }];
  let options = [
    Option<"decode", "decode", "bool", /*default=*/"true",
           "Let decode steps rotate, write the cache and attend in one kernel">,
    Option<"kvWrite", "kv-write", "bool", /*default=*/"false",
           "Let the KV write rotate in the other steps (no gain measured on the H200)">
  ];
  let dependentDialects = ["::infer::exec::ExecDialect"];
}

def FoldQkvDecodePass : Pass<"infer-fold-qkv-decode", "::infer::exec::ProgramOp"> {
  let summary = "Marks the paged attentions whose batch-1 decode kernel also runs the qkv GEMM";
  let description = [{
    Runs after `--infer-fold-gemm-epilogue` and `--infer-fold-kv-rotary`. An
    `exec.kv_attention` with `rotary = "decode"` (or `"decode_or_kv_write"`)
    and heads of at most 64 gets `qkv_decode = true` when the launch before
    its rotary is an `exec.gemm` that
      * writes the rotary's input, which only the rotary and the attention
        read;
      * folds an rms_norm (`prologue = "rms_norm"`) and has no epilogue;
      * has [n, k] weights the batch-1 row GEMV runs (a 16-bit type, k a
        multiple of 8, the input row within its staging).
    In batch-1 decode steps one kernel (infer_qkv_decode) then runs the norm,
    the qkv GEMV, the rotary, the KV write and the attention: its attention
    blocks poll the GEMV's outputs instead of waiting for a kernel boundary.
    At 128-wide heads the fused layer measured no faster (session 31), so
    wider heads keep two kernels. Every other paged attention loses the
    attribute. The cpu backend ignores it.

    Before:
    ```mlir
    exec.gemm %n, %w -> %qkv {k = 64 : i64, n = 192 : i64, prologue = "rms_norm", transpose_weight = true}
    exec.rotary %qkv, %freq positions(%pos) -> %qkv {...}
    exec.kv_attention %qkv meta(...) -> %o {head_dim = 16 : i64, ..., rotary = "decode"}
    ```
    After:
    ```mlir
    exec.kv_attention %qkv meta(...) -> %o {head_dim = 16 : i64, ..., qkv_decode = true, rotary = "decode"}
    ```
  }];
  let dependentDialects = ["::infer::exec::ExecDialect"];
}

def ElideIdentityGatherPass : Pass<"infer-elide-identity-gather", "::infer::exec::ProgramOp"> {
  let summary = "Marks the logit-row gathers a decode step may skip";
  let description = [{
    Runs on a planned step program. In a decode step (one new token a
    sequence, each a logit row) `exec.gather_rows` copies every row in
    order: its readers could read its input instead. An `exec.gather_rows`
    gets `elidable = true` when its input and output hold one element type
    and no launch after it names a buffer, other than the input itself, that
    shares bytes with the input at some T up to the arena's `bound_tokens`
    (so none writes over it; the memory planner keeps the input alive
    through the gather's last reader). Every other gather loses the attribute. The
    cuda backend then skips the gather in decode steps and points its
    readers at the input; the cpu backend ignores it.

    Before:
    ```mlir
    exec.gather_rows %h, %idx -> %rows {features = 64 : i64}
    ```
    After:
    ```mlir
    exec.gather_rows %h, %idx -> %rows {elidable = true, features = 64 : i64}
    ```
  }];
  let dependentDialects = ["::infer::exec::ExecDialect"];
}

def SelectKernelsPass : Pass<"infer-select-kernels", "::infer::exec::ProgramOp"> {
  let summary = "Chooses the decode GEMV and prefill attention kernels of each launch, with their parameters";
  let description = [{
    Runs on a planned program, after the fusion passes. The cuda backend has
    several kernels for a GEMM and for a paged attention, and a step's token
    counts pick among those a launch has (docs/codegen.md); this pass decides
    which ones each launch has, from the shapes they run:
      * `exec.gemm` (k, n > 0) gets `gemv_grid = array<i64: x, y, z>`: the
        split-k decode GEMV (infer_gemv, steps of up to 8 tokens) on that
        grid (GemvGeometry.h's gemvGrid);
      * `row_gemv_rows = 1` or `4` where the batch-1 row GEMV runs its
        [n, k] 16-bit weights (k a multiple of 8, the input row within its
        staging): one row (T = 1), or also its multi-row form (T = 2) where
        four rows fit;
      * `mma_gemv = array<i64: min, max, splits>` where the tensor-core
        decode GEMV runs it: in steps of `min` to `max` tokens (`min` the
        `mma-gemv-min-tokens` option, `max` the most rows its staging holds;
        none when `min` is 0 or past `max`), each tile's k over `splits`
        warps. A step of T ≤ 8 tokens runs the first kernel the launch has
        of: the row GEMV (T = 1; T = 2 in its 4-row form), the tensor-core
        GEMV (min ≤ T ≤ max), infer_gemv;
      * `exec.quantized_gemm` with int4 weights, 16-bit activations, and k
        and the group multiples of 128 (else of 64) gets `mma_block_k` =
        128 (64): its decode steps of up to 8 tokens run on tensor cores
        (infer_quantized_gemv_mma, QuantizedGemvGeometry.h; none with
        `quantized-mma=false`: every such step on infer_quantized_gemm);
        fp8 (W8A8) with 16-bit activations and k a multiple of 64 gets
        `mma_block_k` = 64: infer_quantized_gemv_fp8_mma, E4M3 weights and
        inputs on the FP8 tensor cores (QuantizedGemvFp8Mma.cuh; none with
        `fp8-mma=false`);
      * `exec.quantized_gemm` with fp8 (W8A8) weights, 16-bit activations,
        k a multiple of 16 and n of 8 gets `fp8_gemm`: its steps of more
        than 8 tokens quantize their inputs to E4M3 per token and run
        cuBLASLt's FP8 GEMM over the stored weight (QuantizedFp8Gemm.h;
        with `fp8-gemm=false`, or where it does not apply, the weight is
        dequantized for a 16-bit GEMM, as for the other schemes);
      * `exec.kv_attention` with a cache of its 16-bit type, no window and no
        ALiBi gets `prefill_kernel = "wgmma"` (head size 128) or `"mma"`
        (other multiples of 16 up to 256): the tensor-core kernel of steps
        with prefill chunks (none with `prefill-kernels=false`: every step on
        infer_kv_attention's one block per token); with an FP8 cache `"mma"`
        (infer_kv_prefill_attention_fp8, which decodes E4M3 rows as it loads
        them; none with `fp8-cache-prefill=false`: the general path's
        infer_kv_attention_fp8).
    Every other launch loses these attributes. Codegen records exactly these
    kernels and refuses parameters its kernels do not take; the cpu backend
    ignores them.

    Before:
    ```mlir
    exec.gemm %h, %w -> %y {k = 64 : i64, n = 128 : i64, transpose_weight = true}
    ```
    After (bf16):
    ```mlir
    exec.gemm %h, %w -> %y {gemv_grid = array<i64: 1, 1, 1>, k = 64 : i64, mma_gemv = array<i64: 3, 8, 8>, n = 128 : i64, row_gemv_rows = 4 : i64, transpose_weight = true}
    ```
  }];
  let options = [
    Option<"mmaGemvMinTokens", "mma-gemv-min-tokens", "int64_t",
           /*default=*/"::infer::kernels::kGemvMmaMinTokens",
           "The fewest tokens of a decode step on the tensor-core GEMV (0: never); "
           "GemvGeometry.h's kGemvMmaMinTokens">,
    Option<"prefillKernels", "prefill-kernels", "bool", /*default=*/"true",
           "Give paged attentions their tensor-core prefill kernel where one applies">,
    Option<"fp8CachePrefill", "fp8-cache-prefill", "bool", /*default=*/"true",
           "Also over an FP8 KV cache (infer_kv_prefill_attention_fp8)">,
    Option<"quantizedMma", "quantized-mma", "bool", /*default=*/"true",
           "Give int4 quantized GEMMs the tensor-core decode GEMV where it applies">,
    Option<"fp8Mma", "fp8-mma", "bool", /*default=*/"true",
           "Give fp8 quantized GEMMs the tensor-core decode GEMV where it applies">,
    Option<"fp8Gemm", "fp8-gemm", "bool", /*default=*/"true",
           "Run fp8 quantized GEMMs' large steps on the FP8 GEMM where it applies">
  ];
  let dependentDialects = ["::infer::exec::ExecDialect"];
}

#endif // INFER_DIALECTS_EXEC_TRANSFORMS_PASSES_TD
