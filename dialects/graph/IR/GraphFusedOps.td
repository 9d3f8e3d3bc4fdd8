//===- GraphFusedOps.td - LLM building blocks raised from ONNX -*- tablegen -*-===//
//
// The ops the optimization pipeline raises ONNX subgraphs to: what a kernel
// engineer draws for a decoder layer. Activations are token-major:
// [batch, seq, features], with the heads of a projection side by side in the
// feature dim ([heads * head_dim]).
//
//===----------------------------------------------------------------------===//

#ifndef INFER_DIALECTS_GRAPH_IR_GRAPHFUSEDOPS_TD
#define INFER_DIALECTS_GRAPH_IR_GRAPHFUSEDOPS_TD

include "dialects/graph/IR/GraphBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Graph_RmsNormOp : Graph_Op<"rms_norm", [Pure]> {
  let summary = "RMS normalisation over the last dim";
  let description = [{
    `y = x / sqrt(mean(x^2, last) + epsilon) * (weight + weight_offset)`,
    computed in fp32. `weight_offset` is 1 for Gemma's `(1 + w)` form.

    ```mlir
    %y = graph.rms_norm %x, %w {epsilon = 1.0e-06 : f32}
        : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, Graph_Tensor:$weight,
                   F32Attr:$epsilon, DefaultValuedAttr<F32Attr, "0.0">:$weight_offset);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input `,` $weight attr-dict `:` functional-type(operands, results)";
}

def Graph_LinearOp : Graph_Op<"linear", [Pure, AttrSizedOperandSegments]> {
  let summary = "x · W (+ bias) (+ residual): a GEMM with its epilogue";
  let description = [{
    `input` is [..., K]. `weight` is [K, N], or [N, K] when
    `transpose_weight` (the layout ONNX Gemm's transB and PyTorch's Linear
    use): a layout, not a Transpose op. `bias` is [N]; `residual` has the
    result's shape and is added last (a residual connection the GEMM
    epilogue takes).

    ```mlir
    %y = graph.linear %x, %w bias(%b) residual(%r) {transpose_weight = true}
        : (tensor<?x?x64xf32>, tensor<192x64xf32>, tensor<192xf32>, tensor<?x?x192xf32>)
        -> tensor<?x?x192xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, Graph_Tensor:$weight, Optional<Graph_Tensor>:$bias,
                   Optional<Graph_Tensor>:$residual,
                   DefaultValuedAttr<BoolAttr, "false">:$transpose_weight);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`bias` `(` $bias^ `)`)? (`residual` `(` $residual^ `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Graph_RotaryOp : Graph_Op<"rotary", [Pure, AttrSizedOperandSegments]> {
  let summary = "Rotary position embedding of the first `rotated_heads` heads";
  let description = [{
    `input` is [batch, seq, num_heads * head_dim]. In each of the first
    `rotated_heads` heads, the first `rotary_dim` dims are rotated by an angle
    per position and pair; the rest pass through. Pairs are
    `(i, i + rotary_dim/2)` (half-split, as in Llama) or `(2i, 2i+1)` when
    `interleaved` (GPT-J). A packed QKV projection rotates its Q and K heads
    (`rotated_heads = q_heads + kv_heads`) and leaves V.

    The angles come from one of two sources:
    - `inv_freq`, [rotary_dim / 2] (f32; it holds theta and any frequency
      scaling): `angle[i] = position * inv_freq[i]`, cos and sin computed;
    - `caches(cos, sin)`, tables of cos and sin themselves (ONNX
      RotaryEmbedding's caches), either [max_position, rotary_dim / 2] and
      read at row `position`, or [batch or 1, seq, rotary_dim / 2], one row
      per token (then `positions` must be absent).

    `positions`, [batch or 1, seq] (i64), defaults to 0, 1, ..., seq - 1 (a
    whole sequence from its start, as in a forward pass without a cache).

    ```mlir
    %y = graph.rotary %qkv, %inv_freq positions(%pos)
        {num_heads = 8 : i64, rotated_heads = 6 : i64, head_dim = 16 : i64, rotary_dim = 16 : i64}
        : (tensor<?x?x128xf32>, tensor<8xf32>, tensor<1x?xi64>) -> tensor<?x?x128xf32>
    %z = graph.rotary %x caches(%cos, %sin) positions(%pos)
        {num_heads = 4 : i64, rotated_heads = 4 : i64, head_dim = 16 : i64, rotary_dim = 16 : i64}
        : (tensor<?x?x64xf32>, tensor<2048x8xf32>, tensor<2048x8xf32>, tensor<?x?xi64>)
        -> tensor<?x?x64xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, Optional<Graph_Tensor>:$inv_freq,
                   Optional<Graph_Tensor>:$cos_cache, Optional<Graph_Tensor>:$sin_cache,
                   Optional<TensorOf<[I64]>>:$positions,
                   I64Attr:$num_heads, I64Attr:$rotated_heads, I64Attr:$head_dim,
                   I64Attr:$rotary_dim, DefaultValuedAttr<BoolAttr, "false">:$interleaved);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = [{
    $input (`,` $inv_freq^)? (`caches` `(` $cos_cache^ `,` $sin_cache `)`)?
    (`positions` `(` $positions^ `)`)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Graph_AttentionOp : Graph_Op<"attention", [Pure]> {
  let summary = "Scaled dot-product attention with grouped KV heads";
  let description = [{
    Either one packed operand [batch, seq, (num_heads + 2 * num_kv_heads) *
    head_dim] holding Q, K, V side by side, or three operands: q [batch, seq,
    num_heads * head_dim], k and v [batch, kv_seq, num_kv_heads * head_dim].
    Query head h reads KV head `h / (num_heads / num_kv_heads)` (GQA; MQA when
    num_kv_heads is 1). `scores = q·kᵀ · scale`, then `softcap * tanh(scores /
    softcap)` when softcap > 0, a causal mask when `causal` (query i sees keys
    j <= i + kv_seq - seq), and with `window` W > 0 (a sliding window, causal
    only) keys j > i + kv_seq - seq - W too: the query's own position and the
    W - 1 before it. With `alibi` c != 0, scores get ALiBi's bias c * slope_h * (j - i')
    (c: 1 for BLOOM and MPT, Falcon's 1 / sqrt(head_dim) scales it too)
    (i' = i + kv_seq - seq; slope_h = 2^(-8 (h + 1) / n) for the first n
    heads, n the largest power of two <= num_heads, then the odd powers of
    2^(-4 / n)). Softmax in fp32, · v. The result is
    [batch, seq, num_heads * head_dim].

    ```mlir
    %o = graph.attention %qkv {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64,
                               scale = 2.500000e-01 : f32, causal = true}
        : (tensor<?x?x128xf32>) -> tensor<?x?x64xf32>
    ```
  }];
  let arguments = (ins Variadic<Graph_Tensor>:$inputs, I64Attr:$num_heads, I64Attr:$num_kv_heads,
                   I64Attr:$head_dim, F32Attr:$scale, BoolAttr:$causal,
                   DefaultValuedAttr<F32Attr, "0.0">:$softcap,
                   DefaultValuedAttr<I64Attr, "0">:$window,
                   DefaultValuedAttr<F32Attr, "0.0">:$alibi,
                   DefaultValuedAttr<F32Attr, "0.0">:$k_cache_scale,
                   DefaultValuedAttr<F32Attr, "0.0">:$v_cache_scale);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_GatedActivationOp : Graph_Op<"gated_activation", [Pure]> {
  let summary = "act(gate) * up: the middle of a gated MLP";
  let description = [{
    With one operand [..., 2 * I], the gate is its first half and up the
    second (the output of a fused gate/up projection); with two, they are
    `gate` and `up` [..., I]. `activation` is "silu", "gelu" (erf) or
    "gelu_tanh".

    ```mlir
    %h = graph.gated_activation %gate_up {activation = "silu"}
        : (tensor<?x?x320xf32>) -> tensor<?x?x160xf32>
    ```
  }];
  let arguments = (ins Variadic<Graph_Tensor>:$inputs, StrAttr:$activation);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_GatherFeaturesOp : Graph_Op<"gather_features", [Pure]> {
  let summary = "Each token's features picked from its rows of the inputs: out[..., f] = in[..., map[f]]";
  let description = [{
    The inputs share their leading dims (the tokens: [batch, seq, F_i] or
    [batch * seq, F_i]) and element type; `in` is their concatenation along
    the last axis, and feature f of each output row is feature `map[f]` of
    the same row of `in`. It stands for any data movement that keeps tokens
    apart (MLA's per-head concat of a key with a shared rotary key, a
    de-interleave of pairs): RaiseFeatureGather makes it, the backends run
    it as one row copy per input.

    ```mlir
    %k = graph.gather_features %nope, %rope {map = array<i64: 0, 1, 4, 5, 2, 3, 4, 5>}
        : (tensor<?x?x4xf32>, tensor<?x?x2xf32>) -> tensor<?x?x8xf32>
    ```
  }];
  let arguments = (ins Variadic<Graph_Tensor>:$inputs, DenseI64ArrayAttr:$map);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_MoeOp : Graph_Op<"moe", [Pure]> {
  let summary = "A mixture-of-experts MLP: top-k routing and the chosen experts' gated MLPs";
  let description = [{
    For each token x [hidden] of `input` [..., hidden]: the router's logits
    `router` [experts, hidden] · x, their softmax, its `top_k` largest (ties:
    the lower expert), divided by their sum when `normalize`; the result is
    the sum over those experts e of weight_e * down[e] · (silu(gate_e · x) *
    (up_e · x)), with `gate_up` [experts, 2 * inter, hidden] (gate's rows,
    then up's) and `down` [experts, hidden, inter]. Mixtral's and Qwen-MoE's
    sparse MLP; a shared expert stays beside it as ordinary ops.

    DeepSeek-V3's routing: `scoring = "sigmoid"` scores each expert by the
    sigmoid of its logit; the experts are chosen by score + `score_bias`
    [experts] while the weights stay the scores; with `groups` G > 1 only
    the experts of the `topk_groups` best of G equal groups (a group's
    score: the sum of its two best) are eligible; the weights are multiplied
    by `scale` (after the normalization).

    ```mlir
    %y = graph.moe %x, %router, %gate_up, %down {activation = "silu", normalize = true, top_k = 2 : i64}
        : (tensor<?x64xf32>, tensor<4x64xf32>, tensor<4x320x64xf32>, tensor<4x64x160xf32>) -> tensor<?x64xf32>
    %z = graph.moe %x, %router, %gate_up, %down score_bias(%bias) {activation = "silu",
        groups = 2 : i64, normalize = true, scale = 2.5 : f32, scoring = "sigmoid", top_k = 2 : i64,
        topk_groups = 1 : i64}
        : (tensor<?x64xf32>, tensor<8x64xf32>, tensor<8x64x64xf32>, tensor<8x64x32xf32>, tensor<8xf32>) -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, Graph_Tensor:$router, Graph_Tensor:$gate_up,
                       Graph_Tensor:$down, Optional<Graph_Tensor>:$score_bias, I64Attr:$top_k,
                       BoolAttr:$normalize, StrAttr:$activation,
                       DefaultValuedAttr<StrAttr, "\"softmax\"">:$scoring,
                       DefaultValuedAttr<I64Attr, "1">:$groups,
                       DefaultValuedAttr<I64Attr, "1">:$topk_groups,
                       DefaultValuedAttr<F32Attr, "1.0f">:$scale);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input `,` $router `,` $gate_up `,` $down (`score_bias` `(` $score_bias^ `)`)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_EmbeddingOp : Graph_Op<"embedding", [Pure]> {
  let summary = "Rows of an embedding table by token id, plus learned positions";
  let description = [{
    `table` is [vocab, hidden]; the result is `ids`' shape + [hidden]. Ids
    outside [0, vocab) are an error (ONNX Gather's negative ids are not
    token ids). With `position_table` [positions, hidden], the row
    `position_offset + t` is added to token t of each sequence (GPT-2's
    learned positions, OPT's with an offset of 2).

    ```mlir
    %e = graph.embedding %table, %ids : (tensor<512x64xf32>, tensor<?x?xi64>) -> tensor<?x?x64xf32>
    %f = graph.embedding %table, %ids positions(%wpe) {position_offset = 2 : i64}
        : (tensor<512x64xf32>, tensor<?x?xi64>, tensor<258x64xf32>) -> tensor<?x?x64xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$table, Graph_IndexTensor:$ids,
                   Optional<Graph_Tensor>:$position_table,
                   DefaultValuedAttr<I64Attr, "0">:$position_offset);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = [{
    $table `,` $ids (`positions` `(` $position_table^ `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
}

def Graph_PackWeightsOp : Graph_Op<"pack_weights", [Pure]> {
  let summary = "Weights concatenated (and transposed) at compile time (a layout, not a kernel)";
  let description = [{
    The concatenation of weights along `axis`, made when the artifact is
    written from the mmap'd weights. Horizontal fusion packs Q, K, V (and
    gate, up) projection weights and biases this way.

    With `transpose` (rank 2 only), the result is the transpose of that
    concatenation, `result[j, i] = concat(weights, axis)[i, j]`: the [n, k]
    layout of a `graph.linear` with `transpose_weight`, which decode GEMVs
    stream row by row. The artifact writer assembles one such weight at a
    time in memory (in a buffer the size of the largest); untransposed
    weights are streamed, so a compile never holds a copy of the model.

    ```mlir
    %qkv = graph.pack_weights %wq, %wk, %wv {axis = 1 : i64}
        : (tensor<64x64xf32>, tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<64x128xf32>
    %qkv_t = graph.pack_weights %wq, %wk, %wv {axis = 1 : i64, transpose}
        : (tensor<64x64xf32>, tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<128x64xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$weights, I64Attr:$axis, UnitAttr:$transpose);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$weights attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_QuantizeWeightOp : Graph_Op<"quantize_weight", [Pure, AttrSizedOperandSegments]> {
  let summary = "A linear weight quantized at compile time (a layout, not a kernel)";
  let description = [{
    `weight` is [n, k] (a row per output channel), or [k, n] with
    `transpose`. The results are its quantized rows `q` (ui8) and their f32
    `scales`, made by the artifact writer from the mmap'd weight with
    runtime/base/Quantization.h (docs/quantization.md):

      scheme "int4": q [n, k / 2], two 4-bit values a byte (even k in the low
        nibble), scales [n, k / group_size]: w ≈ q * scale, symmetric, round
        to nearest even;
      scheme "fp8": q [n, k] E4M3FN bytes, scales [n] (group_size 0).

    With `input_scale` f [k] (a constant: AWQ's activation-aware scales),
    the weight quantized is w[:, j] * f[j]; the `graph.quantized_linear`
    reading q divides its input by the same f, so channels with large
    activations keep more of their weights' precision. With `clip` r [n,
    k / group_size] (int4, a constant: AWQ's clipping search) each group of
    the (scaled) row is clamped to ±r times its max |w| before it is
    quantized.

    ```mlir
    %q, %s = graph.quantize_weight %w {scheme = "int4", group_size = 32 : i64}
        : (tensor<192x64xf32>) -> (tensor<192x32xui8>, tensor<192x2xf32>)
    ```
  }];
  let arguments = (ins AnyRankedTensor:$weight, Optional<AnyRankedTensor>:$input_scale,
                   Optional<AnyRankedTensor>:$clip, StrAttr:$scheme, I64Attr:$group_size,
                   UnitAttr:$transpose);
  let results = (outs AnyRankedTensor:$q, AnyRankedTensor:$scales);
  let assemblyFormat = [{
    $weight (`input_scale` `(` $input_scale^ `)`)? (`clip` `(` $clip^ `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Graph_DequantizeOp : Graph_Op<"dequantize", [Pure]> {
  let summary = "A weight the model brings already quantized, as the float weight it stands for";
  let description = [{
    The ONNX importer makes one of each `DequantizeLinear` of an int4 /
    uint4 / int8 / uint8 / float8e4m3fn initializer and of each
    `com.microsoft.MatMulNBits` weight, with the integers repacked into the
    layout of `graph.quantize_weight`'s results: a row per output channel n,
    `q` [n, k / 2] (int4, the even k in the low nibble, two's complement) or
    [n, k] (int8, fp8-weight), `scales` [n, k / group_size] (int4, int8) or
    [n] (fp8-weight, group_size 0), and optional `zeros` shaped as the
    scales (unsigned integers and zero points are moved into the signed
    range: z = zero_point - 8 or - 128). The result is the float weight
    (q - z) * scale, [n, k], or [k, n] with `transpose` (the layout of a
    MatMul's B). infer-compile keeps q as it is: a `graph.linear` reading
    the result becomes a `graph.quantized_linear` of q, scales and zeros.

    ```mlir
    %w = graph.dequantize %q, %s zeros(%z) {scheme = "int4", group_size = 32 : i64, transpose}
        : (tensor<192x32xui8>, tensor<192x2xf32>, tensor<192x2xf32>) -> tensor<64x192xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$q, AnyRankedTensor:$scales,
                   Optional<AnyRankedTensor>:$zeros, StrAttr:$scheme, I64Attr:$group_size,
                   UnitAttr:$transpose);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $q `,` $scales (`zeros` `(` $zeros^ `)`)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Graph_QuantizedLinearOp : Graph_Op<"quantized_linear", [Pure, AttrSizedOperandSegments]> {
  let summary = "x · dequantize(q, scales)ᵀ (+ bias) (+ residual): a quantized GEMM";
  let description = [{
    `q` and `scales` come from a `graph.quantize_weight` of the same
    `scheme` and `group_size`; the weight they stand for is [n, k]. With
    "int4" the input stays as it is (weight-only); with "fp8" each token's
    input row is rounded to E4M3FN with its own scale first (dynamic
    per-token activation quantization, W8A8); with `input_scale` f [k] (the
    quantize_weight's), input feature j is divided by f[j] first. "int8"
    and "fp8-weight" (weights imported already quantized, `graph.dequantize`)
    are weight-only like int4; `zeros` (their zero points, shaped as the
    scales) make the weight (q - zero) * scale. Bias and residual are
    epilogues as in `graph.linear`.

    ```mlir
    %y = graph.quantized_linear %x, %q, %s {scheme = "int4", group_size = 32 : i64}
        : (tensor<?x?x64xf32>, tensor<192x32xui8>, tensor<192x2xf32>) -> tensor<?x?x192xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, AnyRankedTensor:$q, AnyRankedTensor:$scales,
                   Optional<Graph_Tensor>:$bias, Optional<Graph_Tensor>:$residual,
                   Optional<AnyRankedTensor>:$input_scale, Optional<AnyRankedTensor>:$zeros,
                   StrAttr:$scheme, I64Attr:$group_size);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $q `,` $scales (`bias` `(` $bias^ `)`)? (`residual` `(` $residual^ `)`)?
    (`input_scale` `(` $input_scale^ `)`)? (`zeros` `(` $zeros^ `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Graph_FusionGroupOp : Graph_Op<"fusion_group", [
    IsolatedFromAbove, SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "A cluster of elementwise ops codegen emits as one kernel";
  let description = [{
    The region computes the results from the operands (block arguments) with
    elementwise and broadcast ops and the reductions that feed them.

    ```mlir
    %r = graph.fusion_group %a, %b : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32> {
    ^bb0(%x: tensor<?x64xf32>, %y: tensor<?x64xf32>):
      %s = graph.add %x, %y : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
      graph.yield %s : tensor<?x64xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<Graph_Tensor>:$inputs);
  let results = (outs Variadic<Graph_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results) $body";
  let hasVerifier = 1;
}

def Graph_YieldOp : Graph_Op<"yield", [Pure, Terminator, HasParent<"FusionGroupOp">]> {
  let summary = "The results of a fusion group";
  let arguments = (ins Variadic<Graph_Tensor>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
  let builders = [OpBuilder<(ins), [{ /* nothing */ }]>];
}

#endif // INFER_DIALECTS_GRAPH_IR_GRAPHFUSEDOPS_TD
