// RUN: infer-opt --split-input-file --infer-group-elementwise %s | FileCheck %s

// Tests that a chain of elementwise ops, each used once, becomes one fusion group
// with the scalar constant cloned inside and the tensors as operands.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[X:.+]]: tensor<?x8xf32>, %[[Y:.+]]: tensor<?x8xf32>)
// CHECK: %[[G:.+]] = graph.fusion_group %[[X]], %[[Y]] : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32> {
// CHECK-NEXT: ^bb0(%[[A:.+]]: tensor<?x8xf32>, %[[B:.+]]: tensor<?x8xf32>):
// CHECK-NEXT: %[[S:.+]] = graph.add %[[A]], %[[B]]
// CHECK-NEXT: %[[C:.+]] = graph.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT: %[[M:.+]] = graph.mul %[[S]], %[[C]]
// CHECK-NEXT: %[[R:.+]] = graph.relu %[[M]]
// CHECK-NEXT: graph.yield %[[R]] : tensor<?x8xf32>
// CHECK: return %[[G]]
func.func @chain(%x: tensor<?x8xf32>, %y: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %half = graph.constant dense<0.5> : tensor<f32>
  %s = graph.add %x, %y : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %m = graph.mul %s, %half : (tensor<?x8xf32>, tensor<f32>) -> tensor<?x8xf32>
  %r = graph.relu %m : (tensor<?x8xf32>) -> tensor<?x8xf32>
  return %r : tensor<?x8xf32>
}

// -----

// Tests that a reduction feeding an elementwise op joins its group.
// CHECK-LABEL: func.func @reduction
// CHECK: graph.fusion_group
// CHECK: graph.reduce_mean
// CHECK: graph.sub
// CHECK: graph.yield
// CHECK-NOT: graph.fusion_group
func.func @reduction(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %axes = graph.constant dense<1> : tensor<1xi64>
  %mean = graph.reduce_mean %x axes(%axes) : (tensor<?x8xf32>, tensor<1xi64>) -> tensor<?x1xf32>
  %d = graph.sub %x, %mean : (tensor<?x8xf32>, tensor<?x1xf32>) -> tensor<?x8xf32>
  return %d : tensor<?x8xf32>
}

// -----

// Tests that a value with two users is not absorbed (groups stay trees, so
// each stays convex): the shared exp is its own group, read by two others.
// CHECK-LABEL: func.func @shared
// CHECK: %[[E:.+]] = graph.fusion_group
// CHECK: graph.exp
// CHECK: %[[N:.+]] = graph.fusion_group %[[E]]
// CHECK: graph.neg
// CHECK: %[[T:.+]] = graph.fusion_group %[[E]]
// CHECK: graph.tanh
// CHECK: return %[[N]], %[[T]]
func.func @shared(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = graph.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %n = graph.neg %e : (tensor<4xf32>) -> tensor<4xf32>
  %t = graph.tanh %e : (tensor<4xf32>) -> tensor<4xf32>
  return %n, %t : tensor<4xf32>, tensor<4xf32>
}

// -----

// Tests that integer shape arithmetic and fused ops are left alone.
// CHECK-LABEL: func.func @not_elementwise
// CHECK-NOT: graph.fusion_group
// CHECK: graph.add {{.*}} -> tensor<2xi64>
// CHECK: graph.linear
func.func @not_elementwise(%s: tensor<2xi64>, %x: tensor<?x4xf32>, %w: tensor<4x4xf32>) -> (tensor<2xi64>, tensor<?x4xf32>) {
  %one = graph.constant dense<1> : tensor<i64>
  %t = graph.add %s, %one : (tensor<2xi64>, tensor<i64>) -> tensor<2xi64>
  %y = graph.linear %x, %w : (tensor<?x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
  return %t, %y : tensor<2xi64>, tensor<?x4xf32>
}
