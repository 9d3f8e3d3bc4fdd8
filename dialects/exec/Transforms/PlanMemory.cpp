//===- PlanMemory.cpp - liveness-based arena assignment -------------------===//
//
// Turns the exec.buffer ops of a program into lifetimes (first and last use in
// program order), packs them with planIntervals at T = max-batch-tokens and
// writes the offsets and the arena size back as constant affine attributes.
//
//===----------------------------------------------------------------------===//

#include "dialects/exec/Transforms/LaunchNeighbours.h"
#include "dialects/exec/Transforms/MemoryPlanner.h"
#include "dialects/exec/Transforms/Passes.h"
#include "dialects/exec/IR/ExecOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"

namespace infer::exec {
#define GEN_PASS_DEF_PLANMEMORYPASS
#include "dialects/exec/Transforms/Passes.h.inc"
} // namespace infer::exec

using namespace mlir;
using namespace infer::exec;

namespace {

/// Offsets are aligned for 16-byte vector accesses and cuBLASLt's preferred
/// 256-byte operand alignment.
constexpr uint64_t kBufferAlignment = 256;

struct PlanMemoryPass : public infer::exec::impl::PlanMemoryPassBase<PlanMemoryPass> {
  using PlanMemoryPassBase::PlanMemoryPassBase;

  void runOnOperation() override {
    ProgramOp program = getOperation();
    if (maxBatchTokens <= 0) {
      program.emitError() << "max-batch-tokens must be positive, got " << maxBatchTokens;
      return signalPassFailure();
    }
    std::vector<BufferOp> buffers;
    std::vector<LiveInterval> intervals;
    llvm::DenseMap<Operation *, size_t> indexOf;
    int64_t position = 0;
    // (input, output) of the norms a GEMM reads and of the gathers: their
    // input lives as long as their output (below).
    std::vector<std::pair<Value, Value>> foldedNorms, gathers;
    for (Operation &op : program.getBody().front()) {
      if (auto gather = dyn_cast<GatherRowsOp>(op))
        gathers.emplace_back(gather.getInput(), gather.getOut());
      if (auto norm = dyn_cast<RmsNormOp>(op))
        if (llvm::any_of(norm.getOut().getUsers(), [](Operation *user) { return isa<GemmOp>(user); }))
          foldedNorms.emplace_back(norm.getInput(), norm.getOut());
      if (auto buffer = dyn_cast<BufferOp>(op)) {
        indexOf[buffer] = buffers.size();
        buffers.push_back(buffer);
        int64_t bytes = buffer.getSize().at(maxBatchTokens);
        // Unused buffers still get a (one-op) lifetime so they have an offset.
        intervals.push_back({INT64_MAX, INT64_MIN, static_cast<uint64_t>(bytes)});
        continue;
      }
      ++position;
      // A rotary whose output the next op's paged attention reads: its input
      // lives through that op too, so the cuda backend's decode kernel
      // (infer_kv_decode) may read it there in the rotary's place.
      Value longerLived;
      if (auto rotary = dyn_cast<RotaryOp>(op)) {
        if (auto attention = dyn_cast_or_null<KvAttentionOp>(nextLaunch(&op)))
          if (llvm::is_contained(attention.getInputs(), rotary.getOut()))
            longerLived = rotary.getInput();
      }
      for (Value operand : op.getOperands()) {
        auto buffer = operand.getDefiningOp<BufferOp>();
        if (!buffer)
          continue;
        LiveInterval &interval = intervals[indexOf.at(buffer)];
        interval.begin = std::min(interval.begin, position);
        interval.end = std::max(interval.end, position);
        if (operand == longerLived)
          interval.end = std::max(interval.end, position + 1);
      }
    }
    // The cuda backend folds an rms_norm into the GEMV that reads its output,
    // which then reads the norm's input there (codegen allows it only where
    // that input and the GEMV's output are apart), and skips a gather of logit
    // rows that are the identity (a decode step's), whose readers then read
    // its input: so the input of either lives as long as its output. Norms
    // by their output's own last reader (a chain of norms does not keep its
    // first input), then gathers by their output's extended life (the LM
    // head that folds the final norm reads the gather's input).
    auto outlive = [&](const std::vector<std::pair<Value, Value>> &pairs) {
      std::vector<int64_t> ends;
      for (auto [input, out] : pairs)
        ends.push_back(out.getDefiningOp<BufferOp>()
                           ? intervals[indexOf.at(out.getDefiningOp<BufferOp>())].end
                           : INT64_MIN);
      for (auto [pair, end] : llvm::zip(pairs, ends))
        if (auto buffer = pair.first.getDefiningOp<BufferOp>())
          intervals[indexOf.at(buffer)].end = std::max(intervals[indexOf.at(buffer)].end, end);
    };
    outlive(foldedNorms);
    outlive(gathers);
    for (LiveInterval &interval : intervals)
      if (interval.begin > interval.end)
        interval.begin = interval.end = 0;

    MemoryPlan plan = planIntervals(intervals, kBufferAlignment);
    MLIRContext *context = &getContext();
    for (auto [buffer, offset] : llvm::zip(buffers, plan.offsets))
      buffer.setOffsetAttr(AffineAttr::get(context, 0, static_cast<int64_t>(offset)));
    ArenaOp arena = program.getArena();
    Builder builder(context);
    arena.setSizeAttr(AffineAttr::get(context, 0, static_cast<int64_t>(plan.arenaSize)));
    arena.setBoundTokensAttr(builder.getI64IntegerAttr(maxBatchTokens));
    arena.setPeakLiveBytesAttr(builder.getI64IntegerAttr(static_cast<int64_t>(plan.peakLiveBytes)));
  }
};

} // namespace
