//===- GraphOps.td - graph dialect operations --------------*- tablegen -*-===//
//
// One op per ONNX operator the importer supports. Semantics are ONNX's (see
// https://onnx.ai/onnx/operators/) in the canonical form described in the
// dialect summary; each description says only what differs from ONNX.
//
//===----------------------------------------------------------------------===//

#ifndef INFER_DIALECTS_GRAPH_IR_GRAPHOPS_TD
#define INFER_DIALECTS_GRAPH_IR_GRAPHOPS_TD

include "dialects/graph/IR/GraphBase.td"
include "dialects/graph/IR/GraphAttrs.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

def Graph_Tensor : AnyTypeOf<[AnyRankedTensor, AnyUnrankedTensor]>;
def Graph_BoolTensor : TensorOf<[I1]>;
def Graph_IndexTensor : TensorOf<[I64, I32]>;

//===----------------------------------------------------------------------===//
// Constants and weights
//===----------------------------------------------------------------------===//

def Graph_ConstantOp : Graph_Op<"constant", [Pure, ConstantLike,
    AllTypesMatch<["value", "result"]>]> {
  let summary = "A small constant tensor held inline";
  let description = [{
    Holds ONNX `Constant` nodes and small initializers (shape vectors,
    scalars) so that later passes can fold them. Weights use `graph.weight`.

    ```mlir
    %c = graph.constant dense<[0, -1]> : tensor<2xi64>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

def Graph_WeightOp : Graph_Op<"weight", [Pure, AllTypesMatch<["value", "result"]>]> {
  let summary = "A model weight backed by an mmap'd resource";
  let description = [{
    ```mlir
    %w = graph.weight <"lm_head.weight"> : tensor<512x64xf32>
    ```
  }];
  let arguments = (ins Graph_WeightAttr:$value);
  let results = (outs AnyRankedTensor:$result);
  // `graph.weight <key> : type`: the handle, then the type the attribute shares
  // with the result.
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def Graph_ConstantOfShapeOp : Graph_Op<"constant_of_shape", [Pure]> {
  let summary = "A tensor of the given shape filled with one value";
  let description = [{
    `value` is a one-element tensor whose element type is the result's.

    ```mlir
    %z = graph.constant_of_shape %shape {value = dense<0.0> : tensor<1xf32>}
        : (tensor<2xi64>) -> tensor<?x?xf32>
    ```
  }];
  let arguments = (ins TensorOf<[I64]>:$shape, ElementsAttr:$value);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$shape attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class Graph_UnaryOp<string mnemonic, string onnxName>
    : Graph_Op<mnemonic, [Pure, SameOperandsAndResultElementType]> {
  let summary = "Elementwise ONNX " # onnxName;
  let description = [{
    ```mlir
    %y = graph.}] # mnemonic # [{ %x : (tensor<?x64xf32>) -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Graph_NegOp : Graph_UnaryOp<"neg", "Neg">;
def Graph_AbsOp : Graph_UnaryOp<"abs", "Abs">;
def Graph_SqrtOp : Graph_UnaryOp<"sqrt", "Sqrt">;
def Graph_ReciprocalOp : Graph_UnaryOp<"reciprocal", "Reciprocal">;
def Graph_ExpOp : Graph_UnaryOp<"exp", "Exp">;
def Graph_LogOp : Graph_UnaryOp<"log", "Log">;
def Graph_SinOp : Graph_UnaryOp<"sin", "Sin">;
def Graph_CosOp : Graph_UnaryOp<"cos", "Cos">;
def Graph_TanhOp : Graph_UnaryOp<"tanh", "Tanh">;
def Graph_ErfOp : Graph_UnaryOp<"erf", "Erf">;
def Graph_SigmoidOp : Graph_UnaryOp<"sigmoid", "Sigmoid">;
def Graph_ReluOp : Graph_UnaryOp<"relu", "Relu">;
def Graph_IdentityOp : Graph_UnaryOp<"identity", "Identity (and Dropout in inference)">;
def Graph_NotOp : Graph_UnaryOp<"not", "Not"> {
  let arguments = (ins Graph_BoolTensor:$input);
  let results = (outs Graph_BoolTensor:$result);
}

def Graph_IsNaNOp : Graph_Op<"is_nan", [Pure]> {
  let summary = "Elementwise ONNX IsNaN";
  let description = [{
    ```mlir
    %m = graph.is_nan %x : (tensor<?xf32>) -> tensor<?xi1>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input);
  let results = (outs Graph_BoolTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Graph_GeluOp : Graph_Op<"gelu", [Pure, SameOperandsAndResultElementType]> {
  let summary = "ONNX Gelu (opset 20)";
  let description = [{
    `approximate` is "none" (erf form) or "tanh".

    ```mlir
    %y = graph.gelu %x {approximate = "tanh"} : (tensor<?x64xf32>) -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input,
                   DefaultValuedStrAttr<StrAttr, "none">:$approximate);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_CastOp : Graph_Op<"cast", [Pure]> {
  let summary = "ONNX Cast; the target is the result element type";
  let description = [{
    Also converts between tensor types of one element type (refining or
    forgetting static dims), which passes use to keep result types; a cast
    to the operand's own type folds away.

    ```mlir
    %y = graph.cast %x : (tensor<?xi64>) -> tensor<?xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Graph_ClipOp : Graph_Op<"clip", [Pure, AttrSizedOperandSegments]> {
  let summary = "ONNX Clip with optional scalar bounds";
  let description = [{
    ```mlir
    %y = graph.clip %x min(%lo) max(%hi)
        : (tensor<?xf32>, tensor<f32>, tensor<f32>) -> tensor<?xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, Optional<Graph_Tensor>:$min,
                   Optional<Graph_Tensor>:$max);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = [{
    $input (`min` `(` $min^ `)`)? (`max` `(` $max^ `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
}

class Graph_BinaryOp<string mnemonic, string onnxName, list<Trait> traits = []>
    : Graph_Op<mnemonic, !listconcat([Pure], traits)> {
  let summary = "Elementwise ONNX " # onnxName # " with multidirectional broadcasting";
  let description = [{
    ```mlir
    %z = graph.}] # mnemonic # [{ %x, %y
        : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$lhs, Graph_Tensor:$rhs);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_AddOp : Graph_BinaryOp<"add", "Add", [Commutative]>;
def Graph_SubOp : Graph_BinaryOp<"sub", "Sub">;
def Graph_MulOp : Graph_BinaryOp<"mul", "Mul", [Commutative]>;
def Graph_DivOp : Graph_BinaryOp<"div", "Div">;
def Graph_PowOp : Graph_BinaryOp<"pow", "Pow">;
def Graph_MaxOp : Graph_BinaryOp<"max", "Max (binary; the importer chains variadic Max)", [Commutative]>;
def Graph_MinOp : Graph_BinaryOp<"min", "Min (binary; the importer chains variadic Min)", [Commutative]>;
def Graph_AndOp : Graph_BinaryOp<"and", "And", [Commutative]>;
def Graph_OrOp : Graph_BinaryOp<"or", "Or", [Commutative]>;
def Graph_EqualOp : Graph_BinaryOp<"equal", "Equal", [Commutative]>;
def Graph_LessOp : Graph_BinaryOp<"less", "Less">;
def Graph_LessOrEqualOp : Graph_BinaryOp<"less_or_equal", "LessOrEqual">;
def Graph_GreaterOp : Graph_BinaryOp<"greater", "Greater">;
def Graph_GreaterOrEqualOp : Graph_BinaryOp<"greater_or_equal", "GreaterOrEqual">;

def Graph_WhereOp : Graph_Op<"where", [Pure]> {
  let summary = "ONNX Where with multidirectional broadcasting";
  let description = [{
    ```mlir
    %r = graph.where %c, %x, %y
        : (tensor<?x?xi1>, tensor<f32>, tensor<?x?xf32>) -> tensor<?x?xf32>
    ```
  }];
  let arguments = (ins Graph_BoolTensor:$condition, Graph_Tensor:$x, Graph_Tensor:$y);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$condition `,` $x `,` $y attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

def Graph_ShapeOp : Graph_Op<"shape", [Pure]> {
  let summary = "ONNX Shape: the dims [start, end) of the input as int64";
  let description = [{
    `start` and `end` follow ONNX (negative counts from the back, clamped);
    `end` absent means the rank.

    ```mlir
    %s = graph.shape %x {start = 0 : i64} : (tensor<?x?xf32>) -> tensor<2xi64>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, DefaultValuedAttr<I64Attr, "0">:$start,
                   OptionalAttr<I64Attr>:$end);
  let results = (outs TensorOf<[I64]>:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Graph_ReshapeOp : Graph_Op<"reshape", [Pure]> {
  let summary = "ONNX Reshape (0 copies the input dim unless allowzero, -1 infers)";
  let description = [{
    ```mlir
    %y = graph.reshape %x, %shape : (tensor<?x64xf32>, tensor<3xi64>) -> tensor<?x4x16xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$data, TensorOf<[I64]>:$shape,
                   DefaultValuedAttr<BoolAttr, "false">:$allowzero);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$data `,` $shape attr-dict `:` functional-type(operands, results)";
}

def Graph_ExpandOp : Graph_Op<"expand", [Pure]> {
  let summary = "ONNX Expand: broadcast the input against a shape";
  let description = [{
    ```mlir
    %y = graph.expand %x, %shape : (tensor<1x?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, TensorOf<[I64]>:$shape);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input `,` $shape attr-dict `:` functional-type(operands, results)";
}

def Graph_TileOp : Graph_Op<"tile", [Pure]> {
  let summary = "ONNX Tile";
  let description = [{
    ```mlir
    %y = graph.tile %x, %repeats : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<?x?xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, TensorOf<[I64]>:$repeats);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input `,` $repeats attr-dict `:` functional-type(operands, results)";
}

def Graph_FlattenOp : Graph_Op<"flatten", [Pure]> {
  let summary = "ONNX Flatten to 2-D at `axis` (non-negative)";
  let description = [{
    ```mlir
    %y = graph.flatten %x {axis = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, DefaultValuedAttr<I64Attr, "1">:$axis);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Graph_SqueezeOp : Graph_Op<"squeeze", [Pure]> {
  let summary = "ONNX Squeeze; without axes every dim of size 1 is removed";
  let description = [{
    ```mlir
    %y = graph.squeeze %x axes(%a) : (tensor<1x?xf32>, tensor<1xi64>) -> tensor<?xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, Optional<TensorOf<[I64]>>:$axes);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input (`axes` `(` $axes^ `)`)? attr-dict `:` functional-type(operands, results)";
}

def Graph_UnsqueezeOp : Graph_Op<"unsqueeze", [Pure]> {
  let summary = "ONNX Unsqueeze (axes index the output)";
  let description = [{
    ```mlir
    %y = graph.unsqueeze %x, %a : (tensor<?xf32>, tensor<1xi64>) -> tensor<1x?xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, TensorOf<[I64]>:$axes);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input `,` $axes attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_TransposeOp : Graph_Op<"transpose", [Pure]> {
  let summary = "ONNX Transpose with an explicit permutation";
  let description = [{
    The importer fills in the default (reversed) permutation.

    ```mlir
    %y = graph.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_ConcatOp : Graph_Op<"concat", [Pure]> {
  let summary = "ONNX Concat along a non-negative axis";
  let description = [{
    ```mlir
    %y = graph.concat %a, %b {axis = 0 : i64} : (tensor<1xi64>, tensor<2xi64>) -> tensor<3xi64>
    ```
  }];
  let arguments = (ins Variadic<Graph_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_SplitOp : Graph_Op<"split", [Pure]> {
  let summary = "ONNX Split along a non-negative axis";
  let description = [{
    Without `split` sizes, the dim is divided into as many parts as there are
    results, the last one smaller if it does not divide evenly (opset 18).

    ```mlir
    %a, %b = graph.split %x split(%sizes) {axis = 1 : i64}
        : (tensor<?x8xf32>, tensor<2xi64>) -> (tensor<?x4xf32>, tensor<?x4xf32>)
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, Optional<TensorOf<[I64]>>:$split, I64Attr:$axis);
  let results = (outs Variadic<Graph_Tensor>:$results);
  let assemblyFormat = "$input (`split` `(` $split^ `)`)? attr-dict `:` functional-type(operands, results)";
}

def Graph_SliceOp : Graph_Op<"slice", [Pure]> {
  let summary = "ONNX Slice (opset 13 form: starts, ends, axes, steps as operands)";
  let description = [{
    `axes` and `steps` are always present; the importer materialises the
    ONNX defaults (all axes in order, steps of 1).

    ```mlir
    %y = graph.slice %x, %starts, %ends, %axes, %steps
        : (tensor<?x?xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$data, Graph_IndexTensor:$starts, Graph_IndexTensor:$ends,
                   Graph_IndexTensor:$axes, Graph_IndexTensor:$steps);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$data `,` $starts `,` $ends `,` $axes `,` $steps attr-dict `:` functional-type(operands, results)";
}

def Graph_GatherOp : Graph_Op<"gather", [Pure]> {
  let summary = "ONNX Gather along a non-negative axis (negative indices wrap)";
  let description = [{
    ```mlir
    %e = graph.gather %table, %ids {axis = 0 : i64}
        : (tensor<512x64xf32>, tensor<?x?xi64>) -> tensor<?x?x64xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$data, Graph_IndexTensor:$indices, I64Attr:$axis);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$data `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_TopKOp : Graph_Op<"top_k", [Pure]> {
  let summary = "ONNX TopK: the k largest along an axis, sorted, ties to the lower index";
  let description = [{
    `values` and `indices` have the input's shape with `k` (a one-element
    i64 tensor) along `axis`; values are in descending order, and of equal
    values the lower index comes first. A mixture-of-experts router picks its
    experts with it.

    ```mlir
    %v, %i = graph.top_k %probs, %k {axis = 1 : i64}
        : (tensor<?x8xf32>, tensor<1xi64>) -> (tensor<?x2xf32>, tensor<?x2xi64>)
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, Graph_IndexTensor:$k, I64Attr:$axis);
  let results = (outs Graph_Tensor:$values, Graph_IndexTensor:$indices);
  let assemblyFormat = "$input `,` $k attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_GatherElementsOp : Graph_Op<"gather_elements", [Pure]> {
  let summary = "ONNX GatherElements along a non-negative axis (negative indices wrap)";
  let description = [{
    `result[i_0, ..., i_k, ...] = data[i_0, ..., indices[i_0, ..., i_k, ...], ...]` with the
    index at `axis`: the result has the shape of `indices` (GPT-J's sin/cos table read at the
    positions). Not lowered to exec: the rotary it feeds is raised.

    ```mlir
    %y = graph.gather_elements %table, %positions {axis = 1 : i64}
        : (tensor<1x256x8xf32>, tensor<1x?x8xi64>) -> tensor<1x?x8xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$data, Graph_IndexTensor:$indices, I64Attr:$axis);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$data `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_ScatterNDOp : Graph_Op<"scatter_nd", [Pure]> {
  let summary = "ONNX ScatterND: data with the slices `indices` name replaced by `updates`";
  let description = [{
    `result = data`, then for each index tuple `indices[i_0, ..., i_(q-2), :]` (k =
    indices' last dim, negative values wrap) the slice `result[tuple]` becomes `updates[i_0,
    ..., i_(q-2)]`, or is combined with it by `reduction` (`add`, `mul`, `min`, `max`), in
    the tuples' order. torch.onnx writes a `slice_scatter` this way (DeepSeek-V3's query
    and key halves). Not lowered to exec.

    ```mlir
    %y = graph.scatter_nd %x, %idx, %upd {reduction = "none"}
        : (tensor<4x8xf32>, tensor<2x1xi64>, tensor<2x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$data, Graph_IndexTensor:$indices, Graph_Tensor:$updates,
                   DefaultValuedAttr<StrAttr, "\"none\"">:$reduction);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$data `,` $indices `,` $updates attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_ScatterElementsOp : Graph_Op<"scatter_elements", [Pure]> {
  let summary = "ONNX ScatterElements along a non-negative axis (negative indices wrap)";
  let description = [{
    `result = data`, then `result[i_0, ..., indices[i_0, ..., i_k, ...], ...] =
    updates[i_0, ..., i_k, ...]` with the index at `axis` (or combined by `reduction`:
    `add`, `mul`, `min`, `max`), in the elements' order: the inverse of
    `graph.gather_elements` (DeepSeek-V3's group mask). Not lowered to exec.

    ```mlir
    %y = graph.scatter_elements %zeros, %groups, %ones {axis = 1 : i64, reduction = "none"}
        : (tensor<?x8xf32>, tensor<?x2xi64>, tensor<?x2xf32>) -> tensor<?x8xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$data, Graph_IndexTensor:$indices, Graph_Tensor:$updates,
                   I64Attr:$axis, DefaultValuedAttr<StrAttr, "\"none\"">:$reduction);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$data `,` $indices `,` $updates attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_GatherNDOp : Graph_Op<"gather_nd", [Pure]> {
  let summary = "ONNX GatherND";
  let description = [{
    ```mlir
    %y = graph.gather_nd %x, %idx {batch_dims = 0 : i64}
        : (tensor<?x?xf32>, tensor<?x1xi64>) -> tensor<?x?xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$data, Graph_IndexTensor:$indices,
                   DefaultValuedAttr<I64Attr, "0">:$batch_dims);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$data `,` $indices attr-dict `:` functional-type(operands, results)";
}

def Graph_RangeOp : Graph_Op<"range", [Pure]> {
  let summary = "ONNX Range over scalar start, limit, delta";
  let description = [{
    ```mlir
    %r = graph.range %start, %limit, %delta
        : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
    ```
  }];
  let arguments = (ins Graph_Tensor:$start, Graph_Tensor:$limit, Graph_Tensor:$delta);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$start `,` $limit `,` $delta attr-dict `:` functional-type(operands, results)";
}

def Graph_TriluOp : Graph_Op<"trilu", [Pure]> {
  let summary = "ONNX Trilu: keep the upper or lower triangle of the last two dims";
  let description = [{
    ```mlir
    %y = graph.trilu %x k(%k) {upper = true} : (tensor<?x?xf32>, tensor<i64>) -> tensor<?x?xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, Optional<TensorOf<[I64]>>:$k,
                   DefaultValuedAttr<BoolAttr, "true">:$upper);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input (`k` `(` $k^ `)`)? attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Reductions, normalisation, scans
//===----------------------------------------------------------------------===//

class Graph_ReduceOp<string mnemonic, string onnxName>
    : Graph_Op<mnemonic, [Pure, AllElementTypesMatch<["input", "result"]>]> {
  let summary = "ONNX " # onnxName # " (opset 18 form: axes as an operand)";
  let description = [{
    Without `axes`, all axes are reduced unless `noop_with_empty_axes`.

    ```mlir
    %m = graph.}] # mnemonic # [{ %x axes(%a) {keepdims = true}
        : (tensor<?x64xf32>, tensor<1xi64>) -> tensor<?x1xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, Optional<TensorOf<[I64]>>:$axes,
                   DefaultValuedAttr<BoolAttr, "true">:$keepdims,
                   DefaultValuedAttr<BoolAttr, "false">:$noop_with_empty_axes);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input (`axes` `(` $axes^ `)`)? attr-dict `:` functional-type(operands, results)";
}

def Graph_ReduceMeanOp : Graph_ReduceOp<"reduce_mean", "ReduceMean">;
def Graph_ReduceSumOp : Graph_ReduceOp<"reduce_sum", "ReduceSum">;
def Graph_ReduceMaxOp : Graph_ReduceOp<"reduce_max", "ReduceMax">;

def Graph_SoftmaxOp : Graph_Op<"softmax", [Pure, SameOperandsAndResultType]> {
  let summary = "ONNX Softmax (opset 13) along a non-negative axis";
  let description = [{
    ```mlir
    %p = graph.softmax %x {axis = 3 : i64} : tensor<?x4x?x?xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, I64Attr:$axis);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Graph_LayerNormOp : Graph_Op<"layer_normalization", [Pure]> {
  let summary = "ONNX LayerNormalization over the dims from `axis` (non-negative) on";
  let description = [{
    Only the normalised output is produced; the importer rejects uses of the
    optional Mean and InvStdDev outputs.

    ```mlir
    %y = graph.layer_normalization %x, %scale bias(%b) {axis = 2 : i64, epsilon = 1.0e-05 : f32}
        : (tensor<?x?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, Graph_Tensor:$scale, Optional<Graph_Tensor>:$bias,
                   I64Attr:$axis, DefaultValuedAttr<F32Attr, "1.0e-5">:$epsilon);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input `,` $scale (`bias` `(` $bias^ `)`)? attr-dict `:` functional-type(operands, results)";
}

def Graph_CumSumOp : Graph_Op<"cumsum", [Pure]> {
  let summary = "ONNX CumSum along a scalar axis operand";
  let description = [{
    ```mlir
    %y = graph.cumsum %x, %axis {exclusive = false, reverse = false}
        : (tensor<?x?xi64>, tensor<i64>) -> tensor<?x?xi64>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, Graph_IndexTensor:$axis,
                   DefaultValuedAttr<BoolAttr, "false">:$exclusive,
                   DefaultValuedAttr<BoolAttr, "false">:$reverse);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input `,` $axis attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

def Graph_MatMulOp : Graph_Op<"matmul", [Pure]> {
  let summary = "ONNX MatMul (numpy matmul: batched, broadcasting, 1-D promotion)";
  let description = [{
    ```mlir
    %y = graph.matmul %x, %w : (tensor<?x?x64xf32>, tensor<64x192xf32>) -> tensor<?x?x192xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$lhs, Graph_Tensor:$rhs);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
}

def Graph_GemmOp : Graph_Op<"gemm", [Pure]> {
  let summary = "ONNX Gemm: alpha * op(A) * op(B) + beta * C";
  let description = [{
    ```mlir
    %y = graph.gemm %a, %b, %c {transB = true}
        : (tensor<?x64xf32>, tensor<192x64xf32>, tensor<192xf32>) -> tensor<?x192xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$a, Graph_Tensor:$b, Optional<Graph_Tensor>:$c,
                   DefaultValuedAttr<F32Attr, "1.0">:$alpha,
                   DefaultValuedAttr<F32Attr, "1.0">:$beta,
                   DefaultValuedAttr<BoolAttr, "false">:$transA,
                   DefaultValuedAttr<BoolAttr, "false">:$transB);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$a `,` $b (`,` $c^)? attr-dict `:` functional-type(operands, results)";
}

def Graph_EinsumOp : Graph_Op<"einsum", [Pure]> {
  let summary = "ONNX Einsum in explicit form (`->` present, no ellipsis)";
  let description = [{
    The importer rewrites implicit-output equations to explicit ones.

    ```mlir
    %y = graph.einsum %a, %b {equation = "bij,bjk->bik"}
        : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
    ```
  }];
  let arguments = (ins Variadic<Graph_Tensor>:$inputs, StrAttr:$equation);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

include "dialects/graph/IR/GraphFusedOps.td"

#endif // INFER_DIALECTS_GRAPH_IR_GRAPHOPS_TD
