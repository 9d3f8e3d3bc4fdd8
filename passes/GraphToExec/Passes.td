//===- Passes.td - graph to exec conversion ----------------*- tablegen -*-===//

#ifndef INFER_PASSES_GRAPHTOEXEC_PASSES_TD
#define INFER_PASSES_GRAPHTOEXEC_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertGraphToExecPass : Pass<"infer-convert-graph-to-exec", "mlir::ModuleOp"> {
  let summary = "Lowers the optimized graph's entry function to an exec.program";
  let description = [{
    Takes the module's entry function (its only public func.func) after
    `--infer-optimize` and replaces it with an `exec.program` of the same
    name. Every tensor computed per token ([batch, seq, F...]) gets an
    `exec.buffer` of `F * elem_bytes * T` bytes, T = batch * seq (static
    tensors get constant sizes); graph.weight / graph.pack_weights become
    `exec.weight` under the artifact writer's names, graph.constant becomes
    `exec.constant`; each fused op becomes its launch, a fusion_group an
    `exec.elementwise` carrying its region. Entry arguments and results
    become `exec.input` / `exec.output` named by their `graph.name`.
    With `activation-type`, token-major float tensors get buffers of that
    type (infer-compile --dtype: activations follow the weights; kernels
    still compute norms, softmax and accumulations in fp32).
    Buffers have no offsets yet (`--infer-plan-memory` assigns them).
    Guarantees: every op of the entry function is lowered, or the pass fails
    with an error at the first op it does not support, naming it.

    Before:
    ```mlir
    %1 = graph.rms_norm %0, %w {epsilon = 1.0e-06 : f32} : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
    ```
    After:
    ```mlir
    %b1 = exec.buffer %arena size #exec.affine<256 * T + 0> of f32
    exec.rms_norm %b0, %w -> %b1 {epsilon = 1.0e-06 : f32, features = 64 : i64}
    ```
  }];
  let options = [
    Option<"activationType", "activation-type", "std::string", /*default=*/"\"\"",
           "Element type of float activation buffers: fp32, bf16 or fp16 (default: the graph's)">
  ];
  let dependentDialects = ["::infer::exec::ExecDialect"];
}

#endif // INFER_PASSES_GRAPHTOEXEC_PASSES_TD
