//===- KvRotaryFusion.cpp - paged attentions that may do their rotary -----===//
//
// Decides, on the planned step program, which exec.kv_attention's KV write
// may also do the rotary just before it (`rotary = "kv_write"`) and which
// decode kernel may do the rotary, the KV write and the attention at once
// (`rotary = "decode"`); Passes.td states the rules. The cuda codegen only
// reads the attribute.
//
//===----------------------------------------------------------------------===//

#include "dialects/exec/IR/ExecOps.h"
#include "dialects/exec/Transforms/LaunchNeighbours.h"
#include "dialects/exec/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace infer::exec {
#define GEN_PASS_DEF_FOLDKVROTARYPASS
#include "dialects/exec/Transforms/Passes.h.inc"
} // namespace infer::exec

using namespace mlir;
using namespace infer::exec;

namespace {

/// "kv_write", "decode" or "" for `attention` in a program planned up to
/// `bound` tokens.
StringRef foldableRotary(KvAttentionOp attention, int64_t bound) {
  auto rotary = dyn_cast_or_null<RotaryOp>(previousLaunch(attention));
  if (!rotary || attention.getInputs().size() != 1 ||
      attention.getInputs().front() != rotary.getOut())
    return "";
  Type type = elementTypeOf(attention.getOut(), Type());
  if (!type || elementTypeOf(rotary.getOut(), Type()) != type)
    return "";
  // The decode kernel reads the raw rows in the rotary's place while it
  // writes the attention's output, and nobody else may see the rotated rows.
  Value raw = rotary.getInput();
  const bool decode = onlyUsedBy(rotary.getOut(), rotary, attention) &&
                      (raw == rotary.getOut() || apartUpTo(raw, attention.getOut(), bound));
  return decode ? "decode" : "kv_write";
}

struct FoldKvRotaryPass : public infer::exec::impl::FoldKvRotaryPassBase<FoldKvRotaryPass> {
  using FoldKvRotaryPassBase::FoldKvRotaryPassBase;

  void runOnOperation() override {
    ProgramOp program = getOperation();
    int64_t bound = 0;
    for (ArenaOp arena : program.getOps<ArenaOp>())
      if (std::optional<uint64_t> tokens = arena.getBoundTokens())
        bound = int64_t(*tokens);
    Builder builder(&getContext());
    program.walk([&](KvAttentionOp attention) {
      StringRef kind = bound > 0 ? foldableRotary(attention, bound) : StringRef();
      if (kind.empty())
        attention.removeRotaryAttr();
      else
        attention.setRotaryAttr(builder.getStringAttr(kind));
    });
  }
};

} // namespace
