// RUN: infer-opt --split-input-file --infer-fuse-horizontal %s | FileCheck %s

// Tests tiny-phi3's attention block after raising: one qkv_proj linear sliced
// into Q, K, V, a rotary on the Q and K slices. The attention reads the packed
// projection and one rotary rotates its 4 + 4 Q and K heads.
// CHECK-LABEL: func.func @phi3_qkv_slices
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x64xf32>)
// CHECK: %[[F:.+]] = graph.constant dense<{{.+}}> : tensor<8xf32>
// CHECK: %[[W:.+]] = graph.weight <qkv_proj> : tensor<64x192xf32>
// CHECK: %[[QKV:.+]] = graph.linear %[[X]], %[[W]] : (tensor<?x?x64xf32>, tensor<64x192xf32>) -> tensor<?x?x192xf32>
// CHECK-NOT: graph.slice
// CHECK: %[[R:.+]] = graph.rotary %[[QKV]], %[[F]] {head_dim = 16 : i64, num_heads = 12 : i64, rotary_dim = 16 : i64, rotated_heads = 8 : i64} : (tensor<?x?x192xf32>, tensor<8xf32>) -> tensor<?x?x192xf32>
// CHECK: %[[O:.+]] = graph.attention %[[R]] {causal = true, head_dim = 16 : i64, num_heads = 4 : i64, num_kv_heads = 4 : i64, scale = 2.500000e-01 : f32} : (tensor<?x?x192xf32>) -> tensor<?x?x64xf32>
// CHECK-NEXT: return %[[O]]
func.func @phi3_qkv_slices(%x: tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
  %0 = graph.constant dense<[1.000000e+00, 0.316227764, 1.000000e-01, 0.0316227786, 0.00999999977, 0.00316227786, 1.000000e-03, 3.16227786E-4]> : tensor<8xf32>
  %1 = graph.constant dense<9223372036854775807> : tensor<1xi64>
  %2 = graph.constant dense<128> : tensor<1xi64>
  %3 = graph.constant dense<2> : tensor<1xi64>
  %4 = graph.constant dense<64> : tensor<1xi64>
  %5 = graph.constant dense<1> : tensor<1xi64>
  %6 = graph.constant dense<0> : tensor<1xi64>
  %w = graph.weight <qkv_proj> : tensor<64x192xf32>
  %24 = graph.linear %x, %w : (tensor<?x?x64xf32>, tensor<64x192xf32>) -> tensor<?x?x192xf32>
  %25 = graph.slice %24, %6, %4, %3, %5 : (tensor<?x?x192xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x64xf32>
  %26 = graph.slice %24, %4, %2, %3, %5 : (tensor<?x?x192xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x64xf32>
  %27 = graph.slice %24, %2, %1, %3, %5 : (tensor<?x?x192xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x64xf32>
  %28 = graph.rotary %25, %0 {head_dim = 16 : i64, num_heads = 4 : i64, rotary_dim = 16 : i64, rotated_heads = 4 : i64} : (tensor<?x?x64xf32>, tensor<8xf32>) -> tensor<?x?x64xf32>
  %29 = graph.rotary %26, %0 {head_dim = 16 : i64, num_heads = 4 : i64, rotary_dim = 16 : i64, rotated_heads = 4 : i64} : (tensor<?x?x64xf32>, tensor<8xf32>) -> tensor<?x?x64xf32>
  %30 = graph.attention %28, %29, %27 {causal = true, head_dim = 16 : i64, num_heads = 4 : i64, num_kv_heads = 4 : i64, scale = 2.500000e-01 : f32} : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  return %30 : tensor<?x?x64xf32>
}

// -----

// Tests tiny-phi3's MLP after raising: the gate_up_proj linear split into two
// halves feeds the gated activation, which then reads the packed projection.
// CHECK-LABEL: func.func @phi3_gate_up_split
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x64xf32>)
// CHECK: %[[GU:.+]] = graph.linear %[[X]], %{{.+}} : (tensor<?x?x64xf32>, tensor<64x320xf32>) -> tensor<?x?x320xf32>
// CHECK-NOT: graph.split
// CHECK: %[[H:.+]] = graph.gated_activation %[[GU]] {activation = "silu"} : (tensor<?x?x320xf32>) -> tensor<?x?x160xf32>
// CHECK-NEXT: return %[[H]]
func.func @phi3_gate_up_split(%x: tensor<?x?x64xf32>) -> tensor<?x?x160xf32> {
  %w = graph.weight <gate_up_proj> : tensor<64x320xf32>
  %33 = graph.linear %x, %w : (tensor<?x?x64xf32>, tensor<64x320xf32>) -> tensor<?x?x320xf32>
  %34:2 = graph.split %33 {axis = 2 : i64} : (tensor<?x?x320xf32>) -> (tensor<?x?x160xf32>, tensor<?x?x160xf32>)
  %35 = graph.gated_activation %34#0, %34#1 {activation = "silu"} : (tensor<?x?x160xf32>, tensor<?x?x160xf32>) -> tensor<?x?x160xf32>
  return %35 : tensor<?x?x160xf32>
}

// -----

// Tests gate and up as slices of one tensor (the exporter's other spelling of
// the same split).
// CHECK-LABEL: func.func @gate_up_slices
// CHECK-SAME: (%[[GU:.+]]: tensor<?x?x320xf32>)
// CHECK-NOT: graph.slice
// CHECK: %[[H:.+]] = graph.gated_activation %[[GU]] {activation = "silu"} : (tensor<?x?x320xf32>) -> tensor<?x?x160xf32>
// CHECK-NEXT: return %[[H]]
func.func @gate_up_slices(%gu: tensor<?x?x320xf32>) -> tensor<?x?x160xf32> {
  %zero = graph.constant dense<0> : tensor<1xi64>
  %half = graph.constant dense<160> : tensor<1xi64>
  %end = graph.constant dense<320> : tensor<1xi64>
  %axis = graph.constant dense<-1> : tensor<1xi64>
  %one = graph.constant dense<1> : tensor<1xi64>
  %g = graph.slice %gu, %zero, %half, %axis, %one : (tensor<?x?x320xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x160xf32>
  %u = graph.slice %gu, %half, %end, %axis, %one : (tensor<?x?x320xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x160xf32>
  %h = graph.gated_activation %g, %u {activation = "silu"} : (tensor<?x?x160xf32>, tensor<?x?x160xf32>) -> tensor<?x?x160xf32>
  return %h : tensor<?x?x160xf32>
}

// -----

// Tests slices that are not Q, K, V in order (K is read before Q): the
// attention keeps its three operands.
// CHECK-LABEL: func.func @qkv_slices_out_of_order
// CHECK: graph.slice
// CHECK: graph.attention %{{.+}}, %{{.+}}, %{{.+}} {
func.func @qkv_slices_out_of_order(%qkv: tensor<?x?x192xf32>) -> tensor<?x?x64xf32> {
  %end = graph.constant dense<9223372036854775807> : tensor<1xi64>
  %c128 = graph.constant dense<128> : tensor<1xi64>
  %axis = graph.constant dense<2> : tensor<1xi64>
  %c64 = graph.constant dense<64> : tensor<1xi64>
  %one = graph.constant dense<1> : tensor<1xi64>
  %zero = graph.constant dense<0> : tensor<1xi64>
  %a = graph.slice %qkv, %zero, %c64, %axis, %one : (tensor<?x?x192xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x64xf32>
  %b = graph.slice %qkv, %c64, %c128, %axis, %one : (tensor<?x?x192xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x64xf32>
  %c = graph.slice %qkv, %c128, %end, %axis, %one : (tensor<?x?x192xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x64xf32>
  %o = graph.attention %b, %a, %c {causal = true, head_dim = 16 : i64, num_heads = 4 : i64, num_kv_heads = 4 : i64, scale = 2.500000e-01 : f32} : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  return %o : tensor<?x?x64xf32>
}
