//===- StepEntry.cpp - the paged-KV step entry from a forward program -----===//
//
// Rewrites an unplanned forward exec.program into the `step` entry: the
// [batch, seq] ids become the token ids of a packed batch (batch 1, seq T),
// the step metadata become i64 inputs, rotary and learned positions read the
// tokens' absolute positions and each causal attention reads and writes the
// paged KV cache of its layer (docs/kv-cache.md, "The step program"). When
// the logits come from a GEMM (the LM head, perhaps followed by row-wise
// elementwise ops or copies), the rows whose logits are wanted are gathered
// first (input `logit_indices`), so the head runs on R rows instead of T.
//
//===----------------------------------------------------------------------===//

#include "dialects/exec/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"

namespace infer::exec {
#define GEN_PASS_DEF_STEPENTRYPASS
#include "dialects/exec/Transforms/Passes.h.inc"
} // namespace infer::exec

using namespace mlir;
using namespace infer::exec;

namespace {

struct StepEntryPass : public infer::exec::impl::StepEntryPassBase<StepEntryPass> {
  using StepEntryPassBase::StepEntryPassBase;

  void runOnOperation() override {
    ProgramOp program = getOperation();
    if (failed(rewrite(program)))
      signalPassFailure();
  }

  LogicalResult rewrite(ProgramOp program) {
    if (blockSize <= 0 || maxSeqLen <= 0)
      return program.emitError() << "step entry: block-size and max-seq-len must be positive, got "
                                 << blockSize << " and " << maxSeqLen;
    SmallVector<InputOp> inputs(program.getBody().front().getOps<InputOp>());
    if (inputs.size() != 1)
      return program.emitError() << "step entry: expected one input (the token ids), found "
                                 << inputs.size();
    InputOp ids = inputs.front();
    auto idsBuffer = ids.getBuffer().getDefiningOp<BufferOp>();
    if (!idsBuffer || !idsBuffer.getElementType().isInteger(64) ||
        idsBuffer.getSize() != AffineAttr::get(&getContext(), 8, 0))
      return ids.emitError() << "step entry: input '" << ids.getName()
                             << "' is not one i64 id per token";
    if (idsBuffer.getOffset())
      return program.emitError() << "step entry: the program is already planned";

    MLIRContext *context = &getContext();
    OpBuilder builder(ids);
    builder.setInsertionPointAfter(ids);
    Value arena = program.getArena().getArena();
    int64_t maxBlocks = (maxSeqLen + blockSize - 1) / blockSize;
    auto input = [&](StringRef name, int64_t perToken, int64_t constant) {
      Value buffer = builder.create<BufferOp>(ids.getLoc(), builder.getType<BufferType>(), arena,
                                              AffineAttr(), AffineAttr::get(context, perToken, constant),
                                              TypeAttr::get(builder.getI64Type()));
      builder.create<InputOp>(ids.getLoc(), name, buffer);
      return buffer;
    };
    ids.setName("token_ids");
    Value positions = input("positions", 8, 0);
    Value seqStarts = input("seq_starts", 8, 8);
    Value contextLens = input("context_lens", 8, 0);
    Value blockTables = input("block_tables", 8 * maxBlocks, 0);
    Value slotIds = input("slot_ids", 8, 0);

    int64_t layer = 0;
    std::optional<std::pair<int64_t, int64_t>> kvShape;
    SmallVector<Operation *> erased;
    for (Operation &op : program.getBody().front()) {
      if (auto rotary = dyn_cast<RotaryOp>(op)) {
        if (rotary.getCosCache() && rotary.getCosCache().getDefiningOp<BufferOp>())
          return rotary.emitError() << "step entry: per-token rotary caches cannot follow "
                                       "the packed batch's positions";
        rotary.getPositionsMutable().assign(positions);
      } else if (auto embedding = dyn_cast<EmbeddingOp>(op)) {
        if (embedding.getPositionTable())
          embedding.getPositionIdsMutable().assign(positions);
      } else if (auto attention = dyn_cast<AttentionOp>(op)) {
        if (!attention.getCausal())
          return attention.emitError() << "step entry: only causal attention can read a KV cache";
        std::pair<int64_t, int64_t> shape{attention.getNumKvHeads(), attention.getHeadDim()};
        if (kvShape && *kvShape != shape)
          return attention.emitError() << "step entry: layer " << layer << " has " << shape.first
                                       << " KV heads of " << shape.second
                                       << ", unlike the layers before it";
        kvShape = shape;
        OpBuilder at(attention);
        at.create<KvAttentionOp>(
            attention.getLoc(), attention.getInputs(), seqStarts, contextLens, blockTables, slotIds,
            attention.getOut(), layer++, blockSize, attention.getNumHeads(),
            attention.getNumKvHeads(), attention.getHeadDim(), attention.getScale(),
            attention.getSoftcap(), attention.getWindow(), attention.getAlibi(),
            attention.getKCacheScale(), attention.getVCacheScale(), /*rotary=*/nullptr,
            /*qkv_decode=*/nullptr, /*prefill_kernel=*/nullptr);
        erased.push_back(attention);
      } else if (isa<InputOp>(op) && &op != ids.getOperation() &&
                 !llvm::is_contained({positions, seqStarts, contextLens, blockTables, slotIds},
                                     cast<InputOp>(op).getBuffer())) {
        return op.emitError() << "step entry: unexpected input";
      }
    }
    for (Operation *op : erased)
      op->erase();
    gatherLogitRows(program, builder);
    return success();
  }

