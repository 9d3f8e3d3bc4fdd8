// RUN: infer-opt --infer-raise-attention %s | FileCheck %s

// Tests that attention whose values are narrower than its queries and keys
// (DeepSeek-V3's MLA: v 128 of qk 192 a head; here 4 of 8, 2 heads) is raised:
// v's heads are widened to 8 features (each head's own 4 twice) for the
// attention, whose output keeps each head's first 4 features.
// CHECK-LABEL: func.func @narrow_values
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<?x?x16xf32> {{.*}}, %[[K:[^:]+]]: tensor<?x?x16xf32> {{.*}}, %[[V:[^:]+]]: tensor<?x?x8xf32>
// CHECK: %[[VW:.+]] = graph.gather_features %[[V]] {map = array<i64: 0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 6, 7, 4, 5, 6, 7>} : (tensor<?x?x8xf32>) -> tensor<?x?x16xf32>
// CHECK: %[[O:.+]] = graph.attention %[[Q]], %[[K]], %[[VW]] {causal = false, head_dim = 8 : i64, num_heads = 2 : i64, num_kv_heads = 2 : i64, scale = 5.000000e-01 : f32} : (tensor<?x?x16xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
// CHECK: %[[ON:.+]] = graph.gather_features %[[O]] {map = array<i64: 0, 1, 2, 3, 8, 9, 10, 11>} : (tensor<?x?x16xf32>) -> tensor<?x?x8xf32>
// CHECK-NEXT: return %[[ON]]
// CHECK-NOT: graph.softmax
func.func @narrow_values(%q: tensor<?x?x16xf32> {graph.dims = ["batch", "seq", ""]}, %k: tensor<?x?x16xf32> {graph.dims = ["batch", "seq", ""]}, %v: tensor<?x?x8xf32> {graph.dims = ["batch", "seq", ""]}) -> tensor<?x?x8xf32> {
    %qk_shape = graph.constant dense<[0, 0, 2, 8]> : tensor<4xi64>
    %v_shape = graph.constant dense<[0, 0, 2, 4]> : tensor<4xi64>
    %out_shape = graph.constant dense<[0, 0, 8]> : tensor<3xi64>
    %scale = graph.constant dense<5.000000e-01> : tensor<f32>
    %q4 = graph.reshape %q, %qk_shape : (tensor<?x?x16xf32>, tensor<4xi64>) -> tensor<?x?x2x8xf32>
    %qh = graph.transpose %q4 {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x?x2x8xf32>) -> tensor<?x2x?x8xf32>
    %k4 = graph.reshape %k, %qk_shape : (tensor<?x?x16xf32>, tensor<4xi64>) -> tensor<?x?x2x8xf32>
    %kt = graph.transpose %k4 {perm = array<i64: 0, 2, 3, 1>} : (tensor<?x?x2x8xf32>) -> tensor<?x2x8x?xf32>
    %v4 = graph.reshape %v, %v_shape : (tensor<?x?x8xf32>, tensor<4xi64>) -> tensor<?x?x2x4xf32>
    %vh = graph.transpose %v4 {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x?x2x4xf32>) -> tensor<?x2x?x4xf32>
    %s = graph.matmul %qh, %kt : (tensor<?x2x?x8xf32>, tensor<?x2x8x?xf32>) -> tensor<?x2x?x?xf32>
    %ss = graph.mul %s, %scale : (tensor<?x2x?x?xf32>, tensor<f32>) -> tensor<?x2x?x?xf32>
    %p = graph.softmax %ss {axis = 3 : i64} : tensor<?x2x?x?xf32>
    %o = graph.matmul %p, %vh : (tensor<?x2x?x?xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
    %ot = graph.transpose %o {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x2x?x4xf32>) -> tensor<?x?x2x4xf32>
    %r = graph.reshape %ot, %out_shape : (tensor<?x?x2x4xf32>, tensor<3xi64>) -> tensor<?x?x8xf32>
    return %r : tensor<?x?x8xf32>
}
