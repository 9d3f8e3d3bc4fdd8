//===- KvRotaryFusion.cpp - paged attentions that do their rotary ---------===//
//
// Decides, on the planned step program, which kernels of an exec.kv_attention
// do the rotary just before it: the decode kernel (rotary, KV write and
// attention at once) and the KV write (`rotary`), and which batch-1 decode
// kernels also run the qkv GEMM before that rotary (`qkv_decode`); Passes.td
// states the rules. The cuda codegen only reads the attributes.
//
//===----------------------------------------------------------------------===//

#include "dialects/exec/IR/ExecOps.h"
#include "dialects/exec/Transforms/LaunchNeighbours.h"
#include "dialects/exec/Transforms/Passes.h"
#include "runtime/cuda/abi/GemvGeometry.h"
#include "runtime/cuda/abi/KvDecodeGeometry.h"

#include "mlir/IR/Builders.h"

namespace infer::exec {
#define GEN_PASS_DEF_FOLDKVROTARYPASS
#define GEN_PASS_DEF_FOLDQKVDECODEPASS
#include "dialects/exec/Transforms/Passes.h.inc"
} // namespace infer::exec

using namespace mlir;
using namespace infer::exec;
namespace kernels = infer::kernels;

namespace {

/// The rotary just before `attention` when it writes the attention's one
/// input in its type (an FP8 cache has its own write: none), else null.
RotaryOp foldableRotary(KvAttentionOp attention) {
  auto rotary = dyn_cast_or_null<RotaryOp>(previousLaunch(attention));
  if (!rotary || attention.getInputs().size() != 1 ||
      attention.getInputs().front() != rotary.getOut() ||
      attention.getKCacheScale().convertToDouble() > 0 ||
      attention.getVCacheScale().convertToDouble() > 0)
    return {};
  Type type = elementTypeOf(attention.getOut(), Type());
  if (!type || elementTypeOf(rotary.getOut(), Type()) != type)
    return {};
  return rotary;
}

/// Whether the decode kernel may do `rotary` for `attention` in a program
/// planned up to `bound` tokens.
bool decodeFolds(KvAttentionOp attention, RotaryOp rotary, int64_t bound) {
  // The kernel reads the raw rows in the rotary's place while it writes the
  // attention's output, and nobody else may see the rotated rows.
  Value raw = rotary.getInput();
  if (!onlyUsedBy(rotary.getOut(), rotary, attention) ||
      (raw != rotary.getOut() && !apartUpTo(raw, attention.getOut(), bound)))
    return false;
  // The heads infer_kv_decode has (KvAttention.cuh): 16-bit, 8-element
  // vectors up to 128 wide, the whole causal context.
  const int64_t headDim = int64_t(attention.getHeadDim());
  return elementBytesOf(elementTypeOf(attention.getOut(), Type())) == 2 && headDim % 8 == 0 &&
         headDim <= 128 && int64_t(attention.getWindow()) == 0 &&
         attention.getAlibi().convertToDouble() == 0.0;
}

struct FoldKvRotaryPass : public infer::exec::impl::FoldKvRotaryPassBase<FoldKvRotaryPass> {
  using FoldKvRotaryPassBase::FoldKvRotaryPassBase;

  void runOnOperation() override {
    const int64_t bound = plannedBound(getOperation());
    Builder builder(&getContext());
    getOperation().walk([&](KvAttentionOp attention) {
      RotaryOp rotary = bound > 0 ? foldableRotary(attention) : RotaryOp();
      const bool inDecode = rotary && decode && decodeFolds(attention, rotary, bound);
      const bool inWrite = rotary && kvWrite;
      if (!inDecode && !inWrite)
        attention.removeRotaryAttr();
      else
        attention.setRotaryAttr(builder.getStringAttr(inDecode && inWrite ? "decode_or_kv_write"
                                                      : inDecode          ? "decode"
                                                                          : "kv_write"));
    });
  }
};

/// Whether batch-1 decode may run `attention`'s qkv GEMM in its kernel.
bool qkvFolds(KvAttentionOp attention) {
  std::optional<StringRef> rotaryKind = attention.getRotary();
  if (!rotaryKind || !rotaryKind->starts_with("decode") ||
      kernels::kvDecodeMaxDim(int64_t(attention.getHeadDim())) != 64)
    return false;
  auto rotary = dyn_cast_or_null<RotaryOp>(previousLaunch(attention));
  auto gemm = rotary ? dyn_cast_or_null<GemmOp>(previousLaunch(rotary)) : GemmOp();
  if (!gemm || rotary.getInput() != gemm.getOut() || gemm.getPrologue() != "rms_norm" ||
      gemm.getEpilogue())
    return false;
  // The kernel hands the GEMM's rows to its attention blocks: nobody else reads them.
  if (!llvm::all_of(gemm.getOut().getUsers(), [&](Operation *user) {
        return user == gemm || user == rotary || user == attention;
      }))
    return false;
  return kernels::gemvRowsSupported(int64_t(gemm.getK()), int64_t(gemm.getN()),
                                    gemm.getTransposeWeight(),
                                    elementBytesOf(elementTypeOf(gemm.getOut(), Type())));
}

struct FoldQkvDecodePass : public infer::exec::impl::FoldQkvDecodePassBase<FoldQkvDecodePass> {
  using FoldQkvDecodePassBase::FoldQkvDecodePassBase;

  void runOnOperation() override {
    Builder builder(&getContext());
    getOperation().walk([&](KvAttentionOp attention) {
      if (qkvFolds(attention))
        attention.setQkvDecodeAttr(builder.getBoolAttr(true));
      else
        attention.removeQkvDecodeAttr();
    });
  }
};

} // namespace
