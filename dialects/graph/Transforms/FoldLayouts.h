//===- FoldLayouts.h - exporters' layout chains → slices and reshapes -*- C++
//-*-===//
//
// Part of FoldShapes: fused-QKV layouts (Falcon, GPT-BigCode, ...) reach the
// heads through unsqueeze / split / gather_nd / transpose / reshape chains.
// These patterns rewrite them, exactly, into slices of the last axis and
// reshapes, which FoldShapes then removes where they return their input, so
// that the attention's q, k and v become parts of the projection's output.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_DIALECTS_GRAPH_TRANSFORMS_FOLDLAYOUTS_H
#define INFER_DIALECTS_GRAPH_TRANSFORMS_FOLDLAYOUTS_H

#include "dialects/graph/Transforms/ShapeAnalysis.h"

#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace mlir {
class RewritePatternSet;
} // namespace mlir

namespace infer::graph {

/// The constant Reshape target (allowzero = false) that turns dims `in`
/// into `out`: constants, 0 where the output dim is proven equal to the
/// input's at that position, at most one -1 (inferable: the other output
/// dims are positive); nullopt when `out` has no such target.
std::optional<llvm::SmallVector<int64_t>>
reshapeTarget(ShapeAnalysis &analysis, llvm::ArrayRef<SymPoly> in,
              llvm::ArrayRef<SymPoly> out);

void populateFoldLayoutPatterns(mlir::RewritePatternSet &patterns,
                                ShapeAnalysis &analysis);

} // namespace infer::graph

#endif // INFER_DIALECTS_GRAPH_TRANSFORMS_FOLDLAYOUTS_H
