
// Tests that graph.rms_norm round-trips with its default and a Gemma-style weight offset.
// CHECK-LABEL: func.func @rms_norm
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x64xf32>, %[[W:.+]]: tensor<64xf32>)
// CHECK: graph.rms_norm %[[X]], %[[W]] {epsilon = 9.99999997E-7 : f32} : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
// CHECK: graph.rms_norm %[[X]], %[[W]] {epsilon = 9.99999997E-7 : f32, weight_offset = 1.000000e+00 : f32}
func.func @rms_norm(%x: tensor<?x?x64xf32>, %w: tensor<64xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x64xf32>) {
  %0 = graph.rms_norm %x, %w {epsilon = 1.0e-06 : f32} : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  %1 = graph.rms_norm %x, %w {epsilon = 1.0e-06 : f32, weight_offset = 1.0 : f32}
      : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  return %0, %1 : tensor<?x?x64xf32>, tensor<?x?x64xf32>
}
