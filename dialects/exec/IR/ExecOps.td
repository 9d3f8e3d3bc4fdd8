//===- ExecOps.td - exec dialect ops -----------------------*- tablegen -*-===//
//
// Program structure, buffers and one launch op per kernel family. See the
// dialect description in ExecBase.td and docs/exec.md.
//
//===----------------------------------------------------------------------===//

#ifndef INFER_DIALECTS_EXEC_IR_EXECOPS_TD
#define INFER_DIALECTS_EXEC_IR_EXECOPS_TD

include "dialects/exec/IR/ExecBase.td"
include "dialects/exec/IR/ExecInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Exec_Buffer : Type<CPred<"::llvm::isa<::infer::exec::BufferType>($_self)">,
                       "exec buffer", "::infer::exec::BufferType">,
                  BuildableType<"$_builder.getType<::infer::exec::BufferType>()">;
def Exec_Arena : Type<CPred<"::llvm::isa<::infer::exec::ArenaType>($_self)">,
                      "exec arena", "::infer::exec::ArenaType">,
                 BuildableType<"$_builder.getType<::infer::exec::ArenaType>()">;

//===----------------------------------------------------------------------===//
// Program structure
//===----------------------------------------------------------------------===//

def Exec_ProgramOp : Exec_Op<"program", [Symbol, IsolatedFromAbove, SingleBlock]> {
  let summary = "One entry point: straight-line buffers and launches";
  let description = [{
    The block runs top to bottom. It holds exactly one `exec.arena` and
    ends with `exec.return`.

    ```mlir
    exec.program @forward {
      %arena = exec.arena
      %ids = exec.buffer %arena size #exec.affine<8 * T + 0> of i64
      exec.input "input_ids" into %ids
      exec.output "input_ids" from %ids
      exec.return
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name attr-dict-with-keyword $body";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The program's arena (the verifier guarantees there is one).
    class ArenaOp getArena();
  }];
}

def Exec_ReturnOp : Exec_Op<"return", [Terminator, HasParent<"ProgramOp">]> {
  let summary = "The end of a program";
  let description = [{
    ```mlir
    exec.return
    ```
  }];
  let assemblyFormat = "attr-dict";
}

def Exec_ArenaOp : Exec_Op<"arena", [HasParent<"ProgramOp">]> {
  let summary = "The activation arena: one device allocation per program";
  let description = [{
    `size` and `bound_tokens` are set by memory planning: the arena needs
    `size` bytes for any T <= bound_tokens. `peak_live_bytes` is the most
    bytes live at one time (a lower bound on any plan's size, for
    reporting how tight the packing is).

    ```mlir
    %arena = exec.arena size #exec.affine<0 * T + 4096> {bound_tokens = 8 : i64, peak_live_bytes = 4096 : i64}
    ```
  }];
  let arguments = (ins OptionalAttr<Exec_AffineAttr>:$size,
                       OptionalAttr<I64Attr>:$bound_tokens,
                       OptionalAttr<I64Attr>:$peak_live_bytes);
  let results = (outs Exec_Arena:$arena);
  let assemblyFormat = "(`size` $size^)? attr-dict";
}

def Exec_BufferOp : Exec_Op<"buffer", [Pure]> {
  let summary = "A byte range of the arena holding elements of one type";
  let description = [{
    `size` bytes at `offset` (both affine in T). The offset is absent until
    memory planning assigns it. `per_logit_row` (step programs): the size
    counts per logit row R (the rows whose logits the step computes, R <= T)
    instead of per token; planning sizes it at T, which bounds it.

    ```mlir
    %b = exec.buffer %arena size #exec.affine<256 * T + 0> of f32
    %c = exec.buffer %arena [#exec.affine<0 * T + 4096>] size #exec.affine<256 * T + 0> of f32
    ```
  }];
  let arguments = (ins Exec_Arena:$arena, OptionalAttr<Exec_AffineAttr>:$offset,
                       Exec_AffineAttr:$size, TypeAttr:$element_type,
                       UnitAttr:$per_logit_row);
  let results = (outs Exec_Buffer:$buffer);
  let assemblyFormat = [{
    $arena (`[` $offset^ `]`)? `size` $size `of` $element_type attr-dict
  }];
  let hasVerifier = 1;
}

def Exec_WeightOp : Exec_Op<"weight", [Pure]> {
  let summary = "A weight of the artifact, by the name it is stored under";
  let description = [{
    ```mlir
    %w = exec.weight "val_92+val_99+val_106" : tensor<64x128xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, TypeAttr:$tensor_type);
  let results = (outs Exec_Buffer:$buffer);
  let assemblyFormat = "$name attr-dict `:` $tensor_type";
}

def Exec_ConstantOp : Exec_Op<"constant", [Pure]> {
  let summary = "A small constant held inline (rotary frequencies, scalars)";
  let description = [{
    ```mlir
    %c = exec.constant dense<[1.0, 0.1]> : tensor<2xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Exec_Buffer:$buffer);
  let assemblyFormat = "$value attr-dict";
}

def Exec_InputOp : Exec_Op<"input", [HasParent<"ProgramOp">]> {
  let summary = "The runtime writes an entry input into this buffer";
  let description = [{
    ```mlir
    exec.input "input_ids" into %ids
    ```
  }];
  let arguments = (ins StrAttr:$name, Exec_Buffer:$buffer);
  let assemblyFormat = "$name `into` $buffer attr-dict";
}

def Exec_OutputOp : Exec_Op<"output", [HasParent<"ProgramOp">]> {
  let summary = "The runtime reads an entry output from this buffer";
  let description = [{
    ```mlir
    exec.output "logits" from %logits
    ```
  }];
  let arguments = (ins StrAttr:$name, Exec_Buffer:$buffer);
  let assemblyFormat = "$name `from` $buffer attr-dict";
}

//===----------------------------------------------------------------------===//
// Launches
//===----------------------------------------------------------------------===//

// A kernel launch writes `$out`, which must be an arena buffer; its other
// operands' names are its operand roles (Exec_LaunchOpInterface).
class Exec_LaunchOp<string mnemonic, list<Trait> traits = []>
    : Exec_Op<mnemonic, traits # [HasParent<"ProgramOp">, Exec_LaunchOpInterface]> {
  let hasVerifier = 1;
  let extraClassDeclaration = Exec_OperandGroupNames<arguments>.declaration;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() {
      return ::infer::exec::verifyLaunchOutput(getOperation(), getOut());
    }
  }];
}

def Exec_EmbeddingOp : Exec_LaunchOp<"embedding", [AttrSizedOperandSegments]> {
  let summary = "Gathers embedding rows by token id, plus learned positions";
  let description = [{
    `out[t] = table[ids[t]] (+ position_table[position_offset + pos(t)])`,
    rows of `hidden` elements. `pos(t)` is `position_ids[t]` (an i64 buffer
    of one position per token, the `step` entry's `positions`) when given,
    else the token's index in its sequence.

    ```mlir
    exec.embedding %table, %ids -> %out {hidden = 64 : i64}
    exec.embedding %table, %ids positions(%pos_table) position_ids(%pos) -> %out {hidden = 64 : i64}
    ```
  }];
  let arguments = (ins Exec_Buffer:$table, Exec_Buffer:$ids,
                       Optional<Exec_Buffer>:$position_table,
                       Optional<Exec_Buffer>:$position_ids, Exec_Buffer:$out,
                       I64Attr:$hidden, DefaultValuedAttr<I64Attr, "0">:$position_offset);
  let assemblyFormat = [{
    $table `,` $ids (`positions` `(` $position_table^ `)`)?
    (`position_ids` `(` $position_ids^ `)`)? `->` $out attr-dict
  }];
}

def Exec_RmsNormOp : Exec_LaunchOp<"rms_norm"> {
  let summary = "RMS normalization over the last `features` elements";
  let description = [{
    ```mlir
    exec.rms_norm %x, %w -> %y {features = 64 : i64, epsilon = 1.0e-06 : f32}
    ```
  }];
  let arguments = (ins Exec_Buffer:$input, Exec_Buffer:$weight, Exec_Buffer:$out,
                       I64Attr:$features, F32Attr:$epsilon,
                       DefaultValuedAttr<F32Attr, "0.0">:$weight_offset);
  let assemblyFormat = "$input `,` $weight `->` $out attr-dict";
}

def Exec_LayerNormOp : Exec_LaunchOp<"layer_norm"> {
  let summary = "Layer normalization over the last `features` elements";
  let description = [{
    ```mlir
    exec.layer_norm %x, %scale bias(%b) -> %y {features = 64 : i64, epsilon = 1.0e-05 : f32}
    ```
  }];
  let arguments = (ins Exec_Buffer:$input, Exec_Buffer:$scale, Optional<Exec_Buffer>:$bias,
                       Exec_Buffer:$out, I64Attr:$features, F32Attr:$epsilon);
  let assemblyFormat = "$input `,` $scale (`bias` `(` $bias^ `)`)? `->` $out attr-dict";
}

def Exec_GemmOp : Exec_LaunchOp<"gemm", [AttrSizedOperandSegments]> {
  let summary = "out[T, n] = input[T, k] x weight (+ bias) (+ residual)";
  let description = [{
    The weight is [k, n], or [n, k] with `transpose_weight`. Bias and
    residual are epilogues (cuBLASLt bias / beta = 1 with C = residual).
    `prologue` ("rms_norm" or "gated_activation", set by
    `--infer-fold-gemm-prologue`): the launch just before computes the
    input, and a decode GEMV may compute it from that launch's inputs itself
    instead of reading it. `epilogue` (set by `--infer-fold-gemm-epilogue`):
    "gated_activation", the launch just after is a gated activation of this
    GEMM's packed output, and a batch-1 GEMV writes that activation's output
    itself; "argmax", the GEMM writes the step program's logits and a
    batch-1 GEMV also folds each row's argmax, which a greedy sampler reads.
    `gemv_grid`, `row_gemv_rows`, `mma_gemv` (set by `--infer-select-kernels`):
    the decode GEMV kernels the launch has, with their parameters.

    ```mlir
    exec.gemm %x, %w bias(%b) residual(%r) -> %y {k = 64 : i64, n = 64 : i64}
    ```
  }];
  let arguments = (ins Exec_Buffer:$input, Exec_Buffer:$weight, Optional<Exec_Buffer>:$bias,
                       Optional<Exec_Buffer>:$residual, Exec_Buffer:$out,
                       I64Attr:$k, I64Attr:$n,
                       DefaultValuedAttr<BoolAttr, "false">:$transpose_weight,
                       OptionalAttr<StrAttr>:$prologue, OptionalAttr<StrAttr>:$epilogue,
                       OptionalAttr<DenseI64ArrayAttr>:$gemv_grid,
                       OptionalAttr<I64Attr>:$row_gemv_rows,
                       OptionalAttr<DenseI64ArrayAttr>:$mma_gemv);
  let assemblyFormat = [{
    $input `,` $weight (`bias` `(` $bias^ `)`)? (`residual` `(` $residual^ `)`)? `->` $out
    attr-dict
  }];
}

def Exec_QuantizedGemmOp : Exec_LaunchOp<"quantized_gemm", [AttrSizedOperandSegments]> {
  let summary = "out[T, n] = input[T, k] x dequantize(q, scales)ᵀ (+ bias) (+ residual)";
  let description = [{
    The weight [n, k] is stored quantized (`graph.quantize_weight`,
    docs/quantization.md): `scheme` "int4" (q two 4-bit values a byte,
    scales [n, k / group_size]; the input as it is) or "fp8" (q E4M3FN
    bytes, scales [n]; each input row rounded to E4M3 with its own scale).
    With `input_scale` f [k] (AWQ) input feature j is divided by f[j] first.
    "int8" and "fp8-weight" are weight-only (imported weights); `zeros`, shaped
    as the scales, make the weight (q - zero) * scale. `mma_block_k` (set by
    `--infer-select-kernels`): decode steps of up to 8 tokens run a
    tensor-core GEMV, k in steps of this many (int4: 128 or 64; fp8 with
    `fp8-mma`: 64, E4M3 weights and inputs). `fp8_gemm` (set by the
    same pass, fp8 only): steps of more than 8 tokens run cuBLASLt's FP8 GEMM
    over the stored E4M3 weight, the inputs quantized per token first, where
    without it they multiply a weight dequantized to the activations' type.

    ```mlir
    exec.quantized_gemm %x, %q, %s residual(%r) -> %y {k = 64 : i64, n = 64 : i64, scheme = "int4", group_size = 32 : i64}
    ```
  }];
  let arguments = (ins Exec_Buffer:$input, Exec_Buffer:$q, Exec_Buffer:$scales,
                       Optional<Exec_Buffer>:$bias, Optional<Exec_Buffer>:$residual,
                       Optional<Exec_Buffer>:$input_scale, Optional<Exec_Buffer>:$zeros,
                       Exec_Buffer:$out, I64Attr:$k, I64Attr:$n, StrAttr:$scheme,
                       I64Attr:$group_size, OptionalAttr<I64Attr>:$mma_block_k,
                       UnitAttr:$fp8_gemm);
  let assemblyFormat = [{
    $input `,` $q `,` $scales (`bias` `(` $bias^ `)`)? (`residual` `(` $residual^ `)`)?
    (`input_scale` `(` $input_scale^ `)`)? (`zeros` `(` $zeros^ `)`)? `->` $out attr-dict
  }];
}

def Exec_RotaryOp : Exec_LaunchOp<"rotary", [AttrSizedOperandSegments]> {
  let summary = "Rotary position embedding of the first `rotated_heads` heads";
  let description = [{
    Same meaning as `graph.rotary`: angles from `inv_freq` (or the cos/sin
    caches) at each token's position in its sequence (or `positions`).

    ```mlir
    exec.rotary %qkv, %inv_freq -> %out {num_heads = 8 : i64, rotated_heads = 6 : i64,
                                         head_dim = 16 : i64, rotary_dim = 16 : i64}
    ```
  }];
  let arguments = (ins Exec_Buffer:$input, Optional<Exec_Buffer>:$inv_freq,
                       Optional<Exec_Buffer>:$cos_cache, Optional<Exec_Buffer>:$sin_cache,
                       Optional<Exec_Buffer>:$positions, Exec_Buffer:$out,
                       I64Attr:$num_heads, I64Attr:$rotated_heads, I64Attr:$head_dim,
                       I64Attr:$rotary_dim, DefaultValuedAttr<BoolAttr, "false">:$interleaved);
  let assemblyFormat = [{
    $input (`,` $inv_freq^)? (`caches` `(` $cos_cache^ `,` $sin_cache `)`)?
    (`positions` `(` $positions^ `)`)? `->` $out attr-dict
  }];
}

def Exec_AttentionOp : Exec_LaunchOp<"attention"> {
  let summary = "Causal / full attention over whole sequences with grouped KV heads";
  let description = [{
    Inputs as `graph.attention`: one packed QKV buffer or q, k, v; `window`
    and `alibi` as `graph.attention`'s.

    ```mlir
    exec.attention %qkv -> %o {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64,
                               scale = 2.500000e-01 : f32, causal = true}
    ```
  }];
  let arguments = (ins Variadic<Exec_Buffer>:$inputs, Exec_Buffer:$out,
                       I64Attr:$num_heads, I64Attr:$num_kv_heads, I64Attr:$head_dim,
                       F32Attr:$scale, BoolAttr:$causal,
                       DefaultValuedAttr<F32Attr, "0.0">:$softcap,
                       DefaultValuedAttr<I64Attr, "0">:$window,
                       DefaultValuedAttr<F32Attr, "0.0">:$alibi,
                       DefaultValuedAttr<F32Attr, "0.0">:$k_cache_scale,
                       DefaultValuedAttr<F32Attr, "0.0">:$v_cache_scale);
  let assemblyFormat = "$inputs `->` $out attr-dict";
}

def Exec_KvAttentionOp : Exec_LaunchOp<"kv_attention"> {
  let summary = "Paged causal attention of a packed batch over the KV cache of layer `layer`";
  let description = [{
    The `step` entry's attention (docs/kv-cache.md, "The step program").
    `inputs` are as `exec.attention`'s (one packed QKV buffer or q, k, v),
    one row per new token of a packed batch. The cache of layer `layer` is
    runtime-owned state, not an operand: `[num_blocks, 2, block_size,
    num_kv_heads, head_dim]` in the cache's element type. The launch first
    writes each new token's K and V at its slot
    (`slot_ids[t] = block * block_size + offset`), then computes, for token
    `j` of sequence `i` (rows `seq_starts[i] .. seq_starts[i+1]`, `n_i` of
    them), causal attention over positions `0 .. context_lens[i] - n_i + j`
    of that sequence (with `window` W > 0 only the last W of them), read through `block_tables[i]` (`B` entries per
    sequence). Metadata buffers are i64. `rotary` (set by
    `--infer-fold-kv-rotary`) says which kernels of this launch do the
    rotary just before it: "decode" (decode steps: one kernel rotates,
    writes the cache and attends), "kv_write" (every step's KV write
    rotates), "decode_or_kv_write" (decode steps as "decode", the others as
    "kv_write"). `qkv_decode` (set by `--infer-fold-qkv-decode`): batch-1
    decode steps also run the qkv GEMM before that rotary in the same
    kernel. `prefill_kernel` ("wgmma" or "mma", set by
    `--infer-select-kernels`): the tensor-core kernel of prefill steps.

    ```mlir
    exec.kv_attention %qkv meta(%seq_starts, %context_lens, %block_tables, %slot_ids) -> %o
        {layer = 0 : i64, block_size = 16 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64,
         head_dim = 16 : i64, scale = 2.500000e-01 : f32}
    ```
  }];
  let arguments = (ins Variadic<Exec_Buffer>:$inputs, Exec_Buffer:$seq_starts,
                       Exec_Buffer:$context_lens, Exec_Buffer:$block_tables,
                       Exec_Buffer:$slot_ids, Exec_Buffer:$out,
                       I64Attr:$layer, I64Attr:$block_size,
                       I64Attr:$num_heads, I64Attr:$num_kv_heads, I64Attr:$head_dim,
                       F32Attr:$scale, DefaultValuedAttr<F32Attr, "0.0">:$softcap,
                       DefaultValuedAttr<I64Attr, "0">:$window,
                       DefaultValuedAttr<F32Attr, "0.0">:$alibi,
                       DefaultValuedAttr<F32Attr, "0.0">:$k_cache_scale,
                       DefaultValuedAttr<F32Attr, "0.0">:$v_cache_scale,
                       OptionalAttr<StrAttr>:$rotary, OptionalAttr<BoolAttr>:$qkv_decode,
                       OptionalAttr<StrAttr>:$prefill_kernel);
  let assemblyFormat = [{
    $inputs `meta` `(` $seq_starts `,` $context_lens `,` $block_tables `,` $slot_ids `)`
    `->` $out attr-dict
  }];
}

def Exec_GatedActivationOp : Exec_LaunchOp<"gated_activation"> {
  let summary = "out = activation(gate) * up over `features` output elements";
  let description = [{
    Inputs as `graph.gated_activation`: one packed [gate, up] buffer or two.

    ```mlir
    exec.gated_activation %gu -> %h {activation = "silu", features = 160 : i64}
    ```
  }];
  let arguments = (ins Variadic<Exec_Buffer>:$inputs, Exec_Buffer:$out,
                       StrAttr:$activation, I64Attr:$features);
  let assemblyFormat = "$inputs `->` $out attr-dict";
}

def Exec_MoeOp : Exec_LaunchOp<"moe"> {
  let summary = "A mixture-of-experts MLP per token (graph.moe)";
  let description = [{
    Each token's `hidden` features: router logits by `router` [experts,
    hidden], softmax, the `top_k` largest (divided by their sum when
    `normalize`), and the weighted sum of those experts' silu-gated MLPs,
    `gate_up` [experts, 2 * inter, hidden] and `down` [experts, hidden,
    inter]. `scoring`, `score_bias`, `groups`, `topk_groups` and `scale` route
    as graph.moe's (DeepSeek-V3).

    `workspace` is scratch of `runtime/base/MoeWorkspace.h`'s size (each
    token's routing, gated activations and per-expert outputs, and the
    experts' token lists): the cuda kernels route every token first, then
    run each expert over the tokens routed to it, so an expert's weights are
    read once a step. The cpu backend does not use it.

    ```mlir
    exec.moe %x, %router, %gate_up, %down workspace(%scratch) -> %y {experts = 4 : i64, hidden = 64 : i64, inter = 160 : i64, normalize = true, top_k = 2 : i64}
    ```
  }];
  let arguments = (ins Exec_Buffer:$input, Exec_Buffer:$router, Exec_Buffer:$gate_up,
                       Exec_Buffer:$down, Optional<Exec_Buffer>:$score_bias,
                       Exec_Buffer:$workspace, Exec_Buffer:$out,
                       I64Attr:$hidden, I64Attr:$experts, I64Attr:$inter, I64Attr:$top_k,
                       BoolAttr:$normalize, DefaultValuedAttr<StrAttr, "\"softmax\"">:$scoring,
                       DefaultValuedAttr<I64Attr, "1">:$groups,
                       DefaultValuedAttr<I64Attr, "1">:$topk_groups,
                       DefaultValuedAttr<F32Attr, "1.0f">:$scale);
  let assemblyFormat = [{
    $input `,` $router `,` $gate_up `,` $down (`score_bias` `(` $score_bias^ `)`)? `workspace` `(` $workspace `)` `->` $out attr-dict
  }];
}

def Exec_CopyOp : Exec_LaunchOp<"copy"> {
  let summary = "Strided row copy: out[r] = input[r][offset : offset + length]";
  let description = [{
    Views `input` as rows of `in_features` elements and copies elements
    `[offset, offset + length)` of each row into consecutive rows of `out`
    (rows = out's elements / length). Lowers `graph.reshape` of a row-major
    tensor (in_features = length, offset = 0: a plain byte copy) and a static
    unit-step `graph.slice` of the last dimension.

    With `map` (i64, `length` entries; offset 0) element f of each out row
    is element map[f] of the input row, and the elements whose map is -1 are
    left as they are: `graph.gather_features` is one such copy per input
    into the same `out`.

    ```mlir
    exec.copy %x -> %y {in_features = 48 : i64, offset = 16 : i64, length = 16 : i64}
    exec.copy %rot map(%m) -> %k {in_features = 4 : i64, offset = 0 : i64, length = 24 : i64}
    ```
  }];
  let arguments = (ins Exec_Buffer:$input, Optional<Exec_Buffer>:$map, Exec_Buffer:$out,
                       I64Attr:$in_features, I64Attr:$offset, I64Attr:$length);
  let assemblyFormat = "$input (`map` `(` $map^ `)`)? `->` $out attr-dict";
}

def Exec_GatherRowsOp : Exec_LaunchOp<"gather_rows"> {
  let summary = "out[r] = input[indices[r]]: the rows whose logits a step computes";
  let description = [{
    Copies row `indices[r]` (of `features` elements) of `input` into row `r`
    of `out`; `indices` (i64) and `out` are `per_logit_row` buffers of the
    step program, so the LM head after it runs on R rows instead of T
    (docs/kv-cache.md, "The step program"). `elidable` (set by
    `--infer-elide-identity-gather`): no later launch writes over `input`,
    so in steps where the gather is the identity (one token a sequence, each
    a logit row) a backend may skip it and let its readers read `input`.

    ```mlir
    exec.gather_rows %h, %logit_indices -> %rows {features = 64 : i64}
    ```
  }];
  let arguments = (ins Exec_Buffer:$input, Exec_Buffer:$indices, Exec_Buffer:$out,
                       I64Attr:$features, OptionalAttr<BoolAttr>:$elidable);
  let assemblyFormat = "$input `,` $indices `->` $out attr-dict";
}

def Exec_ElementwiseOp : Exec_Op<"elementwise", [HasParent<"ProgramOp">,
                                                 IsolatedFromAbove, SingleBlock,
                                                 AttrSizedOperandSegments,
                                                 Exec_LaunchOpInterface]> {
  let summary = "A fused elementwise kernel generated from a graph region";
  let description = [{
    The region is the `graph.fusion_group` body (graph ops on tensors; its
    block arguments are the inputs) ending in `exec.yield`; the kernel
    computes each yielded value into the matching `outs` buffer.

    ```mlir
    exec.elementwise ins(%x) outs(%y) {
    ^bb0(%a: tensor<?x?x256xf32>):
      %g = graph.gelu %a {approximate = "tanh"} : (tensor<?x?x256xf32>) -> tensor<?x?x256xf32>
      exec.yield %g : tensor<?x?x256xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<Exec_Buffer>:$inputs, Variadic<Exec_Buffer>:$outs);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "`ins` `(` $inputs `)` `outs` `(` $outs `)` attr-dict-with-keyword $body";
  let extraClassDeclaration = Exec_OperandGroupNames<arguments>.declaration;
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

def Exec_YieldOp : Exec_Op<"yield", [Pure, Terminator, HasParent<"ElementwiseOp">]> {
  let summary = "The values an elementwise kernel writes, one per output buffer";
  let description = [{
    ```mlir
    exec.yield %g : tensor<?x?x256xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

#endif // INFER_DIALECTS_EXEC_IR_EXECOPS_TD
