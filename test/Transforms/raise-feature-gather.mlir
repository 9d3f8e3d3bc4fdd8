// RUN: infer-opt --split-input-file --infer-raise-feature-gather %s | FileCheck %s

// Tests MLA's key: each head's 8 own features, then one 4-feature rotary key
// shared by both heads (expanded), back to token-major: one gather_features
// of the two token-major inputs, its map read by evaluation.
// CHECK-LABEL: func.func @mla_key
// CHECK-SAME: (%[[KV:.+]]: tensor<?x?x16xf32>{{.*}}, %[[ROT:.+]]: tensor<?x?x4xf32>
// CHECK: %[[K:.+]] = graph.gather_features %[[KV]], %[[ROT]] {map = array<i64: 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19>}
// CHECK-NEXT: return %[[K]]
func.func @mla_key(%kv: tensor<?x?x16xf32> {graph.dims = ["batch", "seq", ""]}, %rot: tensor<?x?x4xf32> {graph.dims = ["batch", "seq", ""]}) -> tensor<?x?x24xf32> {
  %c0 = graph.constant dense<[0, 0, 2, 8]> : tensor<4xi64>
  %kh = graph.reshape %kv, %c0 : (tensor<?x?x16xf32>, tensor<4xi64>) -> tensor<?x?x2x8xf32>
  %kt = graph.transpose %kh {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x?x2x8xf32>) -> tensor<?x2x?x8xf32>
  %c1 = graph.constant dense<[0, 1, -1, 4]> : tensor<4xi64>
  %pe = graph.reshape %rot, %c1 : (tensor<?x?x4xf32>, tensor<4xi64>) -> tensor<?x1x?x4xf32>
  %c2 = graph.constant dense<[1, 2, 1, 1]> : tensor<4xi64>
  %pex = graph.expand %pe, %c2 : (tensor<?x1x?x4xf32>, tensor<4xi64>) -> tensor<?x2x?x4xf32>
  %k4 = graph.concat %kt, %pex {axis = 3 : i64} : (tensor<?x2x?x8xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x12xf32>
  %k3 = graph.transpose %k4 {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x2x?x12xf32>) -> tensor<?x?x2x12xf32>
  %c3 = graph.constant dense<[0, 0, 24]> : tensor<3xi64>
  %k = graph.reshape %k3, %c3 : (tensor<?x?x2x12xf32>, tensor<3xi64>) -> tensor<?x?x24xf32>
  return %k : tensor<?x?x24xf32>
}

// -----

// Tests that a reshape and a row slice (what the exec lowering copies as
// they are) stay, and that movement across tokens (a transpose of batch and
// seq) is not a gather: its proof fails.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: graph.gather_features
// CHECK: graph.slice
// CHECK: graph.transpose
func.func @left_alone(%x: tensor<?x?x16xf32> {graph.dims = ["batch", "seq", ""]}) -> (tensor<?x?x8xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32>) {
  %c0 = graph.constant dense<[0, 0, 2, 8]> : tensor<4xi64>
  %h = graph.reshape %x, %c0 : (tensor<?x?x16xf32>, tensor<4xi64>) -> tensor<?x?x2x8xf32>
  %s0 = graph.constant dense<0> : tensor<1xi64>
  %s4 = graph.constant dense<4> : tensor<1xi64>
  %ax = graph.constant dense<3> : tensor<1xi64>
  %st = graph.constant dense<1> : tensor<1xi64>
  %part = graph.slice %h, %s0, %s4, %ax, %st : (tensor<?x?x2x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x2x4xf32>
  %c1 = graph.constant dense<[0, 0, 8]> : tensor<3xi64>
  %flat = graph.reshape %part, %c1 : (tensor<?x?x2x4xf32>, tensor<3xi64>) -> tensor<?x?x8xf32>
  %c2 = graph.constant dense<[0, 0, 16]> : tensor<3xi64>
  %back = graph.reshape %h, %c2 : (tensor<?x?x2x8xf32>, tensor<3xi64>) -> tensor<?x?x16xf32>
  %swap = graph.transpose %x {perm = array<i64: 1, 0, 2>} : (tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  return %flat, %back, %swap : tensor<?x?x8xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32>
}
