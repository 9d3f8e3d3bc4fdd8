// RUN: infer-opt --split-input-file --infer-raise-mlp %s | FileCheck %s
//
// The TorchScript exporter writes the erf GELU as (x * (1 + erf(x / sqrt 2)))
// * 0.5, with the 0.5 applied last.

// Tests that the erf GELU in the TorchScript exporter's order,
// Mul(Mul(x, Add(Erf(Div(x, sqrt 2)), 1)), 0.5), becomes graph.gelu.
// CHECK-LABEL: func.func @decomposed_gelu_erf_half_last
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x256xf32>)
// CHECK: %[[Y:.+]] = graph.gelu %[[X]] : (tensor<?x?x256xf32>) -> tensor<?x?x256xf32>
// CHECK-NEXT: return %[[Y]]
func.func @decomposed_gelu_erf_half_last(%x: tensor<?x?x256xf32>) -> tensor<?x?x256xf32> {
  %sqrt2 = graph.constant dense<1.41421354> : tensor<f32>
  %one = graph.constant dense<1.000000e+00> : tensor<f32>
  %half = graph.constant dense<5.000000e-01> : tensor<f32>
  %d = graph.div %x, %sqrt2 : (tensor<?x?x256xf32>, tensor<f32>) -> tensor<?x?x256xf32>
  %e = graph.erf %d : (tensor<?x?x256xf32>) -> tensor<?x?x256xf32>
  %a = graph.add %e, %one : (tensor<?x?x256xf32>, tensor<f32>) -> tensor<?x?x256xf32>
  %m = graph.mul %x, %a : (tensor<?x?x256xf32>, tensor<?x?x256xf32>) -> tensor<?x?x256xf32>
  %y = graph.mul %m, %half : (tensor<?x?x256xf32>, tensor<f32>) -> tensor<?x?x256xf32>
  return %y : tensor<?x?x256xf32>
}
