// RUN: infer-opt --split-input-file --infer-attach-epilogues %s | FileCheck %s

// Tests GPT-NeoX's parallel residual x + (attn(ln1(x)) + mlp(ln2(x))): the
// attention output projection takes x in its epilogue and the MLP's down
// projection takes that, so no add is left.
// CHECK-LABEL: func.func @parallel_residual
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x?x64xf32>, %[[A:[^:]+]]: tensor<?x?x64xf32>, %[[M:[^:]+]]: tensor<?x?x160xf32>)
// CHECK: %[[O:.+]] = graph.linear %[[A]], %{{.+}} bias(%{{.+}}) residual(%[[X]])
// CHECK: %[[D:.+]] = graph.linear %[[M]], %{{.+}} bias(%{{.+}}) residual(%[[O]])
// CHECK-NEXT: return %[[D]]
func.func @parallel_residual(%x: tensor<?x?x64xf32>, %a: tensor<?x?x64xf32>, %m: tensor<?x?x160xf32>) -> tensor<?x?x64xf32> {
  %wo = graph.weight <dense> : tensor<64x64xf32>
  %bo = graph.weight <dense.bias> : tensor<64xf32>
  %wd = graph.weight <dense_4h_to_h> : tensor<160x64xf32>
  %bd = graph.weight <dense_4h_to_h.bias> : tensor<64xf32>
  %o = graph.linear %a, %wo bias(%bo) : (tensor<?x?x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  %d = graph.linear %m, %wd bias(%bd) : (tensor<?x?x160xf32>, tensor<160x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  %s = graph.add %o, %d : (tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  %r = graph.add %s, %x : (tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  return %r : tensor<?x?x64xf32>
}
