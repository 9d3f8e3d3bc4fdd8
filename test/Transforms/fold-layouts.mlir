// RUN: infer-opt --split-input-file --infer-fold-shapes --cse %s | FileCheck %s

// GPT-BigCode's fused QKV (MQA): unsqueeze, split of the last axis, then the
// heads' reshapes and transposes. The parts become a split of the projection
// itself and every reshape chain around them cancels.
// CHECK-LABEL: func.func @bigcode_qkv
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x96xf32> {{.*}})
// CHECK: %[[P:.+]]:3 = graph.split %[[X]] split(%{{.+}}) {axis = 2 : i64} : (tensor<?x?x96xf32>, tensor<3xi64>) -> (tensor<?x?x64xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32>)
// CHECK-NOT: graph.reshape
// CHECK-NOT: graph.transpose
// CHECK-NOT: graph.unsqueeze
// CHECK: return %[[P]]#0, %[[P]]#1 : tensor<?x?x64xf32>, tensor<?x?x16xf32>
func.func @bigcode_qkv(%x: tensor<?x?x96xf32> {graph.dims = ["batch", "seq", ""]}) -> (tensor<?x?x64xf32>, tensor<?x?x16xf32>) {
  %a1 = graph.constant dense<1> : tensor<1xi64>
  %sizes = graph.constant dense<[64, 16, 16]> : tensor<3xi64>
  %qs = graph.constant dense<[0, -1, 4, 16]> : tensor<4xi64>
  %qt = graph.constant dense<[0, 0, 64]> : tensor<3xi64>
  %kt = graph.constant dense<[0, 0, 16]> : tensor<3xi64>
  %u = graph.unsqueeze %x, %a1 : (tensor<?x?x96xf32>, tensor<1xi64>) -> tensor<?x1x?x96xf32>
  %p:3 = graph.split %u split(%sizes) {axis = 3 : i64} : (tensor<?x1x?x96xf32>, tensor<3xi64>) -> (tensor<?x1x?x64xf32>, tensor<?x1x?x16xf32>, tensor<?x1x?x16xf32>)
  %q4 = graph.reshape %p#0, %qs : (tensor<?x1x?x64xf32>, tensor<4xi64>) -> tensor<?x?x4x16xf32>
  %q = graph.reshape %q4, %qt : (tensor<?x?x4x16xf32>, tensor<3xi64>) -> tensor<?x?x64xf32>
  %k4 = graph.transpose %p#1 {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x1x?x16xf32>) -> tensor<?x?x1x16xf32>
  %k = graph.reshape %k4, %kt : (tensor<?x?x1x16xf32>, tensor<3xi64>) -> tensor<?x?x16xf32>
  return %q, %k : tensor<?x?x64xf32>, tensor<?x?x16xf32>
}

// -----

// Falcon-7B's fused QKV: [b, s, 6, 16] heads; q = heads 0..3 by a slice, k =
// head 4 by gather_nd after a transpose. Both become slices of the
// projection's features (0..64 and 64..80).
// CHECK-LABEL: func.func @falcon_qkv
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x96xf32> {{.*}})
// CHECK-DAG: %[[C0:.+]] = graph.constant dense<0> : tensor<1xi64>
// CHECK-DAG: %[[C64:.+]] = graph.constant dense<64> : tensor<1xi64>
// CHECK-DAG: %[[C80:.+]] = graph.constant dense<80> : tensor<1xi64>
// CHECK-DAG: %[[Q:.+]] = graph.slice %[[X]], %[[C0]], %[[C64]], %{{.+}}, %{{.+}} : {{.*}} -> tensor<?x?x64xf32>
// CHECK-DAG: %[[K:.+]] = graph.slice %[[X]], %[[C64]], %[[C80]], %{{.+}}, %{{.+}} : {{.*}} -> tensor<?x?x16xf32>
// CHECK-NOT: graph.gather_nd
// CHECK-NOT: graph.transpose
// CHECK: return %[[Q]], %[[K]]
func.func @falcon_qkv(%x: tensor<?x?x96xf32> {graph.dims = ["batch", "seq", ""]}) -> (tensor<?x?x64xf32>, tensor<?x?x16xf32>) {
  %hs = graph.constant dense<[0, 0, 6, 16]> : tensor<4xi64>
  %c0 = graph.constant dense<0> : tensor<1xi64>
  %c4 = graph.constant dense<4> : tensor<1xi64>
  %c2 = graph.constant dense<2> : tensor<1xi64>
  %c1 = graph.constant dense<1> : tensor<1xi64>
  %idx = graph.constant dense<[[-2]]> : tensor<1x1xi64>
  %qt = graph.constant dense<[0, 0, 64]> : tensor<3xi64>
  %kt = graph.constant dense<[0, 0, 16]> : tensor<3xi64>
  %kb = graph.constant dense<[-1, 1, 0, 16]> : tensor<4xi64>
  %h = graph.reshape %x, %hs : (tensor<?x?x96xf32>, tensor<4xi64>) -> tensor<?x?x6x16xf32>
  %q4 = graph.slice %h, %c0, %c4, %c2, %c1 : (tensor<?x?x6x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x4x16xf32>
  %q = graph.reshape %q4, %qt : (tensor<?x?x4x16xf32>, tensor<3xi64>) -> tensor<?x?x64xf32>
  %t = graph.transpose %h {perm = array<i64: 2, 0, 1, 3>} : (tensor<?x?x6x16xf32>) -> tensor<6x?x?x16xf32>
  %g = graph.gather_nd %t, %idx : (tensor<6x?x?x16xf32>, tensor<1x1xi64>) -> tensor<1x?x?x16xf32>
  %kh = graph.reshape %g, %kb : (tensor<1x?x?x16xf32>, tensor<4xi64>) -> tensor<?x1x?x16xf32>
  %kT = graph.transpose %kh {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x1x?x16xf32>) -> tensor<?x?x1x16xf32>
  %k = graph.reshape %kT, %kt : (tensor<?x?x1x16xf32>, tensor<3xi64>) -> tensor<?x?x16xf32>
  return %q, %k : tensor<?x?x64xf32>, tensor<?x?x16xf32>
}

// -----

// A transpose that reorders non-unit dims is not an order-keeping reshape, and
// a slice of it on the moved axis stays (rotate_half's slices of the heads).
// CHECK-LABEL: func.func @real_transpose
// CHECK: graph.transpose
// CHECK: graph.slice
func.func @real_transpose(%x: tensor<?x?x4x16xf32> {graph.dims = ["batch", "seq", "", ""]}) -> tensor<?x4x?x8xf32> {
  %c0 = graph.constant dense<0> : tensor<1xi64>
  %c8 = graph.constant dense<8> : tensor<1xi64>
  %c3 = graph.constant dense<3> : tensor<1xi64>
  %c1 = graph.constant dense<1> : tensor<1xi64>
  %t = graph.transpose %x {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x?x4x16xf32>) -> tensor<?x4x?x16xf32>
  %s = graph.slice %t, %c0, %c8, %c3, %c1 : (tensor<?x4x?x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x4x?x8xf32>
  return %s : tensor<?x4x?x8xf32>
}
