//===- Passes.td - graph dialect optimization passes -------*- tablegen -*-===//
//
// The passes that turn an imported ONNX graph into the graph a kernel engineer
// draws (docs/passes.md). `infer-compile --emit=optimized` runs them as the
// pipeline built in compiler/pipeline; `--verify-numerics` checks each stage.
//
//===----------------------------------------------------------------------===//

#ifndef INFER_DIALECTS_GRAPH_TRANSFORMS_PASSES_TD
#define INFER_DIALECTS_GRAPH_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def FoldShapesPass : Pass<"infer-fold-shapes", "mlir::func::FuncOp"> {
  let summary = "Folds shape arithmetic into static shapes and symbolic-dim expressions";
  let description = [{
    Tracks the values of small int64 tensors (Shape, Gather, Slice, Concat,
    Squeeze/Unsqueeze, Reshape, elementwise arithmetic, Range, ...) as vectors
    of integers or expressions over the input's symbolic dims, and uses them
    to fold: constant shape computations become `graph.constant`; Reshape and
    Expand targets become constants that refer to the input's dims (0 / 1
    entries, and one -1 in a Reshape) where the dims are only known
    symbolically; rewritten Reshapes have `allowzero = false` (a 0 is only
    written where the output dim is proven equal to the input's, so copy
    semantics give the same size). Reshape, Expand, Squeeze and Slice ops that
    provably return their input disappear. Dims are equal when shape rules
    (broadcasting, matmul, reshape, transpose, gather, concat, slice, range,
    ...) derive them from the same function-argument dims; an op without a
    known rule gets fresh, unrelated dims. Fused-QKV layout chains
    (FoldLayouts.h) become slices of the last axis and reshapes: a split of
    an unsqueeze, gather_nd of one constant index, slices of heads and of
    unit-dim transposes, and chains of order-keeping ops (reshape, squeeze,
    unsqueeze, transposes of unit dims) fold to one reshape. torch.onnx's `slice_scatter`
    chains (scatter_nd of contiguous index ranges between transposes that move the axis
    first and back) that overwrite a whole axis become the updates' concat along it.
    Guarantees: numerics are unchanged
    (only values the analysis proves are replaced); with
    `assume-non-empty=false`, no -1 is written whose inference relies on a
    dynamic dim being non-zero.

    Before:
    ```mlir
    %s = graph.shape %x : (tensor<?x?x64xf32>) -> tensor<3xi64>
    %b = graph.slice %s, %c0, %c2, %c0, %c1 : (...) -> tensor<2xi64>
    %t = graph.concat %b, %c4, %c16 {axis = 0 : i64} : (...) -> tensor<4xi64>
    %y = graph.reshape %x, %t : (tensor<?x?x64xf32>, tensor<4xi64>) -> tensor<?x?x4x16xf32>
    ```
    After:
    ```mlir
    %t = graph.constant dense<[0, 0, 4, 16]> : tensor<4xi64>
    %y = graph.reshape %x, %t : (tensor<?x?x64xf32>, tensor<4xi64>) -> tensor<?x?x4x16xf32>
    ```
  }];
  let options = [
    Option<"assumeNonEmpty", "assume-non-empty", "bool", /*default=*/"true",
           "Assume dynamic dims are >= 1 (the exporters specialise 0 and 1 away)">
  ];
  let dependentDialects = ["::infer::graph::GraphDialect"];
}

