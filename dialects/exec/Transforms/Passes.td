//===- Passes.td - exec dialect passes ---------------------*- tablegen -*-===//
//
// Passes over exec programs (docs/exec.md): memory planning.
//
//===----------------------------------------------------------------------===//

#ifndef INFER_DIALECTS_EXEC_TRANSFORMS_PASSES_TD
#define INFER_DIALECTS_EXEC_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def PlanMemoryPass : Pass<"infer-plan-memory", "::infer::exec::ProgramOp"> {
  let summary = "Assigns every exec.buffer an arena offset from buffer lifetimes";
  let description = [{
    A buffer is live from the first to the last op (in program order) that
    uses it. Buffers whose lifetimes do not overlap share bytes; overlapping
    ones never do (an op's inputs and its output are live at the same op, so
    a launch never writes over what it reads). Sizes are evaluated at
    T = `max-batch-tokens` and packed greedily (largest first, best fit,
    256-byte aligned). The plan is made at the bound: offsets and the arena
    size are constants, valid for every T <= bound; the arena records
    `bound_tokens` and `peak_live_bytes` (the most bytes live at one op).
    Guarantees: every buffer has an offset, lies inside the arena, and
    shares no byte with a buffer live at the same time.

    Before:
    ```mlir
    %arena = exec.arena
    %a = exec.buffer %arena size #exec.affine<256 * T + 0> of f32
    ```
    After (`max-batch-tokens=8`):
    ```mlir
    %arena = exec.arena size #exec.affine<0 * T + 2048> {bound_tokens = 8 : i64, peak_live_bytes = 2048 : i64}
    %a = exec.buffer %arena [#exec.affine<0 * T + 0>] size #exec.affine<256 * T + 0> of f32
    ```
  }];
  let options = [
    Option<"maxBatchTokens", "max-batch-tokens", "int64_t", /*default=*/"8192",
           "The bound on T (batch * seq) the arena is planned for">
  ];
  let dependentDialects = ["::infer::exec::ExecDialect"];
}

#endif // INFER_DIALECTS_EXEC_TRANSFORMS_PASSES_TD
