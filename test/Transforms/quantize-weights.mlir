// RUN: infer-opt --split-input-file --infer-quantize-weights="scheme=int4 group-size=32" %s | FileCheck %s --check-prefix=INT4
// RUN: infer-opt --split-input-file --infer-quantize-weights="scheme=fp8" %s | FileCheck %s --check-prefix=FP8
// RUN: not infer-opt --split-input-file --infer-quantize-weights="scheme=int4 group-size=48" %s 2>&1 | FileCheck %s --check-prefix=GROUP

// Tests a layer's packed QKV (transposed [n, k]), its o_proj with a
// residual, and the LM head: the first two become quantized_linears of
// quantize_weights of the same weights (bias and residual kept; int4 q is
// [n, k/2] bytes with [n, k/32] scales, fp8 [n, k] with [n]); the LM head,
// whose result is the function's, stays a linear.
// INT4-LABEL: func.func @layer
// INT4: %[[QKV:.+]] = graph.pack_weights
// INT4: %[[Q:.+]], %[[S:.+]] = graph.quantize_weight %[[QKV]] {group_size = 32 : i64, scheme = "int4"} : (tensor<128x64xf32>) -> (tensor<128x32xui8>, tensor<128x2xf32>)
// INT4: %[[A:.+]] = graph.quantized_linear %{{.+}}, %[[Q]], %[[S]] bias(%{{.+}}) {group_size = 32 : i64, scheme = "int4"} : (tensor<?x?x64xf32>, tensor<128x32xui8>, tensor<128x2xf32>, tensor<128xf32>) -> tensor<?x?x128xf32>
// INT4: %[[OQ:.+]], %[[OS:.+]] = graph.quantize_weight %{{.+}} {group_size = 32 : i64, scheme = "int4", transpose} : (tensor<128x64xf32>) -> (tensor<64x64xui8>, tensor<64x4xf32>)
// INT4: %[[O:.+]] = graph.quantized_linear %[[A]], %[[OQ]], %[[OS]] residual(%{{.+}})
// INT4: %[[L:.+]] = graph.linear %[[O]], %{{.+}} {transpose_weight = true}
// INT4-NEXT: return %[[L]]
// FP8-LABEL: func.func @layer
// FP8: graph.quantize_weight %{{.+}} {group_size = 0 : i64, scheme = "fp8"} : (tensor<128x64xf32>) -> (tensor<128x64xui8>, tensor<128xf32>)
// FP8: graph.quantized_linear {{.+}} {group_size = 0 : i64, scheme = "fp8"} : (tensor<?x?x64xf32>, tensor<128x64xui8>, tensor<128xf32>, tensor<128xf32>) -> tensor<?x?x128xf32>
// FP8: graph.quantize_weight %{{.+}} {group_size = 0 : i64, scheme = "fp8", transpose} : (tensor<128x64xf32>) -> (tensor<64x128xui8>, tensor<64xf32>)
// FP8: graph.linear
// GROUP: error: --quantize int4 --group-size 48: this linear's k = 64 is not a multiple of the group size
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

// -----

// Tests that AWQ's input_scale round-trips on both ops (one constant [k]),
// and its clip ratios ([n, k / group]) on the quantize_weight.
// INT4-LABEL: func.func @awq
// INT4: %[[F:.+]] = graph.constant dense<[1.000000e+00, 2.000000e+00, 5.000000e-01, 1.000000e+00]> : tensor<4xf32>
// INT4: %[[C:.+]] = graph.constant dense<{{\[}}[1.000000e+00], [8.500000e-01]]> : tensor<2x1xf32>
// INT4: graph.quantize_weight %{{.+}} input_scale(%[[F]]) clip(%[[C]]) {group_size = 4 : i64, scheme = "int4"}
// INT4: graph.quantized_linear %{{.+}}, %{{.+}}, %{{.+}} input_scale(%[[F]]) {group_size = 4 : i64, scheme = "int4"}
func.func @awq(%x: tensor<?x4xf32>) -> tensor<?x2xf32> {
  %w = graph.weight <w> : tensor<2x4xf32>
  %f = graph.constant dense<[1.0, 2.0, 0.5, 1.0]> : tensor<4xf32>
  %c = graph.constant dense<[[1.0], [0.85]]> : tensor<2x1xf32>
  %q, %s = graph.quantize_weight %w input_scale(%f) clip(%c) {scheme = "int4", group_size = 4 : i64} : (tensor<2x4xf32>, tensor<4xf32>, tensor<2x1xf32>) -> (tensor<2x2xui8>, tensor<2x1xf32>)
  %y = graph.quantized_linear %x, %q, %s input_scale(%f) {scheme = "int4", group_size = 4 : i64} : (tensor<?x4xf32>, tensor<2x2xui8>, tensor<2x1xf32>, tensor<4xf32>) -> tensor<?x2xf32>
  %head = graph.weight <head> : tensor<2x2xf32>
  %out = graph.linear %y, %head : (tensor<?x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
  return %out : tensor<?x2xf32>
}
