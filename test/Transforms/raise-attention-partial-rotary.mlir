// RUN: infer-opt --split-input-file --infer-raise-attention %s | FileCheck %s

// Tests that layer 0's attention of tiny-gpt-neox (imported, shapes folded,
// the fused QKV projection made an argument) is raised although its QKV is
// per-head interleaved ([b, s, h, q|k|v]) and only the first 8 of 16 dims of
// each head are rotated (rotary_pct = 0.5): Q, K and V are slices of the
// [b, s, 4, 48] view, Q and K get one partial rotary each (rotary_dim = 8) and
// the attention reads them token-major, with scale 0.5 * 0.5 = 1/sqrt(16).
// CHECK-LABEL: func.func @neox_attention
// CHECK-SAME: (%[[QKV:[^:]+]]: tensor<?x?x192xf32>
// CHECK: %[[HEADS:.+]] = graph.reshape %[[QKV]], %{{.+}} : (tensor<?x?x192xf32>, tensor<4xi64>) -> tensor<?x?x4x48xf32>
// CHECK: %[[QS:.+]] = graph.slice %[[HEADS]], {{.+}} -> tensor<?x?x4x16xf32>
// CHECK: %[[Q:.+]] = graph.reshape %[[QS]], {{.+}} -> tensor<?x?x64xf32>
// CHECK: %[[F:.+]] = graph.constant dense<[1.000000e+00, 1.000000e-01, 0.00999999977, 1.000000e-03]> : tensor<4xf32>
// CHECK: %[[QR:.+]] = graph.rotary %[[Q]], %[[F]] {head_dim = 16 : i64, num_heads = 4 : i64, rotary_dim = 8 : i64, rotated_heads = 4 : i64} : (tensor<?x?x64xf32>, tensor<4xf32>) -> tensor<?x?x64xf32>
// CHECK: %[[KS:.+]] = graph.slice %[[HEADS]], {{.+}} -> tensor<?x?x4x16xf32>
// CHECK: %[[K:.+]] = graph.reshape %[[KS]], {{.+}} -> tensor<?x?x64xf32>
// CHECK: %[[KR:.+]] = graph.rotary %[[K]], %{{.+}} {head_dim = 16 : i64, num_heads = 4 : i64, rotary_dim = 8 : i64, rotated_heads = 4 : i64}
// CHECK: %[[VS:.+]] = graph.slice %[[HEADS]], {{.+}} -> tensor<?x?x4x16xf32>
// CHECK: %[[V:.+]] = graph.reshape %[[VS]], {{.+}} -> tensor<?x?x64xf32>
// CHECK: %[[O:.+]] = graph.attention %[[QR]], %[[KR]], %[[V]] {causal = true, head_dim = 16 : i64, num_heads = 4 : i64, num_kv_heads = 4 : i64, scale = 2.500000e-01 : f32} : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
// CHECK-NEXT: return %[[O]]
// CHECK-NOT: graph.softmax
// CHECK-NOT: graph.concat
func.func @neox_attention(%qkv: tensor<?x?x192xf32> {graph.dims = ["batch", "seq", ""]}) -> tensor<?x?x64xf32> {
    %0 = graph.constant dense<[0, 0, 64]> : tensor<3xi64>
    %1 = graph.constant dense<16> : tensor<1xi64>
    %2 = graph.constant dense<[0, 0, 4, 48]> : tensor<4xi64>
    %3 = graph.constant dense<-3.40282347E+38> : tensor<f32>
    %4 = graph.constant dense<0.000000e+00> : tensor<f32>
    %5 = graph.constant dense<-9223372036854775808> : tensor<1xi64>
    %6 = graph.constant dense<-2> : tensor<1xi64>
    %7 = graph.constant dense<[0, 1]> : tensor<2xi64>
    %8 = graph.constant dense<[1, 2]> : tensor<2xi64>
    %9 = graph.constant dense<2> : tensor<1xi64>
    %10 = graph.constant dense<-1> : tensor<i64>
    %11 = graph.constant dense<5.000000e-01> : tensor<f32>
    %12 = graph.constant dense<4> : tensor<1xi64>
    %13 = graph.constant dense<9223372036854775807> : tensor<1xi64>
    %14 = graph.constant dense<3> : tensor<1xi64>
    %15 = graph.constant dense<8> : tensor<1xi64>
    %16 = graph.constant dense<[[[1.000000e+00], [1.000000e-01], [0.00999999977], [1.000000e-03]]]> : tensor<1x4x1xf32>
    %17 = graph.constant dense<true> : tensor<i1>
    %18 = graph.constant dense<-1> : tensor<1xi64>
    %19 = graph.constant dense<1> : tensor<1xi64>
    %20 = graph.constant dense<0> : tensor<1xi64>
    %21 = graph.constant dense<1> : tensor<i64>
    %22 = graph.constant dense<0> : tensor<i64>
    %51 = graph.shape %qkv {end = 1 : i64} : (tensor<?x?x192xf32>) -> tensor<1xi64>
    %52 = graph.squeeze %51 : (tensor<1xi64>) -> tensor<i64>
    %53 = graph.shape %qkv {end = 2 : i64, start = 1 : i64} : (tensor<?x?x192xf32>) -> tensor<1xi64>
    %54 = graph.squeeze %53 : (tensor<1xi64>) -> tensor<i64>
    %56 = graph.range %22, %54, %21 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
    %57 = graph.unsqueeze %56, %20 : (tensor<?xi64>, tensor<1xi64>) -> tensor<1x?xi64>
    %58 = graph.concat %51, %19 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %59 = graph.expand %57, %58 : (tensor<1x?xi64>, tensor<2xi64>) -> tensor<?x?xi64>
    %60 = graph.slice %59, %20, %19, %19, %19 : (tensor<?x?xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x1xi64>
    %61 = graph.sub %60, %21 : (tensor<?x1xi64>, tensor<i64>) -> tensor<?x1xi64>
    %62 = graph.concat %61, %59 {axis = 1 : i64} : (tensor<?x1xi64>, tensor<?x?xi64>) -> tensor<?x?xi64>
    %63 = graph.add %54, %21 : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %64 = graph.slice %62, %20, %53, %19, %19 : (tensor<?x?xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?xi64>
    %65 = graph.reshape %63, %18 : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
    %66 = graph.slice %62, %19, %65, %19, %19 : (tensor<?x?xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?xi64>
    %67 = graph.sub %66, %64 : (tensor<?x?xi64>, tensor<?x?xi64>) -> tensor<?x?xi64>
    %68 = graph.equal %67, %21 : (tensor<?x?xi64>, tensor<i64>) -> tensor<?x?xi1>
    %69 = graph.not %68 : (tensor<?x?xi1>) -> tensor<?x?xi1>
    %70 = graph.cast %69 : (tensor<?x?xi1>) -> tensor<?x?xi64>
    %71 = graph.cumsum %70, %10 : (tensor<?x?xi64>, tensor<i64>) -> tensor<?x?xi64>
    %72 = graph.range %22, %52, %21 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
    %73 = graph.unsqueeze %72, %8 : (tensor<?xi64>, tensor<2xi64>) -> tensor<?x1x1xi64>
    %74 = graph.unsqueeze %73, %14 : (tensor<?x1x1xi64>, tensor<1xi64>) -> tensor<?x1x1x1xi64>
    %75 = graph.unsqueeze %56, %7 : (tensor<?xi64>, tensor<2xi64>) -> tensor<1x1x?xi64>
    %76 = graph.unsqueeze %75, %14 : (tensor<1x1x?xi64>, tensor<1xi64>) -> tensor<1x1x?x1xi64>
    %77 = graph.unsqueeze %75, %9 : (tensor<1x1x?xi64>, tensor<1xi64>) -> tensor<1x1x1x?xi64>
    %78 = graph.less_or_equal %77, %76 : (tensor<1x1x1x?xi64>, tensor<1x1x?x1xi64>) -> tensor<1x1x?x?xi1>
    %79 = graph.and %78, %17 : (tensor<1x1x?x?xi1>, tensor<i1>) -> tensor<1x1x?x?xi1>
    %80 = graph.max %74, %76 : (tensor<?x1x1x1xi64>, tensor<1x1x?x1xi64>) -> tensor<?x1x?x1xi64>
    %81 = graph.shape %80 : (tensor<?x1x?x1xi64>) -> tensor<4xi64>
    %82 = graph.expand %74, %81 : (tensor<?x1x1x1xi64>, tensor<4xi64>) -> tensor<?x1x?x1xi64>
    %83 = graph.unsqueeze %82, %12 : (tensor<?x1x?x1xi64>, tensor<1xi64>) -> tensor<?x1x?x1x1xi64>
    %84 = graph.expand %76, %81 : (tensor<1x1x?x1xi64>, tensor<4xi64>) -> tensor<?x1x?x1xi64>
    %85 = graph.unsqueeze %84, %12 : (tensor<?x1x?x1xi64>, tensor<1xi64>) -> tensor<?x1x?x1x1xi64>
    %86 = graph.concat %83, %85 {axis = 4 : i64} : (tensor<?x1x?x1x1xi64>, tensor<?x1x?x1x1xi64>) -> tensor<?x1x?x1x2xi64>
    %87 = graph.gather_nd %71, %86 : (tensor<?x?xi64>, tensor<?x1x?x1x2xi64>) -> tensor<?x1x?x1xi64>
    %88 = graph.max %74, %77 : (tensor<?x1x1x1xi64>, tensor<1x1x1x?xi64>) -> tensor<?x1x1x?xi64>
    %89 = graph.shape %88 : (tensor<?x1x1x?xi64>) -> tensor<4xi64>
    %90 = graph.expand %74, %89 : (tensor<?x1x1x1xi64>, tensor<4xi64>) -> tensor<?x1x1x?xi64>
    %91 = graph.unsqueeze %90, %12 : (tensor<?x1x1x?xi64>, tensor<1xi64>) -> tensor<?x1x1x?x1xi64>
    %92 = graph.expand %77, %89 : (tensor<1x1x1x?xi64>, tensor<4xi64>) -> tensor<?x1x1x?xi64>
    %93 = graph.unsqueeze %92, %12 : (tensor<?x1x1x?xi64>, tensor<1xi64>) -> tensor<?x1x1x?x1xi64>
    %94 = graph.concat %91, %93 {axis = 4 : i64} : (tensor<?x1x1x?x1xi64>, tensor<?x1x1x?x1xi64>) -> tensor<?x1x1x?x2xi64>
    %95 = graph.gather_nd %71, %94 : (tensor<?x?xi64>, tensor<?x1x1x?x2xi64>) -> tensor<?x1x1x?xi64>
    %96 = graph.equal %87, %95 : (tensor<?x1x?x1xi64>, tensor<?x1x1x?xi64>) -> tensor<?x1x?x?xi1>
    %97 = graph.and %79, %96 : (tensor<1x1x?x?xi1>, tensor<?x1x?x?xi1>) -> tensor<?x1x?x?xi1>
    %98 = graph.unsqueeze %57, %19 : (tensor<1x?xi64>, tensor<1xi64>) -> tensor<1x1x?xi64>
    %99 = graph.cast %98 : (tensor<1x1x?xi64>) -> tensor<1x1x?xf32>
    %100 = graph.matmul %16, %99 : (tensor<1x4x1xf32>, tensor<1x1x?xf32>) -> tensor<1x4x?xf32>
    %101 = graph.transpose %100 {perm = array<i64: 0, 2, 1>} : (tensor<1x4x?xf32>) -> tensor<1x?x4xf32>
    %102 = graph.concat %101, %101 {axis = 2 : i64} : (tensor<1x?x4xf32>, tensor<1x?x4xf32>) -> tensor<1x?x8xf32>
    %103 = graph.cos %102 : (tensor<1x?x8xf32>) -> tensor<1x?x8xf32>
    %104 = graph.sin %102 : (tensor<1x?x8xf32>) -> tensor<1x?x8xf32>
    %107 = graph.reshape %qkv, %2 : (tensor<?x?x192xf32>, tensor<4xi64>) -> tensor<?x?x4x48xf32>
    %108 = graph.transpose %107 {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x?x4x48xf32>) -> tensor<?x4x?x48xf32>
    %109:3 = graph.split %108 {axis = 3 : i64} : (tensor<?x4x?x48xf32>) -> (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>)
    %110 = graph.unsqueeze %103, %19 : (tensor<1x?x8xf32>, tensor<1xi64>) -> tensor<1x1x?x8xf32>
    %111 = graph.unsqueeze %104, %19 : (tensor<1x?x8xf32>, tensor<1xi64>) -> tensor<1x1x?x8xf32>
    %112 = graph.slice %109#0, %20, %15, %14, %19 : (tensor<?x4x?x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x4x?x8xf32>
    %113 = graph.slice %109#0, %15, %13, %14, %19 : (tensor<?x4x?x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x4x?x8xf32>
    %114 = graph.slice %109#1, %20, %15, %14, %19 : (tensor<?x4x?x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x4x?x8xf32>
    %115 = graph.slice %109#1, %15, %13, %14, %19 : (tensor<?x4x?x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x4x?x8xf32>
    %116 = graph.mul %112, %110 : (tensor<?x4x?x8xf32>, tensor<1x1x?x8xf32>) -> tensor<?x4x?x8xf32>
    %117 = graph.slice %112, %20, %12, %14, %19 : (tensor<?x4x?x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x4x?x4xf32>
    %118 = graph.slice %112, %12, %13, %14, %19 : (tensor<?x4x?x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x4x?x4xf32>
    %119 = graph.neg %118 : (tensor<?x4x?x4xf32>) -> tensor<?x4x?x4xf32>
    %120 = graph.concat %119, %117 {axis = 3 : i64} : (tensor<?x4x?x4xf32>, tensor<?x4x?x4xf32>) -> tensor<?x4x?x8xf32>
    %121 = graph.mul %120, %111 : (tensor<?x4x?x8xf32>, tensor<1x1x?x8xf32>) -> tensor<?x4x?x8xf32>
    %122 = graph.add %116, %121 : (tensor<?x4x?x8xf32>, tensor<?x4x?x8xf32>) -> tensor<?x4x?x8xf32>
    %123 = graph.mul %114, %110 : (tensor<?x4x?x8xf32>, tensor<1x1x?x8xf32>) -> tensor<?x4x?x8xf32>
    %124 = graph.slice %114, %20, %12, %14, %19 : (tensor<?x4x?x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x4x?x4xf32>
    %125 = graph.slice %114, %12, %13, %14, %19 : (tensor<?x4x?x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x4x?x4xf32>
    %126 = graph.neg %125 : (tensor<?x4x?x4xf32>) -> tensor<?x4x?x4xf32>
    %127 = graph.concat %126, %124 {axis = 3 : i64} : (tensor<?x4x?x4xf32>, tensor<?x4x?x4xf32>) -> tensor<?x4x?x8xf32>
    %128 = graph.mul %127, %111 : (tensor<?x4x?x8xf32>, tensor<1x1x?x8xf32>) -> tensor<?x4x?x8xf32>
    %129 = graph.add %123, %128 : (tensor<?x4x?x8xf32>, tensor<?x4x?x8xf32>) -> tensor<?x4x?x8xf32>
    %130 = graph.concat %122, %113 {axis = 3 : i64} : (tensor<?x4x?x8xf32>, tensor<?x4x?x8xf32>) -> tensor<?x4x?x16xf32>
    %131 = graph.concat %129, %115 {axis = 3 : i64} : (tensor<?x4x?x8xf32>, tensor<?x4x?x8xf32>) -> tensor<?x4x?x16xf32>
    %132 = graph.shape %131 : (tensor<?x4x?x16xf32>) -> tensor<4xi64>
    %133 = graph.slice %132, %6, %18, %20, %19 : (tensor<4xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
    %134 = graph.slice %132, %5, %6, %20, %19 : (tensor<4xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %135 = graph.concat %18, %133, %1 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %136 = graph.reshape %131, %135 : (tensor<?x4x?x16xf32>, tensor<3xi64>) -> tensor<?x?x16xf32>
    %137 = graph.transpose %136 {perm = array<i64: 0, 2, 1>} : (tensor<?x?x16xf32>) -> tensor<?x16x?xf32>
    %138 = graph.concat %134, %1, %133 {axis = 0 : i64} : (tensor<2xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
    %139 = graph.reshape %137, %138 : (tensor<?x16x?xf32>, tensor<4xi64>) -> tensor<?x4x16x?xf32>
    %140 = graph.mul %130, %11 : (tensor<?x4x?x16xf32>, tensor<f32>) -> tensor<?x4x?x16xf32>
    %141 = graph.mul %139, %11 : (tensor<?x4x16x?xf32>, tensor<f32>) -> tensor<?x4x16x?xf32>
    %142 = graph.where %97, %4, %3 : (tensor<?x1x?x?xi1>, tensor<f32>, tensor<f32>) -> tensor<?x1x?x?xf32>
    %143 = graph.matmul %140, %141 : (tensor<?x4x?x16xf32>, tensor<?x4x16x?xf32>) -> tensor<?x4x?x?xf32>
    %144 = graph.add %143, %142 : (tensor<?x4x?x?xf32>, tensor<?x1x?x?xf32>) -> tensor<?x4x?x?xf32>
    %145 = graph.softmax %144 {axis = 3 : i64} : tensor<?x4x?x?xf32>
    %146 = graph.is_nan %145 : (tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xi1>
    %147 = graph.where %146, %4, %145 : (tensor<?x4x?x?xi1>, tensor<f32>, tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
    %148 = graph.matmul %147, %109#2 : (tensor<?x4x?x?xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32>
    %149 = graph.transpose %148 {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x4x?x16xf32>) -> tensor<?x?x4x16xf32>
    %150 = graph.reshape %149, %0 : (tensor<?x?x4x16xf32>, tensor<3xi64>) -> tensor<?x?x64xf32>
    return %150 : tensor<?x?x64xf32>
}

// -----

// Tests the partial rotary alone: concat(rope(q[..., :8]), q[..., 8:]) of
// GPT-NeoX's Q heads [b, 4, s, 16] becomes one graph.rotary with rotary_dim 8
// of the token-major Q slice, split back into heads.
// CHECK-LABEL: func.func @neox_partial_rotary
// CHECK-SAME: (%[[QKV:[^:]+]]: tensor<?x?x192xf32>
// CHECK: %[[HEADS:.+]] = graph.reshape %[[QKV]], %{{.+}} -> tensor<?x?x4x48xf32>
// CHECK: %[[QS:.+]] = graph.slice %[[HEADS]], {{.+}} -> tensor<?x?x4x16xf32>
// CHECK: %[[Q:.+]] = graph.reshape %[[QS]], {{.+}} -> tensor<?x?x64xf32>
// CHECK: %[[QR:.+]] = graph.rotary %[[Q]], %{{.+}} {head_dim = 16 : i64, num_heads = 4 : i64, rotary_dim = 8 : i64, rotated_heads = 4 : i64}
// CHECK: %[[R4:.+]] = graph.reshape %[[QR]], {{.+}} -> tensor<?x?x4x16xf32>
// CHECK: %[[R:.+]] = graph.transpose %[[R4]] {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x?x4x16xf32>) -> tensor<?x4x?x16xf32>
// CHECK-NEXT: return %[[R]]
func.func @neox_partial_rotary(%qkv: tensor<?x?x192xf32> {graph.dims = ["batch", "seq", ""]}) -> tensor<?x4x?x16xf32> {
    %0 = graph.constant dense<[0, 0, 64]> : tensor<3xi64>
    %1 = graph.constant dense<16> : tensor<1xi64>
    %2 = graph.constant dense<[0, 0, 4, 48]> : tensor<4xi64>
    %3 = graph.constant dense<-3.40282347E+38> : tensor<f32>
    %4 = graph.constant dense<0.000000e+00> : tensor<f32>
    %5 = graph.constant dense<-9223372036854775808> : tensor<1xi64>
    %6 = graph.constant dense<-2> : tensor<1xi64>
    %7 = graph.constant dense<[0, 1]> : tensor<2xi64>
    %8 = graph.constant dense<[1, 2]> : tensor<2xi64>
    %9 = graph.constant dense<2> : tensor<1xi64>
    %10 = graph.constant dense<-1> : tensor<i64>
    %11 = graph.constant dense<5.000000e-01> : tensor<f32>
    %12 = graph.constant dense<4> : tensor<1xi64>
    %13 = graph.constant dense<9223372036854775807> : tensor<1xi64>
    %14 = graph.constant dense<3> : tensor<1xi64>
    %15 = graph.constant dense<8> : tensor<1xi64>
    %16 = graph.constant dense<[[[1.000000e+00], [1.000000e-01], [0.00999999977], [1.000000e-03]]]> : tensor<1x4x1xf32>
    %17 = graph.constant dense<true> : tensor<i1>
    %18 = graph.constant dense<-1> : tensor<1xi64>
    %19 = graph.constant dense<1> : tensor<1xi64>
    %20 = graph.constant dense<0> : tensor<1xi64>
    %21 = graph.constant dense<1> : tensor<i64>
    %22 = graph.constant dense<0> : tensor<i64>
    %51 = graph.shape %qkv {end = 1 : i64} : (tensor<?x?x192xf32>) -> tensor<1xi64>
    %52 = graph.squeeze %51 : (tensor<1xi64>) -> tensor<i64>
    %53 = graph.shape %qkv {end = 2 : i64, start = 1 : i64} : (tensor<?x?x192xf32>) -> tensor<1xi64>
    %54 = graph.squeeze %53 : (tensor<1xi64>) -> tensor<i64>
    %56 = graph.range %22, %54, %21 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
    %57 = graph.unsqueeze %56, %20 : (tensor<?xi64>, tensor<1xi64>) -> tensor<1x?xi64>
    %58 = graph.concat %51, %19 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %59 = graph.expand %57, %58 : (tensor<1x?xi64>, tensor<2xi64>) -> tensor<?x?xi64>
    %60 = graph.slice %59, %20, %19, %19, %19 : (tensor<?x?xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x1xi64>
    %61 = graph.sub %60, %21 : (tensor<?x1xi64>, tensor<i64>) -> tensor<?x1xi64>
    %62 = graph.concat %61, %59 {axis = 1 : i64} : (tensor<?x1xi64>, tensor<?x?xi64>) -> tensor<?x?xi64>
    %63 = graph.add %54, %21 : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %64 = graph.slice %62, %20, %53, %19, %19 : (tensor<?x?xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?xi64>
    %65 = graph.reshape %63, %18 : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
    %66 = graph.slice %62, %19, %65, %19, %19 : (tensor<?x?xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?xi64>
    %67 = graph.sub %66, %64 : (tensor<?x?xi64>, tensor<?x?xi64>) -> tensor<?x?xi64>
    %68 = graph.equal %67, %21 : (tensor<?x?xi64>, tensor<i64>) -> tensor<?x?xi1>
    %69 = graph.not %68 : (tensor<?x?xi1>) -> tensor<?x?xi1>
    %70 = graph.cast %69 : (tensor<?x?xi1>) -> tensor<?x?xi64>
    %71 = graph.cumsum %70, %10 : (tensor<?x?xi64>, tensor<i64>) -> tensor<?x?xi64>
    %72 = graph.range %22, %52, %21 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
    %73 = graph.unsqueeze %72, %8 : (tensor<?xi64>, tensor<2xi64>) -> tensor<?x1x1xi64>
    %74 = graph.unsqueeze %73, %14 : (tensor<?x1x1xi64>, tensor<1xi64>) -> tensor<?x1x1x1xi64>
    %75 = graph.unsqueeze %56, %7 : (tensor<?xi64>, tensor<2xi64>) -> tensor<1x1x?xi64>
    %76 = graph.unsqueeze %75, %14 : (tensor<1x1x?xi64>, tensor<1xi64>) -> tensor<1x1x?x1xi64>
    %77 = graph.unsqueeze %75, %9 : (tensor<1x1x?xi64>, tensor<1xi64>) -> tensor<1x1x1x?xi64>
    %78 = graph.less_or_equal %77, %76 : (tensor<1x1x1x?xi64>, tensor<1x1x?x1xi64>) -> tensor<1x1x?x?xi1>
    %79 = graph.and %78, %17 : (tensor<1x1x?x?xi1>, tensor<i1>) -> tensor<1x1x?x?xi1>
    %80 = graph.max %74, %76 : (tensor<?x1x1x1xi64>, tensor<1x1x?x1xi64>) -> tensor<?x1x?x1xi64>
    %81 = graph.shape %80 : (tensor<?x1x?x1xi64>) -> tensor<4xi64>
    %82 = graph.expand %74, %81 : (tensor<?x1x1x1xi64>, tensor<4xi64>) -> tensor<?x1x?x1xi64>
    %83 = graph.unsqueeze %82, %12 : (tensor<?x1x?x1xi64>, tensor<1xi64>) -> tensor<?x1x?x1x1xi64>
    %84 = graph.expand %76, %81 : (tensor<1x1x?x1xi64>, tensor<4xi64>) -> tensor<?x1x?x1xi64>
    %85 = graph.unsqueeze %84, %12 : (tensor<?x1x?x1xi64>, tensor<1xi64>) -> tensor<?x1x?x1x1xi64>
    %86 = graph.concat %83, %85 {axis = 4 : i64} : (tensor<?x1x?x1x1xi64>, tensor<?x1x?x1x1xi64>) -> tensor<?x1x?x1x2xi64>
    %87 = graph.gather_nd %71, %86 : (tensor<?x?xi64>, tensor<?x1x?x1x2xi64>) -> tensor<?x1x?x1xi64>
    %88 = graph.max %74, %77 : (tensor<?x1x1x1xi64>, tensor<1x1x1x?xi64>) -> tensor<?x1x1x?xi64>
    %89 = graph.shape %88 : (tensor<?x1x1x?xi64>) -> tensor<4xi64>
    %90 = graph.expand %74, %89 : (tensor<?x1x1x1xi64>, tensor<4xi64>) -> tensor<?x1x1x?xi64>
    %91 = graph.unsqueeze %90, %12 : (tensor<?x1x1x?xi64>, tensor<1xi64>) -> tensor<?x1x1x?x1xi64>
    %92 = graph.expand %77, %89 : (tensor<1x1x1x?xi64>, tensor<4xi64>) -> tensor<?x1x1x?xi64>
    %93 = graph.unsqueeze %92, %12 : (tensor<?x1x1x?xi64>, tensor<1xi64>) -> tensor<?x1x1x?x1xi64>
    %94 = graph.concat %91, %93 {axis = 4 : i64} : (tensor<?x1x1x?x1xi64>, tensor<?x1x1x?x1xi64>) -> tensor<?x1x1x?x2xi64>
    %95 = graph.gather_nd %71, %94 : (tensor<?x?xi64>, tensor<?x1x1x?x2xi64>) -> tensor<?x1x1x?xi64>
    %96 = graph.equal %87, %95 : (tensor<?x1x?x1xi64>, tensor<?x1x1x?xi64>) -> tensor<?x1x?x?xi1>
    %97 = graph.and %79, %96 : (tensor<1x1x?x?xi1>, tensor<?x1x?x?xi1>) -> tensor<?x1x?x?xi1>
    %98 = graph.unsqueeze %57, %19 : (tensor<1x?xi64>, tensor<1xi64>) -> tensor<1x1x?xi64>
    %99 = graph.cast %98 : (tensor<1x1x?xi64>) -> tensor<1x1x?xf32>
    %100 = graph.matmul %16, %99 : (tensor<1x4x1xf32>, tensor<1x1x?xf32>) -> tensor<1x4x?xf32>
    %101 = graph.transpose %100 {perm = array<i64: 0, 2, 1>} : (tensor<1x4x?xf32>) -> tensor<1x?x4xf32>
    %102 = graph.concat %101, %101 {axis = 2 : i64} : (tensor<1x?x4xf32>, tensor<1x?x4xf32>) -> tensor<1x?x8xf32>
    %103 = graph.cos %102 : (tensor<1x?x8xf32>) -> tensor<1x?x8xf32>
    %104 = graph.sin %102 : (tensor<1x?x8xf32>) -> tensor<1x?x8xf32>
    %107 = graph.reshape %qkv, %2 : (tensor<?x?x192xf32>, tensor<4xi64>) -> tensor<?x?x4x48xf32>
    %108 = graph.transpose %107 {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x?x4x48xf32>) -> tensor<?x4x?x48xf32>
    %109:3 = graph.split %108 {axis = 3 : i64} : (tensor<?x4x?x48xf32>) -> (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>)
    %110 = graph.unsqueeze %103, %19 : (tensor<1x?x8xf32>, tensor<1xi64>) -> tensor<1x1x?x8xf32>
    %111 = graph.unsqueeze %104, %19 : (tensor<1x?x8xf32>, tensor<1xi64>) -> tensor<1x1x?x8xf32>
    %112 = graph.slice %109#0, %20, %15, %14, %19 : (tensor<?x4x?x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x4x?x8xf32>
    %113 = graph.slice %109#0, %15, %13, %14, %19 : (tensor<?x4x?x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x4x?x8xf32>
    %114 = graph.slice %109#1, %20, %15, %14, %19 : (tensor<?x4x?x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x4x?x8xf32>
    %115 = graph.slice %109#1, %15, %13, %14, %19 : (tensor<?x4x?x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x4x?x8xf32>
    %116 = graph.mul %112, %110 : (tensor<?x4x?x8xf32>, tensor<1x1x?x8xf32>) -> tensor<?x4x?x8xf32>
    %117 = graph.slice %112, %20, %12, %14, %19 : (tensor<?x4x?x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x4x?x4xf32>
    %118 = graph.slice %112, %12, %13, %14, %19 : (tensor<?x4x?x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x4x?x4xf32>
    %119 = graph.neg %118 : (tensor<?x4x?x4xf32>) -> tensor<?x4x?x4xf32>
    %120 = graph.concat %119, %117 {axis = 3 : i64} : (tensor<?x4x?x4xf32>, tensor<?x4x?x4xf32>) -> tensor<?x4x?x8xf32>
    %121 = graph.mul %120, %111 : (tensor<?x4x?x8xf32>, tensor<1x1x?x8xf32>) -> tensor<?x4x?x8xf32>
    %122 = graph.add %116, %121 : (tensor<?x4x?x8xf32>, tensor<?x4x?x8xf32>) -> tensor<?x4x?x8xf32>
    %123 = graph.mul %114, %110 : (tensor<?x4x?x8xf32>, tensor<1x1x?x8xf32>) -> tensor<?x4x?x8xf32>
    %124 = graph.slice %114, %20, %12, %14, %19 : (tensor<?x4x?x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x4x?x4xf32>
    %125 = graph.slice %114, %12, %13, %14, %19 : (tensor<?x4x?x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x4x?x4xf32>
    %126 = graph.neg %125 : (tensor<?x4x?x4xf32>) -> tensor<?x4x?x4xf32>
    %127 = graph.concat %126, %124 {axis = 3 : i64} : (tensor<?x4x?x4xf32>, tensor<?x4x?x4xf32>) -> tensor<?x4x?x8xf32>
    %128 = graph.mul %127, %111 : (tensor<?x4x?x8xf32>, tensor<1x1x?x8xf32>) -> tensor<?x4x?x8xf32>
    %129 = graph.add %123, %128 : (tensor<?x4x?x8xf32>, tensor<?x4x?x8xf32>) -> tensor<?x4x?x8xf32>
    %130 = graph.concat %122, %113 {axis = 3 : i64} : (tensor<?x4x?x8xf32>, tensor<?x4x?x8xf32>) -> tensor<?x4x?x16xf32>
    %131 = graph.concat %129, %115 {axis = 3 : i64} : (tensor<?x4x?x8xf32>, tensor<?x4x?x8xf32>) -> tensor<?x4x?x16xf32>
    return %130 : tensor<?x4x?x16xf32>
}

// -----

// Tests a concat that is not a partial rotary (the rotated part is
// q[..., 8:], the same dims as the pass-through): the proof rejects it and the
// concat stays; only the rope of the 8-dim slice itself is raised.
// CHECK-LABEL: func.func @not_partial_rotary
// CHECK: %[[R:.+]] = graph.rotary %{{.+}} {head_dim = 8 : i64, num_heads = 4 : i64, rotary_dim = 8 : i64, rotated_heads = 4 : i64}
// CHECK: %[[C:.+]] = graph.concat %{{.+}}, %{{.+}} {axis = 3 : i64} : (tensor<?x4x?x8xf32>, tensor<?x4x?x8xf32>) -> tensor<?x4x?x16xf32>
// CHECK-NEXT: return %[[C]]
func.func @not_partial_rotary(%qkv: tensor<?x?x192xf32> {graph.dims = ["batch", "seq", ""]}) -> tensor<?x4x?x16xf32> {
    %0 = graph.constant dense<[0, 0, 64]> : tensor<3xi64>
    %1 = graph.constant dense<16> : tensor<1xi64>
    %2 = graph.constant dense<[0, 0, 4, 48]> : tensor<4xi64>
    %3 = graph.constant dense<-3.40282347E+38> : tensor<f32>
    %4 = graph.constant dense<0.000000e+00> : tensor<f32>
    %5 = graph.constant dense<-9223372036854775808> : tensor<1xi64>
    %6 = graph.constant dense<-2> : tensor<1xi64>
    %7 = graph.constant dense<[0, 1]> : tensor<2xi64>
    %8 = graph.constant dense<[1, 2]> : tensor<2xi64>
    %9 = graph.constant dense<2> : tensor<1xi64>
    %10 = graph.constant dense<-1> : tensor<i64>
    %11 = graph.constant dense<5.000000e-01> : tensor<f32>
    %12 = graph.constant dense<4> : tensor<1xi64>
    %13 = graph.constant dense<9223372036854775807> : tensor<1xi64>
    %14 = graph.constant dense<3> : tensor<1xi64>
    %15 = graph.constant dense<8> : tensor<1xi64>
    %16 = graph.constant dense<[[[1.000000e+00], [1.000000e-01], [0.00999999977], [1.000000e-03]]]> : tensor<1x4x1xf32>
    %17 = graph.constant dense<true> : tensor<i1>
    %18 = graph.constant dense<-1> : tensor<1xi64>
    %19 = graph.constant dense<1> : tensor<1xi64>
    %20 = graph.constant dense<0> : tensor<1xi64>
    %21 = graph.constant dense<1> : tensor<i64>
    %22 = graph.constant dense<0> : tensor<i64>
    %51 = graph.shape %qkv {end = 1 : i64} : (tensor<?x?x192xf32>) -> tensor<1xi64>
    %52 = graph.squeeze %51 : (tensor<1xi64>) -> tensor<i64>
    %53 = graph.shape %qkv {end = 2 : i64, start = 1 : i64} : (tensor<?x?x192xf32>) -> tensor<1xi64>
    %54 = graph.squeeze %53 : (tensor<1xi64>) -> tensor<i64>
    %56 = graph.range %22, %54, %21 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
    %57 = graph.unsqueeze %56, %20 : (tensor<?xi64>, tensor<1xi64>) -> tensor<1x?xi64>
    %58 = graph.concat %51, %19 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %59 = graph.expand %57, %58 : (tensor<1x?xi64>, tensor<2xi64>) -> tensor<?x?xi64>
    %60 = graph.slice %59, %20, %19, %19, %19 : (tensor<?x?xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x1xi64>
    %61 = graph.sub %60, %21 : (tensor<?x1xi64>, tensor<i64>) -> tensor<?x1xi64>
    %62 = graph.concat %61, %59 {axis = 1 : i64} : (tensor<?x1xi64>, tensor<?x?xi64>) -> tensor<?x?xi64>
    %63 = graph.add %54, %21 : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %64 = graph.slice %62, %20, %53, %19, %19 : (tensor<?x?xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?xi64>
    %65 = graph.reshape %63, %18 : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
    %66 = graph.slice %62, %19, %65, %19, %19 : (tensor<?x?xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?xi64>
    %67 = graph.sub %66, %64 : (tensor<?x?xi64>, tensor<?x?xi64>) -> tensor<?x?xi64>
    %68 = graph.equal %67, %21 : (tensor<?x?xi64>, tensor<i64>) -> tensor<?x?xi1>
    %69 = graph.not %68 : (tensor<?x?xi1>) -> tensor<?x?xi1>
    %70 = graph.cast %69 : (tensor<?x?xi1>) -> tensor<?x?xi64>
    %71 = graph.cumsum %70, %10 : (tensor<?x?xi64>, tensor<i64>) -> tensor<?x?xi64>
    %72 = graph.range %22, %52, %21 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
    %73 = graph.unsqueeze %72, %8 : (tensor<?xi64>, tensor<2xi64>) -> tensor<?x1x1xi64>
    %74 = graph.unsqueeze %73, %14 : (tensor<?x1x1xi64>, tensor<1xi64>) -> tensor<?x1x1x1xi64>
    %75 = graph.unsqueeze %56, %7 : (tensor<?xi64>, tensor<2xi64>) -> tensor<1x1x?xi64>
    %76 = graph.unsqueeze %75, %14 : (tensor<1x1x?xi64>, tensor<1xi64>) -> tensor<1x1x?x1xi64>
    %77 = graph.unsqueeze %75, %9 : (tensor<1x1x?xi64>, tensor<1xi64>) -> tensor<1x1x1x?xi64>
    %78 = graph.less_or_equal %77, %76 : (tensor<1x1x1x?xi64>, tensor<1x1x?x1xi64>) -> tensor<1x1x?x?xi1>
    %79 = graph.and %78, %17 : (tensor<1x1x?x?xi1>, tensor<i1>) -> tensor<1x1x?x?xi1>
    %80 = graph.max %74, %76 : (tensor<?x1x1x1xi64>, tensor<1x1x?x1xi64>) -> tensor<?x1x?x1xi64>
    %81 = graph.shape %80 : (tensor<?x1x?x1xi64>) -> tensor<4xi64>
    %82 = graph.expand %74, %81 : (tensor<?x1x1x1xi64>, tensor<4xi64>) -> tensor<?x1x?x1xi64>
    %83 = graph.unsqueeze %82, %12 : (tensor<?x1x?x1xi64>, tensor<1xi64>) -> tensor<?x1x?x1x1xi64>
    %84 = graph.expand %76, %81 : (tensor<1x1x?x1xi64>, tensor<4xi64>) -> tensor<?x1x?x1xi64>
    %85 = graph.unsqueeze %84, %12 : (tensor<?x1x?x1xi64>, tensor<1xi64>) -> tensor<?x1x?x1x1xi64>
    %86 = graph.concat %83, %85 {axis = 4 : i64} : (tensor<?x1x?x1x1xi64>, tensor<?x1x?x1x1xi64>) -> tensor<?x1x?x1x2xi64>
    %87 = graph.gather_nd %71, %86 : (tensor<?x?xi64>, tensor<?x1x?x1x2xi64>) -> tensor<?x1x?x1xi64>
    %88 = graph.max %74, %77 : (tensor<?x1x1x1xi64>, tensor<1x1x1x?xi64>) -> tensor<?x1x1x?xi64>
    %89 = graph.shape %88 : (tensor<?x1x1x?xi64>) -> tensor<4xi64>
    %90 = graph.expand %74, %89 : (tensor<?x1x1x1xi64>, tensor<4xi64>) -> tensor<?x1x1x?xi64>
    %91 = graph.unsqueeze %90, %12 : (tensor<?x1x1x?xi64>, tensor<1xi64>) -> tensor<?x1x1x?x1xi64>
    %92 = graph.expand %77, %89 : (tensor<1x1x1x?xi64>, tensor<4xi64>) -> tensor<?x1x1x?xi64>
    %93 = graph.unsqueeze %92, %12 : (tensor<?x1x1x?xi64>, tensor<1xi64>) -> tensor<?x1x1x?x1xi64>
    %94 = graph.concat %91, %93 {axis = 4 : i64} : (tensor<?x1x1x?x1xi64>, tensor<?x1x1x?x1xi64>) -> tensor<?x1x1x?x2xi64>
    %95 = graph.gather_nd %71, %94 : (tensor<?x?xi64>, tensor<?x1x1x?x2xi64>) -> tensor<?x1x1x?xi64>
    %96 = graph.equal %87, %95 : (tensor<?x1x?x1xi64>, tensor<?x1x1x?xi64>) -> tensor<?x1x?x?xi1>
    %97 = graph.and %79, %96 : (tensor<1x1x?x?xi1>, tensor<?x1x?x?xi1>) -> tensor<?x1x?x?xi1>
    %98 = graph.unsqueeze %57, %19 : (tensor<1x?xi64>, tensor<1xi64>) -> tensor<1x1x?xi64>
    %99 = graph.cast %98 : (tensor<1x1x?xi64>) -> tensor<1x1x?xf32>
    %100 = graph.matmul %16, %99 : (tensor<1x4x1xf32>, tensor<1x1x?xf32>) -> tensor<1x4x?xf32>
    %101 = graph.transpose %100 {perm = array<i64: 0, 2, 1>} : (tensor<1x4x?xf32>) -> tensor<1x?x4xf32>
    %102 = graph.concat %101, %101 {axis = 2 : i64} : (tensor<1x?x4xf32>, tensor<1x?x4xf32>) -> tensor<1x?x8xf32>
    %103 = graph.cos %102 : (tensor<1x?x8xf32>) -> tensor<1x?x8xf32>
    %104 = graph.sin %102 : (tensor<1x?x8xf32>) -> tensor<1x?x8xf32>
    %107 = graph.reshape %qkv, %2 : (tensor<?x?x192xf32>, tensor<4xi64>) -> tensor<?x?x4x48xf32>
    %108 = graph.transpose %107 {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x?x4x48xf32>) -> tensor<?x4x?x48xf32>
    %109:3 = graph.split %108 {axis = 3 : i64} : (tensor<?x4x?x48xf32>) -> (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>)
    %110 = graph.unsqueeze %103, %19 : (tensor<1x?x8xf32>, tensor<1xi64>) -> tensor<1x1x?x8xf32>
    %111 = graph.unsqueeze %104, %19 : (tensor<1x?x8xf32>, tensor<1xi64>) -> tensor<1x1x?x8xf32>
    %112 = graph.slice %109#0, %15, %13, %14, %19 : (tensor<?x4x?x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x4x?x8xf32>
    %113 = graph.slice %109#0, %15, %13, %14, %19 : (tensor<?x4x?x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x4x?x8xf32>
    %114 = graph.slice %109#1, %20, %15, %14, %19 : (tensor<?x4x?x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x4x?x8xf32>
    %115 = graph.slice %109#1, %15, %13, %14, %19 : (tensor<?x4x?x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x4x?x8xf32>
    %116 = graph.mul %112, %110 : (tensor<?x4x?x8xf32>, tensor<1x1x?x8xf32>) -> tensor<?x4x?x8xf32>
    %117 = graph.slice %112, %20, %12, %14, %19 : (tensor<?x4x?x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x4x?x4xf32>
    %118 = graph.slice %112, %12, %13, %14, %19 : (tensor<?x4x?x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x4x?x4xf32>
    %119 = graph.neg %118 : (tensor<?x4x?x4xf32>) -> tensor<?x4x?x4xf32>
    %120 = graph.concat %119, %117 {axis = 3 : i64} : (tensor<?x4x?x4xf32>, tensor<?x4x?x4xf32>) -> tensor<?x4x?x8xf32>
    %121 = graph.mul %120, %111 : (tensor<?x4x?x8xf32>, tensor<1x1x?x8xf32>) -> tensor<?x4x?x8xf32>
    %122 = graph.add %116, %121 : (tensor<?x4x?x8xf32>, tensor<?x4x?x8xf32>) -> tensor<?x4x?x8xf32>
    %123 = graph.mul %114, %110 : (tensor<?x4x?x8xf32>, tensor<1x1x?x8xf32>) -> tensor<?x4x?x8xf32>
    %124 = graph.slice %114, %20, %12, %14, %19 : (tensor<?x4x?x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x4x?x4xf32>
    %125 = graph.slice %114, %12, %13, %14, %19 : (tensor<?x4x?x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x4x?x4xf32>
    %126 = graph.neg %125 : (tensor<?x4x?x4xf32>) -> tensor<?x4x?x4xf32>
    %127 = graph.concat %126, %124 {axis = 3 : i64} : (tensor<?x4x?x4xf32>, tensor<?x4x?x4xf32>) -> tensor<?x4x?x8xf32>
    %128 = graph.mul %127, %111 : (tensor<?x4x?x8xf32>, tensor<1x1x?x8xf32>) -> tensor<?x4x?x8xf32>
    %129 = graph.add %123, %128 : (tensor<?x4x?x8xf32>, tensor<?x4x?x8xf32>) -> tensor<?x4x?x8xf32>
    %130 = graph.concat %122, %113 {axis = 3 : i64} : (tensor<?x4x?x8xf32>, tensor<?x4x?x8xf32>) -> tensor<?x4x?x16xf32>
    %131 = graph.concat %129, %115 {axis = 3 : i64} : (tensor<?x4x?x8xf32>, tensor<?x4x?x8xf32>) -> tensor<?x4x?x16xf32>
    return %130 : tensor<?x4x?x16xf32>
}
