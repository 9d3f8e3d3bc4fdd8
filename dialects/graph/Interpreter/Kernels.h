//===- Kernels.h - reference kernels for graph ops (internal) ---*- C++ -*-===//
//
// One function per op family, on Tensors, with ONNX semantics. Kernels check
// their inputs and return an llvm::Error describing what was expected; the
// interpreter prefixes the op name and location. Loops are naive on purpose:
// these kernels are the reference that compiled code is compared against.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_DIALECTS_GRAPH_INTERPRETER_KERNELS_H
#define INFER_DIALECTS_GRAPH_INTERPRETER_KERNELS_H

#include "dialects/graph/Interpreter/Tensor.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <vector>

namespace infer::interp::kernels {

using Shape = std::vector<int64_t>;

//===----------------------------------------------------------------------===//
// Helpers shared by the kernel files
//===----------------------------------------------------------------------===//

/// An error carrying `message` (no op prefix; the interpreter adds it).
llvm::Error kernelError(const llvm::Twine &message);

/// Charges `elements` computed elements to the enclosing ScopedWorkLimit: an
/// error once its cap is spent, success always outside one.
llvm::Error chargeWork(int64_t elements);

/// Product of `dims` (1 for an empty list).
int64_t product(llvm::ArrayRef<int64_t> dims);

/// Row-major strides of `shape`, in elements.
Shape stridesOf(llvm::ArrayRef<int64_t> shape);

/// A zero-filled tensor whose shape comes from data: rejects negative dims
/// and more elements than the interpreter is willing to allocate.
llvm::Expected<Tensor> allocate(DType dtype, Shape shape);
/// An error when a tensor of `shape` would pass the element cap
/// (ScopedElementLimit) or has a negative dim: checked before any tensor
/// larger than its operands is built (broadcasts, products, gathers).
llvm::Error checkElements(llvm::ArrayRef<int64_t> shape);

/// Maps `axis` in [-rank, rank) to [0, rank); `what` names it in errors.
llvm::Expected<int64_t> normalizeAxis(int64_t axis, int64_t rank, const llvm::Twine &what);

/// The values of an index operand (I64, rank 0 or 1).
llvm::Expected<std::vector<int64_t>> readIndexVector(const Tensor &tensor, const llvm::Twine &what);

/// The single value of a scalar I64 operand (rank 0, or one element).
llvm::Expected<int64_t> readIndexScalar(const Tensor &tensor, const llvm::Twine &what);

/// Fails unless `tensor` has one of `allowed` dtypes.
llvm::Error expectDType(const Tensor &tensor, llvm::ArrayRef<DType> allowed,
                        const llvm::Twine &what);

/// Numpy multidirectional broadcasting of two shapes.
llvm::Expected<Shape> broadcastShapes(llvm::ArrayRef<int64_t> lhs, llvm::ArrayRef<int64_t> rhs);

/// Strides that read a tensor of `shape` as if it had the broadcast shape
/// `outShape` (0 on broadcast dims). `shape` must broadcast to `outShape`.
Shape broadcastStrides(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> outShape);

/// Copies `input` broadcast to exactly `shape` (unidirectional broadcasting).
llvm::Expected<Tensor> broadcastTo(const Tensor &input, llvm::ArrayRef<int64_t> shape);

/// Walks a row-major index space in order and tracks, for each of several
/// operands, the element offset that the current index maps to:
///   offset[k] = base[k] + sum_d index[d] * strides[k][d]
class OffsetWalker {
public:
  OffsetWalker(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<Shape> strides,
               llvm::ArrayRef<int64_t> bases = {});
  int64_t offset(size_t operand) const { return offsets[operand]; }
  llvm::ArrayRef<int64_t> index() const { return position; }
  /// Advances to the next index (wrapping to all zeros after the last).
  void next();

private:
  Shape dims;
  std::vector<Shape> operandStrides;
  Shape position;
  llvm::SmallVector<int64_t, 4> offsets;
};

//===----------------------------------------------------------------------===//
// Elementwise (ElementwiseKernels.cpp)
//===----------------------------------------------------------------------===//

enum class UnaryKind {
  Neg,
  Abs,
  Sqrt,
  Reciprocal,
  Exp,
  Log,
  Sin,
  Cos,
  Tanh,
  Erf,
  Sigmoid,
  Relu,
  Not,
  Identity
};
llvm::Expected<Tensor> unary(UnaryKind kind, const Tensor &input);

enum class BinaryKind {
  Add,
  Sub,
  Mul,
  Div,
  Pow,
  Max,
  Min,
  And,
  Or,
  Equal,
  Less,
  LessOrEqual,
  Greater,
  GreaterOrEqual
};
llvm::Expected<Tensor> binary(BinaryKind kind, const Tensor &lhs, const Tensor &rhs);

llvm::Expected<Tensor> where(const Tensor &condition, const Tensor &x, const Tensor &y);
llvm::Expected<Tensor> cast(const Tensor &input, DType to);
llvm::Expected<Tensor> clip(const Tensor &input, const Tensor *min, const Tensor *max);
llvm::Expected<Tensor> gelu(const Tensor &input, bool tanhApproximation);
llvm::Expected<Tensor> isNaN(const Tensor &input);

//===----------------------------------------------------------------------===//
// Shape manipulation (ShapeKernels.cpp)
//===----------------------------------------------------------------------===//

llvm::Expected<Tensor> shapeOf(const Tensor &input, int64_t start, std::optional<int64_t> end);
llvm::Expected<Tensor> reshape(const Tensor &data, const Tensor &shape, bool allowZero);
llvm::Expected<Tensor> expand(const Tensor &input, const Tensor &shape);
llvm::Expected<Tensor> tile(const Tensor &input, const Tensor &repeats);
llvm::Expected<Tensor> flatten(const Tensor &input, int64_t axis);
llvm::Expected<Tensor> squeeze(const Tensor &input, const Tensor *axes);
llvm::Expected<Tensor> unsqueeze(const Tensor &input, const Tensor &axes);
llvm::Expected<Tensor> transpose(const Tensor &input, llvm::ArrayRef<int64_t> perm);
llvm::Expected<Tensor> concat(llvm::ArrayRef<const Tensor *> inputs, int64_t axis);
llvm::Expected<std::vector<Tensor>> split(const Tensor &input, const Tensor *sizes, int64_t axis,
                                          size_t numOutputs);
llvm::Expected<Tensor> slice(const Tensor &data, const Tensor &starts, const Tensor &ends,
                             const Tensor &axes, const Tensor &steps);
llvm::Expected<Tensor> gather(const Tensor &data, const Tensor &indices, int64_t axis);
/// The k largest along `axis`, descending, ties to the lower index: {values, indices}.
llvm::Expected<std::vector<Tensor>> topK(const Tensor &input, int64_t k, int64_t axis);
llvm::Expected<Tensor> gatherElements(const Tensor &data, const Tensor &indices, int64_t axis);
/// ONNX ScatterND / ScatterElements; `reduction` is none, add, mul, min or max
/// (the last four on f32 and i64 data).
llvm::Expected<Tensor> scatterND(const Tensor &data, const Tensor &indices, const Tensor &updates,
                                 llvm::StringRef reduction);
llvm::Expected<Tensor> scatterElements(const Tensor &data, const Tensor &indices,
                                       const Tensor &updates, int64_t axis,
                                       llvm::StringRef reduction);
llvm::Expected<Tensor> gatherND(const Tensor &data, const Tensor &indices, int64_t batchDims);
llvm::Expected<Tensor> range(const Tensor &start, const Tensor &limit, const Tensor &delta);
llvm::Expected<Tensor> trilu(const Tensor &input, const Tensor *k, bool upper);
/// `value` is a one-element tensor whose dtype is the result's.
llvm::Expected<Tensor> constantOfShape(const Tensor &shape, const Tensor &value);

//===----------------------------------------------------------------------===//
// Reductions, normalisation, scans (ReductionKernels.cpp)
//===----------------------------------------------------------------------===//

enum class ReduceKind { Sum, Mean, Max };
llvm::Expected<Tensor> reduce(ReduceKind kind, const Tensor &input, const Tensor *axes,
                              bool keepDims, bool noopWithEmptyAxes);
llvm::Expected<Tensor> softmax(const Tensor &input, int64_t axis);
llvm::Expected<Tensor> layerNorm(const Tensor &input, const Tensor &scale, const Tensor *bias,
                                 int64_t axis, float epsilon);
llvm::Expected<Tensor> cumSum(const Tensor &input, const Tensor &axis, bool exclusive,
                              bool reverse);

//===----------------------------------------------------------------------===//
// Contractions (ContractionKernels.cpp)
//===----------------------------------------------------------------------===//

llvm::Expected<Tensor> matmul(const Tensor &lhs, const Tensor &rhs);
llvm::Expected<Tensor> gemm(const Tensor &a, const Tensor &b, const Tensor *c, float alpha,
                            float beta, bool transA, bool transB);
llvm::Expected<Tensor> einsum(llvm::StringRef equation, llvm::ArrayRef<const Tensor *> inputs);

//===----------------------------------------------------------------------===//
// Fused LLM ops (FusedKernels.cpp)
//===----------------------------------------------------------------------===//
// Activations are token-major, [batch, seq, heads * head_dim]; the op
// descriptions in GraphFusedOps.td are the spec.

llvm::Expected<Tensor> rmsNorm(const Tensor &input, const Tensor &weight, float epsilon,
                               float weightOffset);
/// `weight` is [K, N], or [N, K] when `transposeWeight`.
llvm::Expected<Tensor> linear(const Tensor &input, const Tensor &weight, const Tensor *bias,
                              const Tensor *residual, bool transposeWeight);

/// graph.quantize_weight: `weight` [n, k] ([k, n] when `transpose`) as its
/// quantized bytes (held as i64, 0..255) and f32 scales (Quantization.h),
/// each group clamped to `clip`'s ratio of its max |w| first when given.
llvm::Expected<std::vector<Tensor>> quantizeWeight(const Tensor &weight, const Tensor *inputScale,
                                                   const Tensor *clip, llvm::StringRef scheme,
                                                   int64_t groupSize, bool transpose);
/// graph.quantized_linear: linear over the dequantized [n, k] weight
/// ((q - zeros) * scales); fp8 rounds each input row to E4M3 with its own
/// scale first; `inputScale` f [k] divides input feature j by f[j] before (AWQ).
llvm::Expected<Tensor> quantizedLinear(const Tensor &input, const Tensor &q, const Tensor &scales,
                                       const Tensor *bias, const Tensor *residual,
                                       const Tensor *inputScale, const Tensor *zeros,
                                       llvm::StringRef scheme, int64_t groupSize);
/// graph.dequantize: the f32 weight q, scales and zeros stand for, [n, k]
/// ([k, n] when `transpose`); n is q's rows, k follows from the scheme.
llvm::Expected<Tensor> dequantize(const Tensor &q, const Tensor &scales, const Tensor *zeros,
                                  llvm::StringRef scheme, int64_t groupSize, bool transpose);

struct RotaryConfig {
  int64_t numHeads, rotatedHeads, headDim, rotaryDim;
  bool interleaved;
};
/// Where a rotary's angles come from: `invFreq` (cos and sin computed), or
/// `cosCache` and `sinCache`, [max_position, rotary_dim / 2] read at each
/// token's position or [batch or 1, seq, rotary_dim / 2] one row per token.
struct RotaryTables {
  const Tensor *invFreq = nullptr;
  const Tensor *cosCache = nullptr, *sinCache = nullptr;
};
llvm::Expected<Tensor> rotary(const Tensor &input, const Tensor *positions,
                              const RotaryTables &tables, const RotaryConfig &config);

struct AttentionConfig {
  int64_t numHeads, numKvHeads, headDim;
  float scale;
  bool causal;
  float softcap;                          // 0: none
  int64_t window;                         // 0: none; causal only
  float alibi;                            // ALiBi's bias factor (reference::alibiSlope); 0: none
  float kCacheScale = 0, vCacheScale = 0; // > 0: K / V read as E4M3 of x / scale (FP8 KV cache)
};
/// `inputs` is {packed qkv} or {q, k, v}.
/// graph.moe (runtime/base/ReferenceMoe.h).
struct MoeRouting {
  int64_t topK = 1;
  bool normalize = true, sigmoid = false;
  int64_t groups = 1, topkGroups = 1;
  double scale = 1.0;
};
llvm::Expected<Tensor> moe(const Tensor &input, const Tensor &router, const Tensor &gateUp,
                           const Tensor &down, const Tensor *scoreBias, const MoeRouting &routing);
llvm::Expected<Tensor> attention(llvm::ArrayRef<const Tensor *> inputs,
                                 const AttentionConfig &config);

/// graph.gather_features: feature f of each row is feature map[f] of the
/// row's concatenation of `inputs` (same leading dims and dtype).
llvm::Expected<Tensor> gatherFeatures(llvm::ArrayRef<const Tensor *> inputs,
                                      llvm::ArrayRef<int64_t> map);
/// `inputs` is {gate_up} or {gate, up}; `activation` is silu, gelu or gelu_tanh.
llvm::Expected<Tensor> gatedActivation(llvm::ArrayRef<const Tensor *> inputs,
                                       llvm::StringRef activation);
/// Rows of `table` by id; with `positions`, plus row (offset + t) of it for
/// token t along the last dim of `ids`.
llvm::Expected<Tensor> embedding(const Tensor &table, const Tensor &ids, const Tensor *positions,
                                 int64_t positionOffset);

} // namespace infer::interp::kernels

#endif // INFER_DIALECTS_GRAPH_INTERPRETER_KERNELS_H
