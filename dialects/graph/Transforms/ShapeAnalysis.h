//===- ShapeAnalysis.h - symbolic dims and small int64 values ---*- C++ -*-===//
//
// A forward analysis over a function of the graph dialect that gives
//  * every ranked tensor a vector of per-dim sizes, and
//  * every small integer tensor (static shape, at most kMaxElements elements)
//    a vector of element values,
// each entry a polynomial with int64 coefficients over symbols. A symbol is
// either a *dim* symbol (a dynamic dim whose size no known shape rule
// derives: the dynamic dims of the function arguments, or a dim an unknown op
// produced) or a *value* symbol (an element of an integer tensor the analysis
// cannot compute). Equal polynomials denote equal runtime integers: that is
// the fact FoldShapes relies on. Every rule is sound for executions in which
// the ops' ONNX preconditions hold; where a rule does not apply, the entry
// becomes a fresh symbol, which proves nothing.
//
// Dim symbols are sizes, so they are >= 0. With `assumeNonEmpty` they are
// also taken to be >= 1 (the exporters specialise empty dims away); only the
// proofs that need a non-zero product (Reshape's -1) use that.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_DIALECTS_GRAPH_TRANSFORMS_SHAPEANALYSIS_H
#define INFER_DIALECTS_GRAPH_TRANSFORMS_SHAPEANALYSIS_H

#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <map>
#include <optional>
#include <vector>

namespace mlir {
class RewritePatternSet;
namespace func {
class FuncOp;
} // namespace func
} // namespace mlir

namespace infer::graph {

/// A polynomial over analysis symbols: monomial (sorted symbol ids, with
/// repetition; empty = the constant term) -> non-zero coefficient.
class SymPoly {
public:
  SymPoly() = default;
  static SymPoly constant(int64_t c);
  static SymPoly symbol(unsigned id);

  bool isConstant() const;
  /// The value when the polynomial is a constant.
  std::optional<int64_t> getConstant() const;
  bool operator==(const SymPoly &other) const { return terms == other.terms; }
  bool operator!=(const SymPoly &other) const { return terms != other.terms; }

  /// Arithmetic; std::nullopt on int64 overflow.
  static std::optional<SymPoly> add(const SymPoly &a, const SymPoly &b);
  static std::optional<SymPoly> sub(const SymPoly &a, const SymPoly &b);
  static std::optional<SymPoly> mul(const SymPoly &a, const SymPoly &b);
  /// `a / b` when the division is exact for every value of the symbols: b is
  /// a monomial (c * syms) that divides every term of a.
  static std::optional<SymPoly> divExact(const SymPoly &a, const SymPoly &b);

  using Monomial = std::vector<unsigned>;
  const std::map<Monomial, int64_t> &getTerms() const { return terms; }

private:
  std::map<Monomial, int64_t> terms;
};

/// Symbolic dims and small integer values of the tensors of one function.
class ShapeAnalysis {
public:
  /// Tensors with more elements than this are not given element values.
  static constexpr int64_t kMaxElements = 16;

  ShapeAnalysis(mlir::func::FuncOp func, bool assumeNonEmpty);

  /// Per-dim sizes of a ranked tensor (std::nullopt when unranked).
  std::optional<llvm::SmallVector<SymPoly>> getDims(mlir::Value value);
  /// Element values (row-major) of a small integer tensor of static shape.
  std::optional<llvm::SmallVector<SymPoly>> getElements(mlir::Value value);

  /// Forgets what was computed for the results of `op` (about to be erased).
  void forget(mlir::Operation *op);

  /// True when `p` is >= 0 for every value of its symbols.
  bool isNonNegative(const SymPoly &p) const;
  /// True when `p` is >= 1 (dim symbols count as >= 1 only under
  /// assumeNonEmpty).
  bool isPositive(const SymPoly &p) const;

  /// Prints the analysis of `value` (debugging).
  std::string describe(mlir::Value value);

private:
  struct Info {
    std::optional<llvm::SmallVector<SymPoly>> dims;
    std::optional<llvm::SmallVector<SymPoly>> elements;
  };
  const Info &lookup(mlir::Value value);
  Info compute(mlir::Value value);
  using Partial = llvm::SmallVector<std::optional<SymPoly>>;
  std::optional<Partial> computeDims(mlir::Value value);
  std::optional<Partial> computeElements(mlir::Value value);
  unsigned freshSymbol(mlir::Value value, unsigned index, bool isDim);

  bool assumeNonEmpty;
  llvm::DenseMap<mlir::Value, Info> infos;
  /// Symbol id -> is it a dim (>= 0) rather than an arbitrary value.
  std::vector<bool> symbolIsDim;
  /// (value, dim index or element index, kind) -> symbol id, so that a value
  /// analysed twice gets the same symbols.
  std::map<std::tuple<void *, unsigned, bool>, unsigned> symbolOf;
};

/// Adds the rewrites of --infer-fold-shapes; they read (and keep up to date)
/// `analysis`, which must outlive them. Run them with
/// ShapeAnalysisListener(analysis) as the rewrite listener.
void populateFoldShapesPatterns(mlir::RewritePatternSet &patterns, ShapeAnalysis &analysis);

/// Drops the analysis of ops the rewriter erases (their Values may be reused).
class ShapeAnalysisListener : public mlir::RewriterBase::Listener {
public:
  explicit ShapeAnalysisListener(ShapeAnalysis &analysis) : analysis(analysis) {}
  void notifyOperationErased(mlir::Operation *op) override { analysis.forget(op); }

private:
  ShapeAnalysis &analysis;
};

} // namespace infer::graph

#endif // INFER_DIALECTS_GRAPH_TRANSFORMS_SHAPEANALYSIS_H