  /// The op that writes `buffer` when there is exactly one and nothing but it
  /// and `reader` use the buffer.
  static Operation *soleWriter(Value buffer, Operation *reader) {
    Operation *writer = nullptr;
    for (OpOperand &use : buffer.getUses()) {
      Operation *user = use.getOwner();
      bool writes = false;
      if (auto gemm = dyn_cast<GemmOp>(user))
        writes = &use == &gemm.getOutMutable();
      else if (auto gemm = dyn_cast<QuantizedGemmOp>(user))
        writes = &use == &gemm.getOutMutable();
      else if (auto copy = dyn_cast<CopyOp>(user))
        writes = &use == &copy.getOutMutable();
      else if (auto elementwise = dyn_cast<ElementwiseOp>(user))
        writes = llvm::is_contained(elementwise.getOuts(), buffer);
      else if (auto norm = dyn_cast<RmsNormOp>(user))
        writes = &use == &norm.getOutMutable();
      else if (auto norm = dyn_cast<LayerNormOp>(user))
        writes = &use == &norm.getOutMutable();
      if (writes) {
        if (writer)
          return nullptr;
        writer = user;
      } else if (user != reader) {
        return nullptr;
      }
    }
    return writer;
  }

  /// An LM head's input operand: a GEMM's or a quantized GEMM's (a model
  /// that brings its LM head quantized).
  static OpOperand &headInput(Operation *head) {
    if (auto gemm = dyn_cast<GemmOp>(head))
      return gemm.getInputMutable();
    return cast<QuantizedGemmOp>(head).getInputMutable();
  }

  /// Finds the LM head (the GEMM the logits come from, through row-wise
  /// single-buffer-input elementwise ops and copies) and feeds it only the
  /// rows named by a new `logit_indices` input. Leaves the program alone
  /// (logits for all T rows) when the logits are made any other way.
  void gatherLogitRows(ProgramOp program, OpBuilder &builder) {
    SmallVector<OutputOp> outputs(program.getBody().front().getOps<OutputOp>());
    if (outputs.size() != 1)
      return;
    SmallVector<Value> rowBuffers;
    Value current = outputs.front().getBuffer();
    Operation *reader = outputs.front();
    Operation *head = nullptr;
    while (!head) {
      Operation *writer = soleWriter(current, reader);
      if (!writer || !current.getDefiningOp<BufferOp>())
        return;
      rowBuffers.push_back(current);
      if (auto gemm = dyn_cast<GemmOp>(writer)) {
        if (gemm.getResidual())
          return;
        head = gemm;
      } else if (auto gemm = dyn_cast<QuantizedGemmOp>(writer)) {
        if (gemm.getResidual())
          return;
        head = gemm;
      } else if (auto copy = dyn_cast<CopyOp>(writer)) {
        current = copy.getInput();
      } else {
        auto elementwise = dyn_cast<ElementwiseOp>(writer);
        if (!elementwise || elementwise.getOuts().size() != 1)
          return;
        SmallVector<Value> buffers;
        for (Value input : elementwise.getInputs())
          if (input.getDefiningOp<BufferOp>())
            buffers.push_back(input);
        if (buffers.size() != 1)
          return;
        current = buffers.front();
      }
      reader = writer;
    }
    auto hidden = headInput(head).get().getDefiningOp<BufferOp>();
    if (!hidden)
      return;
    // A norm that only feeds the LM head normalizes the logit rows alone: the
    // gather goes before it (rows are normalized one by one), so it runs on R
    // rows instead of T, and a batch-1 decode step's LM head folds it
    // (CudaLaunch.fuses_previous) instead of running it and then the gather.
    Operation *gatherBefore = head;
    Value gatherFrom = hidden;
    if (Operation *norm = soleWriter(hidden, head); norm && isa<RmsNormOp, LayerNormOp>(norm)) {
      OpOperand &normInput = isa<RmsNormOp>(norm) ? cast<RmsNormOp>(norm).getInputMutable()
                                                  : cast<LayerNormOp>(norm).getInputMutable();
      if (normInput.get().getDefiningOp<BufferOp>() && normInput.get() != hidden.getResult()) {
        gatherBefore = norm;
        gatherFrom = normInput.get();
        rowBuffers.push_back(hidden);
      }
    }
    auto source = gatherFrom.getDefiningOp<BufferOp>();
    MLIRContext *context = &getContext();
    Value arena = program.getArena().getArena();
    Location loc = head->getLoc();
    auto indices = builder.create<BufferOp>(loc, builder.getType<BufferType>(), arena, AffineAttr(),
                                            AffineAttr::get(context, 8, 0),
                                            TypeAttr::get(builder.getI64Type()));
    indices.setPerLogitRow(true);
    builder.create<InputOp>(loc, "logit_indices", indices);
    auto gathered = builder.create<BufferOp>(loc, builder.getType<BufferType>(), arena,
                                             AffineAttr(), source.getSize(),
                                             TypeAttr::get(source.getElementType()));
    gathered.setPerLogitRow(true);
    OpBuilder at(gatherBefore);
    const int64_t k = isa<GemmOp>(head) ? int64_t(cast<GemmOp>(head).getK())
                                        : int64_t(cast<QuantizedGemmOp>(head).getK());
    at.create<GatherRowsOp>(loc, gatherFrom, indices, gathered, k, /*elidable=*/nullptr);
    if (gatherBefore == head)
      headInput(head).assign(gathered);
    else if (auto norm = dyn_cast<RmsNormOp>(gatherBefore))
      norm.getInputMutable().assign(gathered);
    else
      cast<LayerNormOp>(gatherBefore).getInputMutable().assign(gathered);
    for (Value buffer : rowBuffers)
      buffer.getDefiningOp<BufferOp>().setPerLogitRow(true);
  }
};

} // namespace