def RaiseNormsPass : Pass<"infer-raise-norms", "mlir::func::FuncOp"> {
  let summary = "Raises decomposed RMSNorm and LayerNorm to graph.rms_norm / layer_normalization";
  let description = [{
    Matches `x * rsqrt(mean(x^2) + eps) * w` in the forms exporters write
    (Pow or Mul for the square, Sqrt+Reciprocal or Div, the weight on either
    side, Gemma's `(1 + w)`) and the mean/variance form of LayerNorm.

    Before:
    ```mlir
    %p = graph.pow %x, %two ...
    %m = graph.reduce_mean %p axes(%last) ...
    %a = graph.add %m, %eps ...
    %r = graph.reciprocal (graph.sqrt %a) ...
    %y = graph.mul %w, (graph.mul %x, %r) ...
    ```
    After:
    ```mlir
    %y = graph.rms_norm %x, %w {epsilon = 1.0e-06 : f32} ...
    ```
  }];
  let dependentDialects = ["::infer::graph::GraphDialect"];
}

def RaiseLinearPass : Pass<"infer-raise-linear", "mlir::func::FuncOp"> {
  let summary = "Raises MatMul/Gemm with a weight (and a bias add) to graph.linear";
  let description = [{
    `matmul(x, W)` and `gemm(x, W, b)` whose second operand is a weight
    become `graph.linear`; a transposed weight (Gemm transB, a Transpose of a
    weight) becomes the `transpose_weight` layout, not an op; a following
    `add` of a rank-1 weight of N entries becomes the bias. Token-wise work
    that an exporter applied to flattened tokens ([b*s, H] around Conv1D
    projections or OPT's MLP block: linear, layer/RMS norm, elementwise ops)
    is lifted back to [b, s, H], removing the reshapes; that rewrite depends
    on runtime reshape targets, so it is proven on the reference interpreter
    first (see infer-raise-attention).

    Before:
    ```mlir
    %y = graph.matmul %x, %w : (tensor<?x?x64xf32>, tensor<64x192xf32>) -> tensor<?x?x192xf32>
    %z = graph.add %y, %b : (tensor<?x?x192xf32>, tensor<192xf32>) -> tensor<?x?x192xf32>
    ```
    After:
    ```mlir
    %z = graph.linear %x, %w bias(%b) : (...) -> tensor<?x?x192xf32>
    ```
  }];
  let dependentDialects = ["::infer::graph::GraphDialect"];
}

def RaiseAttentionPass : Pass<"infer-raise-attention", "mlir::func::FuncOp"> {
  let summary = "Raises rotary embeddings and softmax(QKᵀ)V attention to fused ops";
  let description = [{
    Matches loosely, then proves each rewrite on the reference interpreter
    before making it: the original subgraph and the fused replacement run on
    the same random inputs at several batch and sequence sizes
    (Validation.h) and must agree within 1e-5. A rewrite that cannot be
    proven is not made; the graph stays unfused but correct.

    Rotary: `x*cos + rotate_half(x)*sin` where x is a head view of a
    token-major tensor X [b, s, h*d] ([b, h, s, d], or [b, s, h, d] before
    the transpose as GPT-J has it), with cos/sin computed from positions
    0..s-1 and an inv_freq constant found in their slice, becomes
    `graph.rotary(X)` (half-split or interleaved, whichever proves equal);
    cos and sin scaled by a constant m (YaRN) give m * rotary(X). A sin/cos
    table read at the positions (GPT-J's embed_positions, by gather or
    gather_elements) gives inv_freq candidates from its row 1 (asin / acos).

    Attention: `softmax(q·kᵀ·scale [+ mask]) · v`, or the scores under a
    masked_fill `where(hidden, -big, ...)`, with q, k, v head views of
    token-major tensors (GQA repeat-kv, K transposes, scales on q, k or the
    scores, softcap, NaN guards), merged back to [b, s, h*d], becomes
    `graph.attention(Q, K, V)`. The mask must depend on the input's shape
    only. Its values, read at a length past the largest constant in its slice
    (AttentionMask.h), give the attributes: causal; `window`, the keys a
    sliding window keeps; `alibi`, the factor of ALiBi's per-head bias. Any
    other mask is not raised. Values narrower than the keys (DeepSeek-V3's
    MLA: 128 of 192 a head) are widened to the keys' head dim by a
    `graph.gather_features` repeating each head's own features (output lane
    d reads only value lane d), and the output narrowed back by another.

    After:
    ```mlir
    %q = graph.rotary %qp, %inv_freq {num_heads = 4, rotated_heads = 4, head_dim = 16, rotary_dim = 16}
    %o = graph.attention %q, %k, %v {num_heads = 4, num_kv_heads = 2, head_dim = 16, scale = 0.25, causal = true}
    ```
  }];
  let dependentDialects = ["::infer::graph::GraphDialect"];
}

def RaiseMlpPass : Pass<"infer-raise-mlp", "mlir::func::FuncOp"> {
  let summary = "Raises gated MLP activations, decomposed GELU and embeddings";
  let description = [{
    `silu(g) * u` (as `g * sigmoid(g) * u`), `gelu(g) * u` and
    `gelu_tanh(g) * u` become `graph.gated_activation %g, %u`; GELU written
    out with tanh or erf (either exporter's association) becomes `graph.gelu`;
    a Gather of rows of a weight by the input ids becomes `graph.embedding`,
    and an added Gather of learned positions (rows offset..offset+s-1,
    proven by evaluation) joins it as the embedding's position table.

    Before:
    ```mlir
    %s = graph.sigmoid %g : (tensor<?x?x160xf32>) -> tensor<?x?x160xf32>
    %a = graph.mul %g, %s : (tensor<?x?x160xf32>, tensor<?x?x160xf32>) -> tensor<?x?x160xf32>
    %h = graph.mul %a, %u : (tensor<?x?x160xf32>, tensor<?x?x160xf32>) -> tensor<?x?x160xf32>
    ```
    After:
    ```mlir
    %h = graph.gated_activation %g, %u {activation = "silu"} : (...) -> tensor<?x?x160xf32>
    ```
  }];
  let dependentDialects = ["::infer::graph::GraphDialect"];
}

def RaiseMoePass : Pass<"infer-raise-moe", "mlir::func::FuncOp"> {
  let summary = "Raises top-k routing and batched expert MLPs to graph.moe";
  let description = [{
    A mixture-of-experts MLP as the exporters write it (Mixtral, Qwen-MoE):
    a router `graph.linear` → `graph.softmax` → `graph.top_k`; the chosen
    ids gather each expert's gate/up [experts, 2 * inter, hidden] and down
    [experts, hidden, inter] weights (`graph.gather_nd`) for a batched matmul
    per token and choice; the routing weights, divided by their sum when the
    model normalizes them, scale the experts' outputs, summed over the k
    choices. The match starts at each `graph.top_k` and only collects the
    router, the two expert weights and the sum; the rewrite is proven on the
    reference interpreter (Validation.h) with the tokens as the free input,
    or not made. The router's weight goes in as [experts, hidden].

    DeepSeek-V3's routing is matched too: sigmoid scores of the router, a
    bias [experts] added to choose, a reshape to [tokens, groups, experts /
    groups] whose top-k picks the eligible groups, the chosen scores gathered
    as the weights (normalized, times a scaling factor): graph.moe's
    `scoring = "sigmoid"`, `score_bias`, `groups`, `topk_groups` and `scale`.

    Before (one layer of Mixtral, abridged):
    ```mlir
    %logits = graph.linear %x2, %wr {transpose_weight = true} : (tensor<?x64xf32>, tensor<4x64xf32>) -> tensor<?x4xf32>
    %p = graph.softmax %logits {axis = 1 : i64} : tensor<?x4xf32>
    %v, %i = graph.top_k %p {axis = 1 : i64, k = 2 : i64} : (tensor<?x4xf32>) -> (tensor<?x2xf32>, tensor<?x2xi64>)
    %wgu = graph.gather_nd %gate_up, %ids : (tensor<4x320x64xf32>, tensor<?x1xi64>) -> tensor<?x320x64xf32>
    ...
    %sum = graph.reduce_sum %weighted axes(%c1) {keepdims = false} : (tensor<?x2x64xf32>, tensor<1xi64>) -> tensor<?x64xf32>
    %y = graph.reshape %sum, %shape : (tensor<?x64xf32>, tensor<3xi64>) -> tensor<?x?x64xf32>
    ```
    After:
    ```mlir
    %y = graph.moe %x, %wr, %gate_up, %down {activation = "silu", normalize = true, top_k = 2 : i64}
        : (tensor<?x?x64xf32>, tensor<4x64xf32>, tensor<4x320x64xf32>, tensor<4x64x160xf32>) -> tensor<?x?x64xf32>
    ```
  }];
  let dependentDialects = ["::infer::graph::GraphDialect"];
}

def FuseHorizontalPass : Pass<"infer-fuse-horizontal", "mlir::func::FuncOp"> {
  let summary = "Merges linears that read the same input into one with concatenated weights";
  let description = [{
    Q, K and V projections (and gate and up) of one input become one
    `graph.linear` whose weight (and bias) is the concatenation, made at
    compile time from the mmap'd weights; the consumers read a packed operand
    (`graph.rotary`/`graph.attention` take packed QKV, `graph.gated_activation`
    a packed gate_up). An attention over the three parts of a split of one
    tensor reads that tensor.

    Before:
    ```mlir
    %q = graph.linear %x, %wq : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
    %k = graph.linear %x, %wk : (tensor<?x?x64xf32>, tensor<64x32xf32>) -> tensor<?x?x32xf32>
    %v = graph.linear %x, %wv : (tensor<?x?x64xf32>, tensor<64x32xf32>) -> tensor<?x?x32xf32>
    %o = graph.attention %q, %k, %v {num_heads = 4, num_kv_heads = 2, ...}
    ```
    After:
    ```mlir
    %w = graph.pack_weights %wq, %wk, %wv {axis = 1 : i64} : (...) -> tensor<64x128xf32>
    %qkv = graph.linear %x, %w : (tensor<?x?x64xf32>, tensor<64x128xf32>) -> tensor<?x?x128xf32>
    %o = graph.attention %qkv {num_heads = 4, num_kv_heads = 2, ...}
    ```
  }];
  let dependentDialects = ["::infer::graph::GraphDialect"];
}

def AttachEpiloguesPass : Pass<"infer-attach-epilogues", "mlir::func::FuncOp"> {
  let summary = "Attaches residual adds to the linear that produces one operand";
  let description = [{
    `add(linear(x, W), r)` with r of the result's shape becomes
    `graph.linear %x, %W residual(%r)`, a GEMM epilogue. The linear must
    have no other user (so r cannot depend on it).

    Before:
    ```mlir
    %y = graph.linear %a, %w : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
    %h = graph.add %r, %y : (tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
    ```
    After:
    ```mlir
    %h = graph.linear %a, %w residual(%r) : (...) -> tensor<?x?x64xf32>
    ```
  }];
  let dependentDialects = ["::infer::graph::GraphDialect"];
}

def TransposeWeightsPass : Pass<"infer-transpose-weights", "mlir::func::FuncOp"> {
  let summary = "Stores linear weights as [n, k] (transpose_weight) at compile time";
  let description = [{
    Each rank-2 weight (a `graph.weight`, or a `graph.pack_weights` without
    `transpose`) that only `graph.linear`s without `transpose_weight` read,
    and only as their weight, becomes a `graph.pack_weights` of the same
    sources with `transpose`; those linears get `transpose_weight = true`.
    The artifact then stores the weight [n, k], output-row-major, the layout
    batch-1 decode GEMVs stream row by row. A weight anything else reads (a
    tied embedding table that graph.embedding also gathers from, a pack) and
    linears already in the transposed layout are left as they are; biases
    and residuals are untouched. Guarantees: each linear computes the same
    products (the reference interpreter and the CPU backend sum them over k
    in the same order either way); a rewritten weight's old pack is erased.

    Before:
    ```mlir
    %wq = graph.weight <q_proj> : tensor<64x64xf32>
    %w = graph.pack_weights %wq, %wk, %wv {axis = 1 : i64} : (...) -> tensor<64x128xf32>
    %qkv = graph.linear %x, %w : (tensor<?x?x64xf32>, tensor<64x128xf32>) -> tensor<?x?x128xf32>
    %wo = graph.weight <o_proj> : tensor<64x64xf32>
    %o = graph.linear %a, %wo residual(%r) : (...) -> tensor<?x?x64xf32>
    ```
    After:
    ```mlir
    %w = graph.pack_weights %wq, %wk, %wv {axis = 1 : i64, transpose} : (...) -> tensor<128x64xf32>
    %qkv = graph.linear %x, %w {transpose_weight = true} : (...) -> tensor<?x?x128xf32>
    %wo_t = graph.pack_weights %wo {axis = 0 : i64, transpose} : (tensor<64x64xf32>) -> tensor<64x64xf32>
    %o = graph.linear %a, %wo_t residual(%r) {transpose_weight = true} : (...) -> tensor<?x?x64xf32>
    ```
  }];
  let dependentDialects = ["::infer::graph::GraphDialect"];
}

def QuantizeWeightsPass : Pass<"infer-quantize-weights", "mlir::func::FuncOp"> {
  let summary = "Quantizes linear weights (infer-compile --quantize int4|fp8)";
  let description = [{
    Each `graph.linear` whose weight is a compile-time weight (`graph.weight`
    or `graph.pack_weights`) becomes a `graph.quantized_linear` of a
    `graph.quantize_weight` of that weight, with the same bias and residual;
    the artifact writer quantizes the weight (docs/quantization.md). Left in
    full precision: the LM head (a linear whose result reaches the function's
    results without passing another linear) unless `lm-head` is set,
    embeddings, attention, norms and MoE experts. int4 needs `group-size` to divide every quantized linear's
    k: the pass fails naming the first linear where it does not.

    Before:
    ```mlir
    %w = graph.pack_weights %wq, %wk, %wv {axis = 1 : i64, transpose} : (...) -> tensor<128x64xf32>
    %qkv = graph.linear %x, %w {transpose_weight = true} : (...) -> tensor<?x?x128xf32>
    ```
    After (scheme=int4 group-size=32):
    ```mlir
    %q, %s = graph.quantize_weight %w {group_size = 32 : i64, scheme = "int4"}
        : (tensor<128x64xf32>) -> (tensor<128x32xui8>, tensor<128x2xf32>)
    %qkv = graph.quantized_linear %x, %q, %s {group_size = 32 : i64, scheme = "int4"}
        : (tensor<?x?x64xf32>, tensor<128x32xui8>, tensor<128x2xf32>) -> tensor<?x?x128xf32>
    ```
  }];
  let options = [
    Option<"scheme", "scheme", "std::string", /*default=*/"\"int4\"", "int4 or fp8">,
    Option<"groupSize", "group-size", "int64_t", /*default=*/"128",
           "int4: the k values that share a scale">,
    Option<"lmHead", "lm-head", "bool", /*default=*/"false",
           "quantize the LM head too (a quarter of an 8B model's bytes a decode step in int4)">,
  ];
  let dependentDialects = ["::infer::graph::GraphDialect"];
}

def RaisePrequantizedPass : Pass<"infer-raise-prequantized", "mlir::func::FuncOp"> {
  let summary = "Linears over weights the model brings quantized → graph.quantized_linear";
  let description = [{
    Each `graph.linear` whose weight is a `graph.dequantize` (an ONNX
    `DequantizeLinear` of an integer or float8 initializer, or a
    `MatMulNBits`) becomes a `graph.quantized_linear` of the dequantize's q,
    scales and zeros, with the same scheme, group, bias and residual: the
    weight stays as the model stores it, and the kernels read it quantized.
    Runs with or without `--quantize`, and computes exactly what the
    dequantized linear does (the weight (q - zero) * scale is the same
    numbers). A linear that reads the dequantized weight in the other layout
    (its rows along k) is refused with an error, and so is a
    `graph.dequantize` that something other than a linear reads.

    Before:
    ```mlir
    %w = graph.dequantize %q, %s zeros(%z) {group_size = 32 : i64, scheme = "int4", transpose}
        : (tensor<192x32xui8>, tensor<192x2xf32>, tensor<192x2xf32>) -> tensor<64x192xf32>
    %y = graph.linear %x, %w : (tensor<?x?x64xf32>, tensor<64x192xf32>) -> tensor<?x?x192xf32>
    ```
    After:
    ```mlir
    %y = graph.quantized_linear %x, %q, %s zeros(%z) {group_size = 32 : i64, scheme = "int4"}
        : (tensor<?x?x64xf32>, tensor<192x32xui8>, tensor<192x2xf32>, tensor<192x2xf32>)
        -> tensor<?x?x192xf32>
    ```
  }];
  let dependentDialects = ["::infer::graph::GraphDialect"];
}

def RaiseFeatureGatherPass : Pass<"infer-raise-feature-gather", "mlir::func::FuncOp"> {
  let summary = "Replaces token-wise data movement between token-major tensors by graph.gather_features";
  let description = [{
    Each token-major value ([?, ?, F] or [?, F], float) that a non-movement
    op reads and that comes from other token-major values through more than
    reshapes and last-axis row slices (transposes to heads and back, concats,
    expands, splits, strided slices) becomes one `graph.gather_features` of
    those values. The map is read by running the movement on the reference
    interpreter with each feature's index as data; the rewrite is proven
    (Validation.h), so movement that mixes tokens stays as it was (and the
    exec lowering then names it). The rows stay token-major, so the exec
    lowering copies them per token.

    Before (MLA's key: per-head nope part and one rotary key for all heads):
    ```mlir
    %kh = graph.reshape %kv, %c0 : (tensor<?x?x16xf32>, tensor<4xi64>) -> tensor<?x?x2x8xf32>
    %kt = graph.transpose %kh {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x?x2x8xf32>) -> tensor<?x2x?x8xf32>
    %pe = graph.reshape %rot, %c1 : (tensor<?x?x4xf32>, tensor<4xi64>) -> tensor<?x1x?x4xf32>
    %pex = graph.expand %pe, %c2 : (tensor<?x1x?x4xf32>, tensor<4xi64>) -> tensor<?x2x?x4xf32>
    %k4 = graph.concat %kt, %pex {axis = 3 : i64} : (tensor<?x2x?x8xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x12xf32>
    %k3 = graph.transpose %k4 {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x2x?x12xf32>) -> tensor<?x?x2x12xf32>
    %k = graph.reshape %k3, %c3 : (tensor<?x?x2x12xf32>, tensor<3xi64>) -> tensor<?x?x24xf32>
    ```
    After:
    ```mlir
    %k = graph.gather_features %kv, %rot {map = array<i64: 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19,
        8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19>} : (tensor<?x?x16xf32>, tensor<?x?x4xf32>) -> tensor<?x?x24xf32>
    ```
  }];
  let dependentDialects = ["::infer::graph::GraphDialect"];
}

def GroupElementwisePass : Pass<"infer-group-elementwise", "mlir::func::FuncOp"> {
  let summary = "Clusters elementwise ops (and the reductions that feed them) into fusion groups";
  let description = [{
    Each float elementwise op absorbs the elementwise ops and reductions
    whose only user it is, recursively; each such tree becomes one
    `graph.fusion_group`, which codegen turns into one kernel. Trees are
    convex by construction (no path leaves a group and comes back). Scalar
    constants are cloned into the group; other values are its operands.

    Before:
    ```mlir
    %s = graph.add %x, %y : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
    %r = graph.relu %s : (tensor<?x8xf32>) -> tensor<?x8xf32>
    ```
    After:
    ```mlir
    %r = graph.fusion_group %x, %y : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32> {
    ^bb0(%a: tensor<?x8xf32>, %b: tensor<?x8xf32>):
      %s = graph.add %a, %b : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
      %t = graph.relu %s : (tensor<?x8xf32>) -> tensor<?x8xf32>
      graph.yield %t : tensor<?x8xf32>
    }
    ```
  }];
  let dependentDialects = ["::infer::graph::GraphDialect"];
}

def TestBreakNumericsPass : Pass<"infer-test-break-numerics", "mlir::func::FuncOp"> {
  let summary = "Test only: a deliberately wrong rewrite (the first add becomes a sub)";
  let description = [{
    Exists so that tests can check that `--verify-numerics` catches a pass
    that changes the numbers and names the stage.
  }];
}

#endif // INFER_DIALECTS_GRAPH_TRANSFORMS_PASSES_TD
