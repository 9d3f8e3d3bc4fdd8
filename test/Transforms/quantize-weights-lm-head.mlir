// RUN: infer-opt --infer-quantize-weights="scheme=int4 group-size=32 lm-head=true" %s | FileCheck %s
// RUN: infer-opt --infer-quantize-weights="scheme=fp8 lm-head=true" %s | FileCheck %s --check-prefix=FP8

// Tests lm-head=true (infer-compile --quantize-lm-head): the LM head, whose
// result is the function's, becomes a quantized_linear as well; the other
// linears as without it (quantize-weights.mlir).
// CHECK-LABEL: func.func @layer
// CHECK-COUNT-2: graph.quantized_linear
// CHECK: %[[HQ:.+]], %[[HS:.+]] = graph.quantize_weight %{{.+}} {group_size = 32 : i64, scheme = "int4"} : (tensor<512x64xf32>) -> (tensor<512x32xui8>, tensor<512x2xf32>)
// CHECK: %[[L:.+]] = graph.quantized_linear %{{.+}}, %[[HQ]], %[[HS]] {group_size = 32 : i64, scheme = "int4"}
// CHECK-NEXT: return %[[L]]
// FP8-LABEL: func.func @layer
// FP8-NOT: graph.linear
// FP8: graph.quantize_weight %{{.+}} {group_size = 0 : i64, scheme = "fp8"} : (tensor<512x64xf32>) -> (tensor<512x64xui8>, tensor<512xf32>)
func.func @layer(%x: tensor<?x?x64xf32>) -> tensor<?x?x512xf32> {
  %wq = graph.weight <q> : tensor<64x64xf32>
  %wk = graph.weight <k> : tensor<64x32xf32>
  %wv = graph.weight <v> : tensor<64x32xf32>
  %b = graph.weight <qkv_bias> : tensor<128xf32>
  %w = graph.pack_weights %wq, %wk, %wv {axis = 1 : i64, transpose} : (tensor<64x64xf32>, tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<128x64xf32>
  %qkv = graph.linear %x, %w bias(%b) {transpose_weight = true} : (tensor<?x?x64xf32>, tensor<128x64xf32>, tensor<128xf32>) -> tensor<?x?x128xf32>
  %wo = graph.weight <o> : tensor<128x64xf32>
  %o = graph.linear %qkv, %wo residual(%x) : (tensor<?x?x128xf32>, tensor<128x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  %head = graph.weight <lm_head> : tensor<512x64xf32>
  %logits = graph.linear %o, %head {transpose_weight = true} : (tensor<?x?x64xf32>, tensor<512x64xf32>) -> tensor<?x?x512xf32>
  return %logits : tensor<?x?x512xf32>
}
