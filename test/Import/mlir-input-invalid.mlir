// RUN: not infer-compile %s --emit=graph 2>&1 | FileCheck %s

// Tests that an .mlir input that fails the graph verifiers is rejected with the verifier's message.
// CHECK: mlir-input-invalid.mlir:[[@LINE+3]]:{{[0-9]+}}: error: 'graph.add' op operands must have the same element type, got 'f32' and 'i64'
// CHECK-NOT: func.func
func.func @main(%x: tensor<4xf32>, %y: tensor<4xi64>) -> tensor<4xf32> {
  %0 = graph.add %x, %y : (tensor<4xf32>, tensor<4xi64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
