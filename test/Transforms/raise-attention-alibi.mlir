// RUN: infer-opt --split-input-file --infer-raise-attention %s | FileCheck %s

// ALiBi masks (BLOOM's build_alibi_tensor: slope_h * j on the visible keys,
// -inf elsewhere) on tiny-llama's layer 0 attention (raise-attention.mlir's
// first case). The bias is read from the mask's values: 4 heads' slopes 2^-2,
// 2^-4, 2^-6, 2^-8 times 0.5 become `alibi = 0.5`.
// CHECK-LABEL: func.func @alibi_half
// CHECK: graph.attention {{.*}} {alibi = 5.000000e-01 : f32, causal = true, head_dim = 16 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 2.500000e-01 : f32}
// CHECK-NOT: graph.softmax
func.func @alibi_half(%q: tensor<?x?x64xf32> {graph.dims = ["batch", "seq", ""]}, %k: tensor<?x?x32xf32> {graph.dims = ["batch", "seq", ""]}, %v: tensor<?x?x32xf32> {graph.dims = ["batch", "seq", ""]}) -> tensor<?x?x64xf32> {
    %0 = graph.constant dense<[0, 0, 64]> : tensor<3xi64>
    %1 = graph.constant dense<16> : tensor<1xi64>
    %2 = graph.constant dense<[0, 4, -1, 16]> : tensor<4xi64>
    %3 = graph.constant dense<[1, 1, 2, 1, 1]> : tensor<5xi64>
    %4 = graph.constant dense<[0, 0, 2, 16]> : tensor<4xi64>
    %5 = graph.constant dense<[0, 0, 4, 16]> : tensor<4xi64>
    %6 = graph.constant dense<-3.40282347E+38> : tensor<f32>
    %7 = graph.constant dense<0.000000e+00> : tensor<f32>
    %8 = graph.constant dense<-9223372036854775808> : tensor<1xi64>
    %9 = graph.constant dense<-2> : tensor<1xi64>
    %10 = graph.constant dense<4> : tensor<1xi64>
    %11 = graph.constant dense<[0, 1]> : tensor<2xi64>
    %12 = graph.constant dense<[1, 2]> : tensor<2xi64>
    %13 = graph.constant dense<2> : tensor<1xi64>
    %14 = graph.constant dense<-1> : tensor<i64>
    %15 = graph.constant dense<5.000000e-01> : tensor<f32>
    %16 = graph.constant dense<9223372036854775807> : tensor<1xi64>
    %17 = graph.constant dense<3> : tensor<1xi64>
    %18 = graph.constant dense<8> : tensor<1xi64>
    %19 = graph.constant dense<[[[1.000000e+00], [0.316227764], [1.000000e-01], [0.0316227786], [0.00999999977], [0.00316227786], [1.000000e-03], [3.16227786E-4]]]> : tensor<1x8x1xf32>
    %20 = graph.constant dense<true> : tensor<i1>
    %21 = graph.constant dense<-1> : tensor<1xi64>
    %22 = graph.constant dense<1> : tensor<1xi64>
    %23 = graph.constant dense<0> : tensor<1xi64>
    %24 = graph.constant dense<1> : tensor<i64>
    %25 = graph.constant dense<0> : tensor<i64>
    %47 = graph.shape %q {end = 1 : i64} : (tensor<?x?x64xf32>) -> tensor<1xi64>
    %48 = graph.squeeze %47 : (tensor<1xi64>) -> tensor<i64>
    %49 = graph.shape %q {end = 2 : i64, start = 1 : i64} : (tensor<?x?x64xf32>) -> tensor<1xi64>
    %50 = graph.squeeze %49 : (tensor<1xi64>) -> tensor<i64>
    %52 = graph.range %25, %50, %24 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
    %53 = graph.unsqueeze %52, %23 : (tensor<?xi64>, tensor<1xi64>) -> tensor<1x?xi64>
    %54 = graph.concat %47, %22 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %55 = graph.expand %53, %54 : (tensor<1x?xi64>, tensor<2xi64>) -> tensor<?x?xi64>
    %56 = graph.slice %55, %23, %22, %22, %22 : (tensor<?x?xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x1xi64>
    %57 = graph.sub %56, %24 : (tensor<?x1xi64>, tensor<i64>) -> tensor<?x1xi64>
    %58 = graph.concat %57, %55 {axis = 1 : i64} : (tensor<?x1xi64>, tensor<?x?xi64>) -> tensor<?x?xi64>
    %59 = graph.add %50, %24 : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %60 = graph.slice %58, %23, %49, %22, %22 : (tensor<?x?xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?xi64>
    %61 = graph.reshape %59, %21 : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
    %62 = graph.slice %58, %22, %61, %22, %22 : (tensor<?x?xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?xi64>
    %63 = graph.sub %62, %60 : (tensor<?x?xi64>, tensor<?x?xi64>) -> tensor<?x?xi64>
    %64 = graph.equal %63, %24 : (tensor<?x?xi64>, tensor<i64>) -> tensor<?x?xi1>
    %65 = graph.not %64 : (tensor<?x?xi1>) -> tensor<?x?xi1>
    %66 = graph.cast %65 : (tensor<?x?xi1>) -> tensor<?x?xi64>
    %67 = graph.cumsum %66, %14 : (tensor<?x?xi64>, tensor<i64>) -> tensor<?x?xi64>
    %68 = graph.range %25, %48, %24 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
    %69 = graph.unsqueeze %68, %12 : (tensor<?xi64>, tensor<2xi64>) -> tensor<?x1x1xi64>
    %70 = graph.unsqueeze %69, %17 : (tensor<?x1x1xi64>, tensor<1xi64>) -> tensor<?x1x1x1xi64>
    %71 = graph.unsqueeze %52, %11 : (tensor<?xi64>, tensor<2xi64>) -> tensor<1x1x?xi64>
    %72 = graph.unsqueeze %71, %17 : (tensor<1x1x?xi64>, tensor<1xi64>) -> tensor<1x1x?x1xi64>
    %73 = graph.unsqueeze %71, %13 : (tensor<1x1x?xi64>, tensor<1xi64>) -> tensor<1x1x1x?xi64>
    %74 = graph.less_or_equal %73, %72 : (tensor<1x1x1x?xi64>, tensor<1x1x?x1xi64>) -> tensor<1x1x?x?xi1>
    %75 = graph.and %74, %20 : (tensor<1x1x?x?xi1>, tensor<i1>) -> tensor<1x1x?x?xi1>
    %76 = graph.max %70, %72 : (tensor<?x1x1x1xi64>, tensor<1x1x?x1xi64>) -> tensor<?x1x?x1xi64>
    %77 = graph.shape %76 : (tensor<?x1x?x1xi64>) -> tensor<4xi64>
    %78 = graph.expand %70, %77 : (tensor<?x1x1x1xi64>, tensor<4xi64>) -> tensor<?x1x?x1xi64>
    %79 = graph.unsqueeze %78, %10 : (tensor<?x1x?x1xi64>, tensor<1xi64>) -> tensor<?x1x?x1x1xi64>
    %80 = graph.expand %72, %77 : (tensor<1x1x?x1xi64>, tensor<4xi64>) -> tensor<?x1x?x1xi64>
    %81 = graph.unsqueeze %80, %10 : (tensor<?x1x?x1xi64>, tensor<1xi64>) -> tensor<?x1x?x1x1xi64>
    %82 = graph.concat %79, %81 {axis = 4 : i64} : (tensor<?x1x?x1x1xi64>, tensor<?x1x?x1x1xi64>) -> tensor<?x1x?x1x2xi64>
    %83 = graph.gather_nd %67, %82 : (tensor<?x?xi64>, tensor<?x1x?x1x2xi64>) -> tensor<?x1x?x1xi64>
    %84 = graph.max %70, %73 : (tensor<?x1x1x1xi64>, tensor<1x1x1x?xi64>) -> tensor<?x1x1x?xi64>
    %85 = graph.shape %84 : (tensor<?x1x1x?xi64>) -> tensor<4xi64>
    %86 = graph.expand %70, %85 : (tensor<?x1x1x1xi64>, tensor<4xi64>) -> tensor<?x1x1x?xi64>
    %87 = graph.unsqueeze %86, %10 : (tensor<?x1x1x?xi64>, tensor<1xi64>) -> tensor<?x1x1x?x1xi64>
    %88 = graph.expand %73, %85 : (tensor<1x1x1x?xi64>, tensor<4xi64>) -> tensor<?x1x1x?xi64>
    %89 = graph.unsqueeze %88, %10 : (tensor<?x1x1x?xi64>, tensor<1xi64>) -> tensor<?x1x1x?x1xi64>
    %90 = graph.concat %87, %89 {axis = 4 : i64} : (tensor<?x1x1x?x1xi64>, tensor<?x1x1x?x1xi64>) -> tensor<?x1x1x?x2xi64>
    %91 = graph.gather_nd %67, %90 : (tensor<?x?xi64>, tensor<?x1x1x?x2xi64>) -> tensor<?x1x1x?xi64>
    %92 = graph.equal %83, %91 : (tensor<?x1x?x1xi64>, tensor<?x1x1x?xi64>) -> tensor<?x1x?x?xi1>
    %93 = graph.and %75, %92 : (tensor<1x1x?x?xi1>, tensor<?x1x?x?xi1>) -> tensor<?x1x?x?xi1>
    %94 = graph.unsqueeze %53, %22 : (tensor<1x?xi64>, tensor<1xi64>) -> tensor<1x1x?xi64>
    %95 = graph.cast %94 : (tensor<1x1x?xi64>) -> tensor<1x1x?xf32>
    %96 = graph.matmul %19, %95 : (tensor<1x8x1xf32>, tensor<1x1x?xf32>) -> tensor<1x8x?xf32>
    %97 = graph.transpose %96 {perm = array<i64: 0, 2, 1>} : (tensor<1x8x?xf32>) -> tensor<1x?x8xf32>
    %98 = graph.concat %97, %97 {axis = 2 : i64} : (tensor<1x?x8xf32>, tensor<1x?x8xf32>) -> tensor<1x?x16xf32>
    %99 = graph.cos %98 : (tensor<1x?x16xf32>) -> tensor<1x?x16xf32>
    %100 = graph.sin %98 : (tensor<1x?x16xf32>) -> tensor<1x?x16xf32>
    %103 = graph.reshape %q, %5 : (tensor<?x?x64xf32>, tensor<4xi64>) -> tensor<?x?x4x16xf32>
    %104 = graph.transpose %103 {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x?x4x16xf32>) -> tensor<?x4x?x16xf32>
    %106 = graph.reshape %k, %4 : (tensor<?x?x32xf32>, tensor<4xi64>) -> tensor<?x?x2x16xf32>
    %107 = graph.transpose %106 {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x?x2x16xf32>) -> tensor<?x2x?x16xf32>
    %109 = graph.reshape %v, %4 : (tensor<?x?x32xf32>, tensor<4xi64>) -> tensor<?x?x2x16xf32>
    %110 = graph.transpose %109 {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x?x2x16xf32>) -> tensor<?x2x?x16xf32>
    %111 = graph.unsqueeze %99, %22 : (tensor<1x?x16xf32>, tensor<1xi64>) -> tensor<1x1x?x16xf32>
    %112 = graph.unsqueeze %100, %22 : (tensor<1x?x16xf32>, tensor<1xi64>) -> tensor<1x1x?x16xf32>
    %113 = graph.mul %104, %111 : (tensor<?x4x?x16xf32>, tensor<1x1x?x16xf32>) -> tensor<?x4x?x16xf32>
    %114 = graph.slice %104, %23, %18, %17, %22 : (tensor<?x4x?x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x4x?x8xf32>
    %115 = graph.slice %104, %18, %16, %17, %22 : (tensor<?x4x?x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x4x?x8xf32>
    %116 = graph.neg %115 : (tensor<?x4x?x8xf32>) -> tensor<?x4x?x8xf32>
    %117 = graph.concat %116, %114 {axis = 3 : i64} : (tensor<?x4x?x8xf32>, tensor<?x4x?x8xf32>) -> tensor<?x4x?x16xf32>
    %118 = graph.mul %117, %112 : (tensor<?x4x?x16xf32>, tensor<1x1x?x16xf32>) -> tensor<?x4x?x16xf32>
    %119 = graph.add %113, %118 : (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32>
    %120 = graph.mul %107, %111 : (tensor<?x2x?x16xf32>, tensor<1x1x?x16xf32>) -> tensor<?x2x?x16xf32>
    %121 = graph.slice %107, %23, %18, %17, %22 : (tensor<?x2x?x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2x?x8xf32>
    %122 = graph.slice %107, %18, %16, %17, %22 : (tensor<?x2x?x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2x?x8xf32>
    %123 = graph.neg %122 : (tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32>
    %124 = graph.concat %123, %121 {axis = 3 : i64} : (tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>) -> tensor<?x2x?x16xf32>
    %125 = graph.mul %124, %112 : (tensor<?x2x?x16xf32>, tensor<1x1x?x16xf32>) -> tensor<?x2x?x16xf32>
    %126 = graph.add %120, %125 : (tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) -> tensor<?x2x?x16xf32>
    %127 = graph.unsqueeze %126, %13 : (tensor<?x2x?x16xf32>, tensor<1xi64>) -> tensor<?x2x1x?x16xf32>
    %128 = graph.expand %127, %3 : (tensor<?x2x1x?x16xf32>, tensor<5xi64>) -> tensor<?x2x2x?x16xf32>
    %129 = graph.reshape %128, %2 : (tensor<?x2x2x?x16xf32>, tensor<4xi64>) -> tensor<?x4x?x16xf32>
    %130 = graph.unsqueeze %110, %13 : (tensor<?x2x?x16xf32>, tensor<1xi64>) -> tensor<?x2x1x?x16xf32>
    %131 = graph.expand %130, %3 : (tensor<?x2x1x?x16xf32>, tensor<5xi64>) -> tensor<?x2x2x?x16xf32>
    %132 = graph.reshape %131, %2 : (tensor<?x2x2x?x16xf32>, tensor<4xi64>) -> tensor<?x4x?x16xf32>
    %133 = graph.shape %129 : (tensor<?x4x?x16xf32>) -> tensor<4xi64>
    %134 = graph.slice %133, %9, %21, %23, %22 : (tensor<4xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
    %135 = graph.slice %133, %8, %9, %23, %22 : (tensor<4xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %136 = graph.concat %21, %134, %1 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %137 = graph.reshape %129, %136 : (tensor<?x4x?x16xf32>, tensor<3xi64>) -> tensor<?x?x16xf32>
    %138 = graph.transpose %137 {perm = array<i64: 0, 2, 1>} : (tensor<?x?x16xf32>) -> tensor<?x16x?xf32>
    %139 = graph.concat %135, %1, %134 {axis = 0 : i64} : (tensor<2xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
    %140 = graph.reshape %138, %139 : (tensor<?x16x?xf32>, tensor<4xi64>) -> tensor<?x4x16x?xf32>
    %141 = graph.mul %119, %15 : (tensor<?x4x?x16xf32>, tensor<f32>) -> tensor<?x4x?x16xf32>
    %142 = graph.mul %140, %15 : (tensor<?x4x16x?xf32>, tensor<f32>) -> tensor<?x4x16x?xf32>
    %jf = graph.cast %73 : (tensor<1x1x1x?xi64>) -> tensor<1x1x1x?xf32>
    %slopes = graph.constant dense<[[[[0.125]], [[0.03125]], [[0.0078125]], [[0.001953125]]]]> : tensor<1x4x1x1xf32>
    %bias = graph.mul %jf, %slopes : (tensor<1x1x1x?xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x1x?xf32>
    %143 = graph.where %93, %bias, %6 : (tensor<?x1x?x?xi1>, tensor<1x4x1x?xf32>, tensor<f32>) -> tensor<?x4x?x?xf32>
    %144 = graph.matmul %141, %142 : (tensor<?x4x?x16xf32>, tensor<?x4x16x?xf32>) -> tensor<?x4x?x?xf32>
    %145 = graph.add %144, %143 : (tensor<?x4x?x?xf32>, tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
    %146 = graph.softmax %145 {axis = 3 : i64} : tensor<?x4x?x?xf32>
    %147 = graph.is_nan %146 : (tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xi1>
    %148 = graph.where %147, %7, %146 : (tensor<?x4x?x?xi1>, tensor<f32>, tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
    %149 = graph.matmul %148, %132 : (tensor<?x4x?x?xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32>
    %150 = graph.transpose %149 {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x4x?x16xf32>) -> tensor<?x?x4x16xf32>
    %151 = graph.reshape %150, %0 : (tensor<?x?x4x16xf32>, tensor<3xi64>) -> tensor<?x?x64xf32>
    return %151 : tensor<?x?x64xf32>
}

// -----

// Slopes that are no multiple of ALiBi's (all heads 0.25) stay unraised.
// CHECK-LABEL: func.func @not_alibi
// CHECK-NOT: graph.attention
// CHECK: graph.softmax
func.func @not_alibi(%q: tensor<?x?x64xf32> {graph.dims = ["batch", "seq", ""]}, %k: tensor<?x?x32xf32> {graph.dims = ["batch", "seq", ""]}, %v: tensor<?x?x32xf32> {graph.dims = ["batch", "seq", ""]}) -> tensor<?x?x64xf32> {
    %0 = graph.constant dense<[0, 0, 64]> : tensor<3xi64>
    %1 = graph.constant dense<16> : tensor<1xi64>
    %2 = graph.constant dense<[0, 4, -1, 16]> : tensor<4xi64>
    %3 = graph.constant dense<[1, 1, 2, 1, 1]> : tensor<5xi64>
    %4 = graph.constant dense<[0, 0, 2, 16]> : tensor<4xi64>
    %5 = graph.constant dense<[0, 0, 4, 16]> : tensor<4xi64>
    %6 = graph.constant dense<-3.40282347E+38> : tensor<f32>
    %7 = graph.constant dense<0.000000e+00> : tensor<f32>
    %8 = graph.constant dense<-9223372036854775808> : tensor<1xi64>
    %9 = graph.constant dense<-2> : tensor<1xi64>
    %10 = graph.constant dense<4> : tensor<1xi64>
    %11 = graph.constant dense<[0, 1]> : tensor<2xi64>
    %12 = graph.constant dense<[1, 2]> : tensor<2xi64>
    %13 = graph.constant dense<2> : tensor<1xi64>
    %14 = graph.constant dense<-1> : tensor<i64>
    %15 = graph.constant dense<5.000000e-01> : tensor<f32>
    %16 = graph.constant dense<9223372036854775807> : tensor<1xi64>
    %17 = graph.constant dense<3> : tensor<1xi64>
    %18 = graph.constant dense<8> : tensor<1xi64>
    %19 = graph.constant dense<[[[1.000000e+00], [0.316227764], [1.000000e-01], [0.0316227786], [0.00999999977], [0.00316227786], [1.000000e-03], [3.16227786E-4]]]> : tensor<1x8x1xf32>
    %20 = graph.constant dense<true> : tensor<i1>
    %21 = graph.constant dense<-1> : tensor<1xi64>
    %22 = graph.constant dense<1> : tensor<1xi64>
    %23 = graph.constant dense<0> : tensor<1xi64>
    %24 = graph.constant dense<1> : tensor<i64>
    %25 = graph.constant dense<0> : tensor<i64>
    %47 = graph.shape %q {end = 1 : i64} : (tensor<?x?x64xf32>) -> tensor<1xi64>
    %48 = graph.squeeze %47 : (tensor<1xi64>) -> tensor<i64>
    %49 = graph.shape %q {end = 2 : i64, start = 1 : i64} : (tensor<?x?x64xf32>) -> tensor<1xi64>
    %50 = graph.squeeze %49 : (tensor<1xi64>) -> tensor<i64>
    %52 = graph.range %25, %50, %24 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
    %53 = graph.unsqueeze %52, %23 : (tensor<?xi64>, tensor<1xi64>) -> tensor<1x?xi64>
    %54 = graph.concat %47, %22 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %55 = graph.expand %53, %54 : (tensor<1x?xi64>, tensor<2xi64>) -> tensor<?x?xi64>
    %56 = graph.slice %55, %23, %22, %22, %22 : (tensor<?x?xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x1xi64>
    %57 = graph.sub %56, %24 : (tensor<?x1xi64>, tensor<i64>) -> tensor<?x1xi64>
    %58 = graph.concat %57, %55 {axis = 1 : i64} : (tensor<?x1xi64>, tensor<?x?xi64>) -> tensor<?x?xi64>
    %59 = graph.add %50, %24 : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %60 = graph.slice %58, %23, %49, %22, %22 : (tensor<?x?xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?xi64>
    %61 = graph.reshape %59, %21 : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
    %62 = graph.slice %58, %22, %61, %22, %22 : (tensor<?x?xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?xi64>
    %63 = graph.sub %62, %60 : (tensor<?x?xi64>, tensor<?x?xi64>) -> tensor<?x?xi64>
    %64 = graph.equal %63, %24 : (tensor<?x?xi64>, tensor<i64>) -> tensor<?x?xi1>
    %65 = graph.not %64 : (tensor<?x?xi1>) -> tensor<?x?xi1>
    %66 = graph.cast %65 : (tensor<?x?xi1>) -> tensor<?x?xi64>
    %67 = graph.cumsum %66, %14 : (tensor<?x?xi64>, tensor<i64>) -> tensor<?x?xi64>
    %68 = graph.range %25, %48, %24 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
    %69 = graph.unsqueeze %68, %12 : (tensor<?xi64>, tensor<2xi64>) -> tensor<?x1x1xi64>
    %70 = graph.unsqueeze %69, %17 : (tensor<?x1x1xi64>, tensor<1xi64>) -> tensor<?x1x1x1xi64>
    %71 = graph.unsqueeze %52, %11 : (tensor<?xi64>, tensor<2xi64>) -> tensor<1x1x?xi64>
    %72 = graph.unsqueeze %71, %17 : (tensor<1x1x?xi64>, tensor<1xi64>) -> tensor<1x1x?x1xi64>
    %73 = graph.unsqueeze %71, %13 : (tensor<1x1x?xi64>, tensor<1xi64>) -> tensor<1x1x1x?xi64>
    %74 = graph.less_or_equal %73, %72 : (tensor<1x1x1x?xi64>, tensor<1x1x?x1xi64>) -> tensor<1x1x?x?xi1>
    %75 = graph.and %74, %20 : (tensor<1x1x?x?xi1>, tensor<i1>) -> tensor<1x1x?x?xi1>
    %76 = graph.max %70, %72 : (tensor<?x1x1x1xi64>, tensor<1x1x?x1xi64>) -> tensor<?x1x?x1xi64>
    %77 = graph.shape %76 : (tensor<?x1x?x1xi64>) -> tensor<4xi64>
    %78 = graph.expand %70, %77 : (tensor<?x1x1x1xi64>, tensor<4xi64>) -> tensor<?x1x?x1xi64>
    %79 = graph.unsqueeze %78, %10 : (tensor<?x1x?x1xi64>, tensor<1xi64>) -> tensor<?x1x?x1x1xi64>
    %80 = graph.expand %72, %77 : (tensor<1x1x?x1xi64>, tensor<4xi64>) -> tensor<?x1x?x1xi64>
    %81 = graph.unsqueeze %80, %10 : (tensor<?x1x?x1xi64>, tensor<1xi64>) -> tensor<?x1x?x1x1xi64>
    %82 = graph.concat %79, %81 {axis = 4 : i64} : (tensor<?x1x?x1x1xi64>, tensor<?x1x?x1x1xi64>) -> tensor<?x1x?x1x2xi64>
    %83 = graph.gather_nd %67, %82 : (tensor<?x?xi64>, tensor<?x1x?x1x2xi64>) -> tensor<?x1x?x1xi64>
    %84 = graph.max %70, %73 : (tensor<?x1x1x1xi64>, tensor<1x1x1x?xi64>) -> tensor<?x1x1x?xi64>
    %85 = graph.shape %84 : (tensor<?x1x1x?xi64>) -> tensor<4xi64>
    %86 = graph.expand %70, %85 : (tensor<?x1x1x1xi64>, tensor<4xi64>) -> tensor<?x1x1x?xi64>
    %87 = graph.unsqueeze %86, %10 : (tensor<?x1x1x?xi64>, tensor<1xi64>) -> tensor<?x1x1x?x1xi64>
    %88 = graph.expand %73, %85 : (tensor<1x1x1x?xi64>, tensor<4xi64>) -> tensor<?x1x1x?xi64>
    %89 = graph.unsqueeze %88, %10 : (tensor<?x1x1x?xi64>, tensor<1xi64>) -> tensor<?x1x1x?x1xi64>
    %90 = graph.concat %87, %89 {axis = 4 : i64} : (tensor<?x1x1x?x1xi64>, tensor<?x1x1x?x1xi64>) -> tensor<?x1x1x?x2xi64>
    %91 = graph.gather_nd %67, %90 : (tensor<?x?xi64>, tensor<?x1x1x?x2xi64>) -> tensor<?x1x1x?xi64>
    %92 = graph.equal %83, %91 : (tensor<?x1x?x1xi64>, tensor<?x1x1x?xi64>) -> tensor<?x1x?x?xi1>
    %93 = graph.and %75, %92 : (tensor<1x1x?x?xi1>, tensor<?x1x?x?xi1>) -> tensor<?x1x?x?xi1>
    %94 = graph.unsqueeze %53, %22 : (tensor<1x?xi64>, tensor<1xi64>) -> tensor<1x1x?xi64>
    %95 = graph.cast %94 : (tensor<1x1x?xi64>) -> tensor<1x1x?xf32>
    %96 = graph.matmul %19, %95 : (tensor<1x8x1xf32>, tensor<1x1x?xf32>) -> tensor<1x8x?xf32>
    %97 = graph.transpose %96 {perm = array<i64: 0, 2, 1>} : (tensor<1x8x?xf32>) -> tensor<1x?x8xf32>
    %98 = graph.concat %97, %97 {axis = 2 : i64} : (tensor<1x?x8xf32>, tensor<1x?x8xf32>) -> tensor<1x?x16xf32>
    %99 = graph.cos %98 : (tensor<1x?x16xf32>) -> tensor<1x?x16xf32>
    %100 = graph.sin %98 : (tensor<1x?x16xf32>) -> tensor<1x?x16xf32>
    %103 = graph.reshape %q, %5 : (tensor<?x?x64xf32>, tensor<4xi64>) -> tensor<?x?x4x16xf32>
    %104 = graph.transpose %103 {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x?x4x16xf32>) -> tensor<?x4x?x16xf32>
    %106 = graph.reshape %k, %4 : (tensor<?x?x32xf32>, tensor<4xi64>) -> tensor<?x?x2x16xf32>
    %107 = graph.transpose %106 {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x?x2x16xf32>) -> tensor<?x2x?x16xf32>
    %109 = graph.reshape %v, %4 : (tensor<?x?x32xf32>, tensor<4xi64>) -> tensor<?x?x2x16xf32>
    %110 = graph.transpose %109 {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x?x2x16xf32>) -> tensor<?x2x?x16xf32>
    %111 = graph.unsqueeze %99, %22 : (tensor<1x?x16xf32>, tensor<1xi64>) -> tensor<1x1x?x16xf32>
    %112 = graph.unsqueeze %100, %22 : (tensor<1x?x16xf32>, tensor<1xi64>) -> tensor<1x1x?x16xf32>
    %113 = graph.mul %104, %111 : (tensor<?x4x?x16xf32>, tensor<1x1x?x16xf32>) -> tensor<?x4x?x16xf32>
    %114 = graph.slice %104, %23, %18, %17, %22 : (tensor<?x4x?x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x4x?x8xf32>
    %115 = graph.slice %104, %18, %16, %17, %22 : (tensor<?x4x?x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x4x?x8xf32>
    %116 = graph.neg %115 : (tensor<?x4x?x8xf32>) -> tensor<?x4x?x8xf32>
    %117 = graph.concat %116, %114 {axis = 3 : i64} : (tensor<?x4x?x8xf32>, tensor<?x4x?x8xf32>) -> tensor<?x4x?x16xf32>
    %118 = graph.mul %117, %112 : (tensor<?x4x?x16xf32>, tensor<1x1x?x16xf32>) -> tensor<?x4x?x16xf32>
    %119 = graph.add %113, %118 : (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32>
    %120 = graph.mul %107, %111 : (tensor<?x2x?x16xf32>, tensor<1x1x?x16xf32>) -> tensor<?x2x?x16xf32>
    %121 = graph.slice %107, %23, %18, %17, %22 : (tensor<?x2x?x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2x?x8xf32>
    %122 = graph.slice %107, %18, %16, %17, %22 : (tensor<?x2x?x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2x?x8xf32>
    %123 = graph.neg %122 : (tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32>
    %124 = graph.concat %123, %121 {axis = 3 : i64} : (tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>) -> tensor<?x2x?x16xf32>
    %125 = graph.mul %124, %112 : (tensor<?x2x?x16xf32>, tensor<1x1x?x16xf32>) -> tensor<?x2x?x16xf32>
    %126 = graph.add %120, %125 : (tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) -> tensor<?x2x?x16xf32>
    %127 = graph.unsqueeze %126, %13 : (tensor<?x2x?x16xf32>, tensor<1xi64>) -> tensor<?x2x1x?x16xf32>
    %128 = graph.expand %127, %3 : (tensor<?x2x1x?x16xf32>, tensor<5xi64>) -> tensor<?x2x2x?x16xf32>
    %129 = graph.reshape %128, %2 : (tensor<?x2x2x?x16xf32>, tensor<4xi64>) -> tensor<?x4x?x16xf32>
    %130 = graph.unsqueeze %110, %13 : (tensor<?x2x?x16xf32>, tensor<1xi64>) -> tensor<?x2x1x?x16xf32>
    %131 = graph.expand %130, %3 : (tensor<?x2x1x?x16xf32>, tensor<5xi64>) -> tensor<?x2x2x?x16xf32>
    %132 = graph.reshape %131, %2 : (tensor<?x2x2x?x16xf32>, tensor<4xi64>) -> tensor<?x4x?x16xf32>
    %133 = graph.shape %129 : (tensor<?x4x?x16xf32>) -> tensor<4xi64>
    %134 = graph.slice %133, %9, %21, %23, %22 : (tensor<4xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
    %135 = graph.slice %133, %8, %9, %23, %22 : (tensor<4xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %136 = graph.concat %21, %134, %1 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %137 = graph.reshape %129, %136 : (tensor<?x4x?x16xf32>, tensor<3xi64>) -> tensor<?x?x16xf32>
    %138 = graph.transpose %137 {perm = array<i64: 0, 2, 1>} : (tensor<?x?x16xf32>) -> tensor<?x16x?xf32>
    %139 = graph.concat %135, %1, %134 {axis = 0 : i64} : (tensor<2xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
    %140 = graph.reshape %138, %139 : (tensor<?x16x?xf32>, tensor<4xi64>) -> tensor<?x4x16x?xf32>
    %141 = graph.mul %119, %15 : (tensor<?x4x?x16xf32>, tensor<f32>) -> tensor<?x4x?x16xf32>
    %142 = graph.mul %140, %15 : (tensor<?x4x16x?xf32>, tensor<f32>) -> tensor<?x4x16x?xf32>
    %jf = graph.cast %73 : (tensor<1x1x1x?xi64>) -> tensor<1x1x1x?xf32>
    %slopes = graph.constant dense<[[[[0.25]], [[0.25]], [[0.25]], [[0.25]]]]> : tensor<1x4x1x1xf32>
    %bias = graph.mul %jf, %slopes : (tensor<1x1x1x?xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x1x?xf32>
    %143 = graph.where %93, %bias, %6 : (tensor<?x1x?x?xi1>, tensor<1x4x1x?xf32>, tensor<f32>) -> tensor<?x4x?x?xf32>
    %144 = graph.matmul %141, %142 : (tensor<?x4x?x16xf32>, tensor<?x4x16x?xf32>) -> tensor<?x4x?x?xf32>
    %145 = graph.add %144, %143 : (tensor<?x4x?x?xf32>, tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
    %146 = graph.softmax %145 {axis = 3 : i64} : tensor<?x4x?x?xf32>
    %147 = graph.is_nan %146 : (tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xi1>
    %148 = graph.where %147, %7, %146 : (tensor<?x4x?x?xi1>, tensor<f32>, tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
    %149 = graph.matmul %148, %132 : (tensor<?x4x?x?xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32>
    %150 = graph.transpose %149 {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x4x?x16xf32>) -> tensor<?x?x4x16xf32>
    %151 = graph.reshape %150, %0 : (tensor<?x?x4x16xf32>, tensor<3xi64>) -> tensor<?x?x64xf32>
    return %151 : tensor<?x?x64xf32>
}

// -----

// MPT's form: the bias is added to the scores and the mask is a masked_fill,
// where(hidden, -big, scores + bias), not an additive -inf: `alibi = 1.0`.
// CHECK-LABEL: func.func @alibi_masked_fill
// CHECK: graph.attention {{.*}} {alibi = 1.000000e+00 : f32, causal = true, head_dim = 16 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 2.500000e-01 : f32}
// CHECK-NOT: graph.softmax
func.func @alibi_masked_fill(%q: tensor<?x?x64xf32> {graph.dims = ["batch", "seq", ""]}, %k: tensor<?x?x32xf32> {graph.dims = ["batch", "seq", ""]}, %v: tensor<?x?x32xf32> {graph.dims = ["batch", "seq", ""]}) -> tensor<?x?x64xf32> {
    %0 = graph.constant dense<[0, 0, 64]> : tensor<3xi64>
    %1 = graph.constant dense<16> : tensor<1xi64>
    %2 = graph.constant dense<[0, 4, -1, 16]> : tensor<4xi64>
    %3 = graph.constant dense<[1, 1, 2, 1, 1]> : tensor<5xi64>
    %4 = graph.constant dense<[0, 0, 2, 16]> : tensor<4xi64>
    %5 = graph.constant dense<[0, 0, 4, 16]> : tensor<4xi64>
    %6 = graph.constant dense<-3.40282347E+38> : tensor<f32>
    %7 = graph.constant dense<0.000000e+00> : tensor<f32>
    %8 = graph.constant dense<-9223372036854775808> : tensor<1xi64>
    %9 = graph.constant dense<-2> : tensor<1xi64>
    %10 = graph.constant dense<4> : tensor<1xi64>
    %11 = graph.constant dense<[0, 1]> : tensor<2xi64>
    %12 = graph.constant dense<[1, 2]> : tensor<2xi64>
    %13 = graph.constant dense<2> : tensor<1xi64>
    %14 = graph.constant dense<-1> : tensor<i64>
    %15 = graph.constant dense<5.000000e-01> : tensor<f32>
    %16 = graph.constant dense<9223372036854775807> : tensor<1xi64>
    %17 = graph.constant dense<3> : tensor<1xi64>
    %18 = graph.constant dense<8> : tensor<1xi64>
    %19 = graph.constant dense<[[[1.000000e+00], [0.316227764], [1.000000e-01], [0.0316227786], [0.00999999977], [0.00316227786], [1.000000e-03], [3.16227786E-4]]]> : tensor<1x8x1xf32>
    %20 = graph.constant dense<true> : tensor<i1>
    %21 = graph.constant dense<-1> : tensor<1xi64>
    %22 = graph.constant dense<1> : tensor<1xi64>
    %23 = graph.constant dense<0> : tensor<1xi64>
    %24 = graph.constant dense<1> : tensor<i64>
    %25 = graph.constant dense<0> : tensor<i64>
    %47 = graph.shape %q {end = 1 : i64} : (tensor<?x?x64xf32>) -> tensor<1xi64>
    %48 = graph.squeeze %47 : (tensor<1xi64>) -> tensor<i64>
    %49 = graph.shape %q {end = 2 : i64, start = 1 : i64} : (tensor<?x?x64xf32>) -> tensor<1xi64>
    %50 = graph.squeeze %49 : (tensor<1xi64>) -> tensor<i64>
    %52 = graph.range %25, %50, %24 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
    %53 = graph.unsqueeze %52, %23 : (tensor<?xi64>, tensor<1xi64>) -> tensor<1x?xi64>
    %54 = graph.concat %47, %22 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %55 = graph.expand %53, %54 : (tensor<1x?xi64>, tensor<2xi64>) -> tensor<?x?xi64>
    %56 = graph.slice %55, %23, %22, %22, %22 : (tensor<?x?xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x1xi64>
    %57 = graph.sub %56, %24 : (tensor<?x1xi64>, tensor<i64>) -> tensor<?x1xi64>
    %58 = graph.concat %57, %55 {axis = 1 : i64} : (tensor<?x1xi64>, tensor<?x?xi64>) -> tensor<?x?xi64>
    %59 = graph.add %50, %24 : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %60 = graph.slice %58, %23, %49, %22, %22 : (tensor<?x?xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?xi64>
    %61 = graph.reshape %59, %21 : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
    %62 = graph.slice %58, %22, %61, %22, %22 : (tensor<?x?xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?xi64>
    %63 = graph.sub %62, %60 : (tensor<?x?xi64>, tensor<?x?xi64>) -> tensor<?x?xi64>
    %64 = graph.equal %63, %24 : (tensor<?x?xi64>, tensor<i64>) -> tensor<?x?xi1>
    %65 = graph.not %64 : (tensor<?x?xi1>) -> tensor<?x?xi1>
    %66 = graph.cast %65 : (tensor<?x?xi1>) -> tensor<?x?xi64>
    %67 = graph.cumsum %66, %14 : (tensor<?x?xi64>, tensor<i64>) -> tensor<?x?xi64>
    %68 = graph.range %25, %48, %24 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
    %69 = graph.unsqueeze %68, %12 : (tensor<?xi64>, tensor<2xi64>) -> tensor<?x1x1xi64>
    %70 = graph.unsqueeze %69, %17 : (tensor<?x1x1xi64>, tensor<1xi64>) -> tensor<?x1x1x1xi64>
    %71 = graph.unsqueeze %52, %11 : (tensor<?xi64>, tensor<2xi64>) -> tensor<1x1x?xi64>
    %72 = graph.unsqueeze %71, %17 : (tensor<1x1x?xi64>, tensor<1xi64>) -> tensor<1x1x?x1xi64>
    %73 = graph.unsqueeze %71, %13 : (tensor<1x1x?xi64>, tensor<1xi64>) -> tensor<1x1x1x?xi64>
    %74 = graph.less_or_equal %73, %72 : (tensor<1x1x1x?xi64>, tensor<1x1x?x1xi64>) -> tensor<1x1x?x?xi1>
    %75 = graph.and %74, %20 : (tensor<1x1x?x?xi1>, tensor<i1>) -> tensor<1x1x?x?xi1>
    %76 = graph.max %70, %72 : (tensor<?x1x1x1xi64>, tensor<1x1x?x1xi64>) -> tensor<?x1x?x1xi64>
    %77 = graph.shape %76 : (tensor<?x1x?x1xi64>) -> tensor<4xi64>
    %78 = graph.expand %70, %77 : (tensor<?x1x1x1xi64>, tensor<4xi64>) -> tensor<?x1x?x1xi64>
    %79 = graph.unsqueeze %78, %10 : (tensor<?x1x?x1xi64>, tensor<1xi64>) -> tensor<?x1x?x1x1xi64>
    %80 = graph.expand %72, %77 : (tensor<1x1x?x1xi64>, tensor<4xi64>) -> tensor<?x1x?x1xi64>
    %81 = graph.unsqueeze %80, %10 : (tensor<?x1x?x1xi64>, tensor<1xi64>) -> tensor<?x1x?x1x1xi64>
    %82 = graph.concat %79, %81 {axis = 4 : i64} : (tensor<?x1x?x1x1xi64>, tensor<?x1x?x1x1xi64>) -> tensor<?x1x?x1x2xi64>
    %83 = graph.gather_nd %67, %82 : (tensor<?x?xi64>, tensor<?x1x?x1x2xi64>) -> tensor<?x1x?x1xi64>
    %84 = graph.max %70, %73 : (tensor<?x1x1x1xi64>, tensor<1x1x1x?xi64>) -> tensor<?x1x1x?xi64>
    %85 = graph.shape %84 : (tensor<?x1x1x?xi64>) -> tensor<4xi64>
    %86 = graph.expand %70, %85 : (tensor<?x1x1x1xi64>, tensor<4xi64>) -> tensor<?x1x1x?xi64>
    %87 = graph.unsqueeze %86, %10 : (tensor<?x1x1x?xi64>, tensor<1xi64>) -> tensor<?x1x1x?x1xi64>
    %88 = graph.expand %73, %85 : (tensor<1x1x1x?xi64>, tensor<4xi64>) -> tensor<?x1x1x?xi64>
    %89 = graph.unsqueeze %88, %10 : (tensor<?x1x1x?xi64>, tensor<1xi64>) -> tensor<?x1x1x?x1xi64>
    %90 = graph.concat %87, %89 {axis = 4 : i64} : (tensor<?x1x1x?x1xi64>, tensor<?x1x1x?x1xi64>) -> tensor<?x1x1x?x2xi64>
    %91 = graph.gather_nd %67, %90 : (tensor<?x?xi64>, tensor<?x1x1x?x2xi64>) -> tensor<?x1x1x?xi64>
    %92 = graph.equal %83, %91 : (tensor<?x1x?x1xi64>, tensor<?x1x1x?xi64>) -> tensor<?x1x?x?xi1>
    %93 = graph.and %75, %92 : (tensor<1x1x?x?xi1>, tensor<?x1x?x?xi1>) -> tensor<?x1x?x?xi1>
    %94 = graph.unsqueeze %53, %22 : (tensor<1x?xi64>, tensor<1xi64>) -> tensor<1x1x?xi64>
    %95 = graph.cast %94 : (tensor<1x1x?xi64>) -> tensor<1x1x?xf32>
    %96 = graph.matmul %19, %95 : (tensor<1x8x1xf32>, tensor<1x1x?xf32>) -> tensor<1x8x?xf32>
    %97 = graph.transpose %96 {perm = array<i64: 0, 2, 1>} : (tensor<1x8x?xf32>) -> tensor<1x?x8xf32>
    %98 = graph.concat %97, %97 {axis = 2 : i64} : (tensor<1x?x8xf32>, tensor<1x?x8xf32>) -> tensor<1x?x16xf32>
    %99 = graph.cos %98 : (tensor<1x?x16xf32>) -> tensor<1x?x16xf32>
    %100 = graph.sin %98 : (tensor<1x?x16xf32>) -> tensor<1x?x16xf32>
    %103 = graph.reshape %q, %5 : (tensor<?x?x64xf32>, tensor<4xi64>) -> tensor<?x?x4x16xf32>
    %104 = graph.transpose %103 {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x?x4x16xf32>) -> tensor<?x4x?x16xf32>
    %106 = graph.reshape %k, %4 : (tensor<?x?x32xf32>, tensor<4xi64>) -> tensor<?x?x2x16xf32>
    %107 = graph.transpose %106 {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x?x2x16xf32>) -> tensor<?x2x?x16xf32>
    %109 = graph.reshape %v, %4 : (tensor<?x?x32xf32>, tensor<4xi64>) -> tensor<?x?x2x16xf32>
    %110 = graph.transpose %109 {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x?x2x16xf32>) -> tensor<?x2x?x16xf32>
    %111 = graph.unsqueeze %99, %22 : (tensor<1x?x16xf32>, tensor<1xi64>) -> tensor<1x1x?x16xf32>
    %112 = graph.unsqueeze %100, %22 : (tensor<1x?x16xf32>, tensor<1xi64>) -> tensor<1x1x?x16xf32>
    %113 = graph.mul %104, %111 : (tensor<?x4x?x16xf32>, tensor<1x1x?x16xf32>) -> tensor<?x4x?x16xf32>
    %114 = graph.slice %104, %23, %18, %17, %22 : (tensor<?x4x?x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x4x?x8xf32>
    %115 = graph.slice %104, %18, %16, %17, %22 : (tensor<?x4x?x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x4x?x8xf32>
    %116 = graph.neg %115 : (tensor<?x4x?x8xf32>) -> tensor<?x4x?x8xf32>
    %117 = graph.concat %116, %114 {axis = 3 : i64} : (tensor<?x4x?x8xf32>, tensor<?x4x?x8xf32>) -> tensor<?x4x?x16xf32>
    %118 = graph.mul %117, %112 : (tensor<?x4x?x16xf32>, tensor<1x1x?x16xf32>) -> tensor<?x4x?x16xf32>
    %119 = graph.add %113, %118 : (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32>
    %120 = graph.mul %107, %111 : (tensor<?x2x?x16xf32>, tensor<1x1x?x16xf32>) -> tensor<?x2x?x16xf32>
    %121 = graph.slice %107, %23, %18, %17, %22 : (tensor<?x2x?x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2x?x8xf32>
    %122 = graph.slice %107, %18, %16, %17, %22 : (tensor<?x2x?x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2x?x8xf32>
    %123 = graph.neg %122 : (tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32>
    %124 = graph.concat %123, %121 {axis = 3 : i64} : (tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>) -> tensor<?x2x?x16xf32>
    %125 = graph.mul %124, %112 : (tensor<?x2x?x16xf32>, tensor<1x1x?x16xf32>) -> tensor<?x2x?x16xf32>
    %126 = graph.add %120, %125 : (tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) -> tensor<?x2x?x16xf32>
    %127 = graph.unsqueeze %126, %13 : (tensor<?x2x?x16xf32>, tensor<1xi64>) -> tensor<?x2x1x?x16xf32>
    %128 = graph.expand %127, %3 : (tensor<?x2x1x?x16xf32>, tensor<5xi64>) -> tensor<?x2x2x?x16xf32>
    %129 = graph.reshape %128, %2 : (tensor<?x2x2x?x16xf32>, tensor<4xi64>) -> tensor<?x4x?x16xf32>
    %130 = graph.unsqueeze %110, %13 : (tensor<?x2x?x16xf32>, tensor<1xi64>) -> tensor<?x2x1x?x16xf32>
    %131 = graph.expand %130, %3 : (tensor<?x2x1x?x16xf32>, tensor<5xi64>) -> tensor<?x2x2x?x16xf32>
    %132 = graph.reshape %131, %2 : (tensor<?x2x2x?x16xf32>, tensor<4xi64>) -> tensor<?x4x?x16xf32>
    %133 = graph.shape %129 : (tensor<?x4x?x16xf32>) -> tensor<4xi64>
    %134 = graph.slice %133, %9, %21, %23, %22 : (tensor<4xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
    %135 = graph.slice %133, %8, %9, %23, %22 : (tensor<4xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %136 = graph.concat %21, %134, %1 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %137 = graph.reshape %129, %136 : (tensor<?x4x?x16xf32>, tensor<3xi64>) -> tensor<?x?x16xf32>
    %138 = graph.transpose %137 {perm = array<i64: 0, 2, 1>} : (tensor<?x?x16xf32>) -> tensor<?x16x?xf32>
    %139 = graph.concat %135, %1, %134 {axis = 0 : i64} : (tensor<2xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
    %140 = graph.reshape %138, %139 : (tensor<?x16x?xf32>, tensor<4xi64>) -> tensor<?x4x16x?xf32>
    %141 = graph.mul %119, %15 : (tensor<?x4x?x16xf32>, tensor<f32>) -> tensor<?x4x?x16xf32>
    %142 = graph.mul %140, %15 : (tensor<?x4x16x?xf32>, tensor<f32>) -> tensor<?x4x16x?xf32>
    %jf = graph.cast %73 : (tensor<1x1x1x?xi64>) -> tensor<1x1x1x?xf32>
    %slopes = graph.constant dense<[[[[0.25]], [[0.0625]], [[0.015625]], [[0.00390625]]]]> : tensor<1x4x1x1xf32>
    %bias = graph.mul %jf, %slopes : (tensor<1x1x1x?xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x1x?xf32>
    %hidden = graph.not %93 : (tensor<?x1x?x?xi1>) -> tensor<?x1x?x?xi1>
    %144 = graph.matmul %141, %142 : (tensor<?x4x?x16xf32>, tensor<?x4x16x?xf32>) -> tensor<?x4x?x?xf32>
    %biased = graph.add %144, %bias : (tensor<?x4x?x?xf32>, tensor<1x4x1x?xf32>) -> tensor<?x4x?x?xf32>
    %145 = graph.where %hidden, %6, %biased : (tensor<?x1x?x?xi1>, tensor<f32>, tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
    %146 = graph.softmax %145 {axis = 3 : i64} : tensor<?x4x?x?xf32>
    %147 = graph.is_nan %146 : (tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xi1>
    %148 = graph.where %147, %7, %146 : (tensor<?x4x?x?xi1>, tensor<f32>, tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
    %149 = graph.matmul %148, %132 : (tensor<?x4x?x?xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32>
    %150 = graph.transpose %149 {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x4x?x16xf32>) -> tensor<?x?x4x16xf32>
    %151 = graph.reshape %150, %0 : (tensor<?x?x4x16xf32>, tensor<3xi64>) -> tensor<?x?x64xf32>
    return %151 : tensor<?x?x64xf32>
}
