// RUN: infer-opt --split-input-file --infer-fold-shapes %s | FileCheck %s

// Tests that the shape of a tensor with static dims becomes a constant.
// CHECK-LABEL: func.func @static_shape
// CHECK: %[[C:.+]] = graph.constant dense<[2, 3]> : tensor<2xi64>
// CHECK-NOT: graph.shape
// CHECK: return %[[C]]
func.func @static_shape(%x: tensor<2x3xf32>) -> tensor<2xi64> {
  %s = graph.shape %x : (tensor<2x3xf32>) -> tensor<2xi64>
  return %s : tensor<2xi64>
}

// -----

// Tests that Shape -> Slice -> Concat -> Reshape over dynamic dims becomes the
// constant target [0, 0, 4, 16] (0 copies the input's dim).
// CHECK-LABEL: func.func @split_heads
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x64xf32>)
// CHECK-NOT: graph.shape
// CHECK-NOT: graph.concat
// CHECK: %[[T:.+]] = graph.constant dense<[0, 0, 4, 16]> : tensor<4xi64>
// CHECK: graph.reshape %[[X]], %[[T]] : (tensor<?x?x64xf32>, tensor<4xi64>) -> tensor<?x?x4x16xf32>
func.func @split_heads(%x: tensor<?x?x64xf32>) -> tensor<?x?x4x16xf32> {
  %c0 = graph.constant dense<0> : tensor<1xi64>
  %c1 = graph.constant dense<1> : tensor<1xi64>
  %c2 = graph.constant dense<2> : tensor<1xi64>
  %c4 = graph.constant dense<4> : tensor<1xi64>
  %c16 = graph.constant dense<16> : tensor<1xi64>
  %s = graph.shape %x : (tensor<?x?x64xf32>) -> tensor<3xi64>
  %b = graph.slice %s, %c0, %c2, %c0, %c1 : (tensor<3xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %t = graph.concat %b, %c4, %c16 {axis = 0 : i64} : (tensor<2xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
  %y = graph.reshape %x, %t : (tensor<?x?x64xf32>, tensor<4xi64>) -> tensor<?x?x4x16xf32>
  return %y : tensor<?x?x4x16xf32>
}

// -----

// Tests that an allowzero reshape whose target is [batch, seq, -1, 16] of the
// ids (the embedding output's dims are the ids' dims) becomes a plain reshape
// to [0, 0, 4, 16].
// CHECK-LABEL: func.func @allowzero_split
// CHECK: %[[E:.+]] = graph.gather
// CHECK: %[[T:.+]] = graph.constant dense<[0, 0, 4, 16]> : tensor<4xi64>
// CHECK: graph.reshape %[[E]], %[[T]] :
// CHECK-NOT: allowzero
func.func @allowzero_split(%ids: tensor<?x?xi64>, %table: tensor<512x64xf32>) -> tensor<?x?x4x16xf32> {
  %cm1 = graph.constant dense<-1> : tensor<1xi64>
  %c16 = graph.constant dense<16> : tensor<1xi64>
  %b = graph.shape %ids {end = 1 : i64} : (tensor<?x?xi64>) -> tensor<1xi64>
  %s = graph.shape %ids {end = 2 : i64, start = 1 : i64} : (tensor<?x?xi64>) -> tensor<1xi64>
  %e = graph.gather %table, %ids {axis = 0 : i64} : (tensor<512x64xf32>, tensor<?x?xi64>) -> tensor<?x?x64xf32>
  %t = graph.concat %b, %s, %cm1, %c16 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
  %y = graph.reshape %e, %t {allowzero = true} : (tensor<?x?x64xf32>, tensor<4xi64>) -> tensor<?x?x4x16xf32>
  return %y : tensor<?x?x4x16xf32>
}

// -----

// Tests the repeat-kv pattern: Expand [b, 2, 1, s, 16] to [b, 2, 2, s, 16]
// gets the constant target [1, 1, 2, 1, 1], and the merge Reshape to
// [b, 4, s, 16] (seq moves position) gets [0, 4, -1, 16].
// CHECK-LABEL: func.func @repeat_kv
// CHECK: %[[U:.+]] = graph.unsqueeze
// CHECK: %[[T5:.+]] = graph.constant dense<[1, 1, 2, 1, 1]> : tensor<5xi64>
// CHECK: %[[X:.+]] = graph.expand %[[U]], %[[T5]]
// CHECK: %[[T4:.+]] = graph.constant dense<[0, 4, -1, 16]> : tensor<4xi64>
// CHECK: graph.reshape %[[X]], %[[T4]] : (tensor<?x2x2x?x16xf32>, tensor<4xi64>) -> tensor<?x4x?x16xf32>
// CHECK-NOT: graph.shape
func.func @repeat_kv(%k: tensor<?x2x?x16xf32>) -> tensor<?x4x?x16xf32> {
  %c2 = graph.constant dense<2> : tensor<1xi64>
  %c4 = graph.constant dense<4> : tensor<1xi64>
  %c16 = graph.constant dense<16> : tensor<1xi64>
  %b = graph.shape %k {end = 1 : i64} : (tensor<?x2x?x16xf32>) -> tensor<1xi64>
  %s = graph.shape %k {end = 3 : i64, start = 2 : i64} : (tensor<?x2x?x16xf32>) -> tensor<1xi64>
  %u = graph.unsqueeze %k, %c2 : (tensor<?x2x?x16xf32>, tensor<1xi64>) -> tensor<?x2x1x?x16xf32>
  %t5 = graph.concat %b, %c2, %c2, %s, %c16 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<5xi64>
  %x = graph.expand %u, %t5 : (tensor<?x2x1x?x16xf32>, tensor<5xi64>) -> tensor<?x2x2x?x16xf32>
  %t4 = graph.concat %b, %c4, %s, %c16 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
  %y = graph.reshape %x, %t4 {allowzero = true} : (tensor<?x2x2x?x16xf32>, tensor<4xi64>) -> tensor<?x4x?x16xf32>
  return %y : tensor<?x4x?x16xf32>
}

// -----

// Tests that an Expand to the input's own shape is removed.
// CHECK-LABEL: func.func @expand_identity
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x16xf32>)
// CHECK-NOT: graph.expand
// CHECK: return %[[X]]
func.func @expand_identity(%x: tensor<?x?x16xf32>) -> tensor<?x?x16xf32> {
  %s = graph.shape %x : (tensor<?x?x16xf32>) -> tensor<3xi64>
  %y = graph.expand %x, %s : (tensor<?x?x16xf32>, tensor<3xi64>) -> tensor<?x?x16xf32>
  return %y : tensor<?x?x16xf32>
}

// -----

// Tests that a Slice from 0 to INT64_MAX with step 1 (the whole dim) is removed.
// CHECK-LABEL: func.func @whole_slice
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x16xf32>)
// CHECK-NOT: graph.slice
// CHECK: return %[[X]]
func.func @whole_slice(%x: tensor<?x?x16xf32>) -> tensor<?x?x16xf32> {
  %c0 = graph.constant dense<0> : tensor<1xi64>
  %c1 = graph.constant dense<1> : tensor<1xi64>
  %big = graph.constant dense<9223372036854775807> : tensor<1xi64>
  %y = graph.slice %x, %c0, %big, %c1, %c1 : (tensor<?x?x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x16xf32>
  return %y : tensor<?x?x16xf32>
}

// -----

// Tests that Range(0, seq, 1) has length seq: expanding it to [1, seq] is an
// identity and disappears.
// CHECK-LABEL: func.func @range_length
// CHECK: %[[R:.+]] = graph.range
// CHECK: %[[U:.+]] = graph.unsqueeze %[[R]]
// CHECK-NOT: graph.expand
// CHECK: return %[[U]]
func.func @range_length(%x: tensor<?x?xf32>) -> tensor<1x?xi64> {
  %c0 = graph.constant dense<0> : tensor<i64>
  %c1 = graph.constant dense<1> : tensor<i64>
  %a0 = graph.constant dense<0> : tensor<1xi64>
  %one = graph.constant dense<1> : tensor<1xi64>
  %s = graph.shape %x {end = 2 : i64, start = 1 : i64} : (tensor<?x?xf32>) -> tensor<1xi64>
  %n = graph.squeeze %s : (tensor<1xi64>) -> tensor<i64>
  %r = graph.range %c0, %n, %c1 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  %u = graph.unsqueeze %r, %a0 : (tensor<?xi64>, tensor<1xi64>) -> tensor<1x?xi64>
  %t = graph.concat %one, %s {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %y = graph.expand %u, %t : (tensor<1x?xi64>, tensor<2xi64>) -> tensor<1x?xi64>
  return %y : tensor<1x?xi64>
}

// -----

// Tests that a Reshape whose target takes two entries from a data tensor (not
// from shapes) is not touched.
// CHECK-LABEL: func.func @data_target
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x64xf32>, %[[V:.+]]: tensor<2xi64>)
// CHECK: %[[T:.+]] = graph.concat %{{.+}}, %[[V]], %{{.+}} {axis = 0 : i64}
// CHECK: graph.reshape %[[X]], %[[T]] : (tensor<?x?x64xf32>, tensor<4xi64>) -> tensor<?x?x?x16xf32>
func.func @data_target(%x: tensor<?x?x64xf32>, %v: tensor<2xi64>) -> tensor<?x?x?x16xf32> {
  %c16 = graph.constant dense<16> : tensor<1xi64>
  %b = graph.shape %x {end = 1 : i64} : (tensor<?x?x64xf32>) -> tensor<1xi64>
  %t = graph.concat %b, %v, %c16 {axis = 0 : i64} : (tensor<1xi64>, tensor<2xi64>, tensor<1xi64>) -> tensor<4xi64>
  %y = graph.reshape %x, %t : (tensor<?x?x64xf32>, tensor<4xi64>) -> tensor<?x?x?x16xf32>
  return %y : tensor<?x?x?x16xf32>
}

// -----

// Tests that batch and seq are different symbols: a Reshape to [seq, batch, 64]
// is neither a copy of the input's dims nor folded.
// CHECK-LABEL: func.func @batch_vs_seq
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x64xf32>)
// CHECK-DAG: %[[B:.+]] = graph.shape %[[X]] {end = 1 : i64}
// CHECK-DAG: %[[S:.+]] = graph.shape %[[X]] {end = 2 : i64, start = 1 : i64}
// CHECK: %[[T:.+]] = graph.concat %[[S]], %[[B]], %{{.+}} {axis = 0 : i64}
// CHECK: graph.reshape %[[X]], %[[T]]
func.func @batch_vs_seq(%x: tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
  %c64 = graph.constant dense<64> : tensor<1xi64>
  %b = graph.shape %x {end = 1 : i64} : (tensor<?x?x64xf32>) -> tensor<1xi64>
  %s = graph.shape %x {end = 2 : i64, start = 1 : i64} : (tensor<?x?x64xf32>) -> tensor<1xi64>
  %t = graph.concat %s, %b, %c64 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
  %y = graph.reshape %x, %t : (tensor<?x?x64xf32>, tensor<3xi64>) -> tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}

// -----

// Tests that an Expand that really broadcasts a dim of 1 to a dynamic dim is
// kept with its computed target.
// CHECK-LABEL: func.func @real_broadcast
// CHECK-SAME: (%[[Y:.+]]: tensor<?x?x16xf32>)
// CHECK: %[[M:.+]] = graph.reduce_mean %[[Y]]
// CHECK: %[[S:.+]] = graph.shape %[[Y]]
// CHECK: graph.expand %[[M]], %[[S]] : (tensor<?x1x16xf32>, tensor<3xi64>) -> tensor<?x?x16xf32>
func.func @real_broadcast(%y: tensor<?x?x16xf32>) -> tensor<?x?x16xf32> {
  %a = graph.constant dense<1> : tensor<1xi64>
  %m = graph.reduce_mean %y axes(%a) : (tensor<?x?x16xf32>, tensor<1xi64>) -> tensor<?x1x16xf32>
  %s = graph.shape %y : (tensor<?x?x16xf32>) -> tensor<3xi64>
  %e = graph.expand %m, %s : (tensor<?x1x16xf32>, tensor<3xi64>) -> tensor<?x?x16xf32>
  return %e : tensor<?x?x16xf32>
}

// -----

// Tests that a Slice with step -1 over the whole dim (a reversal) is kept.
// CHECK-LABEL: func.func @reverse_slice
// CHECK: graph.slice
func.func @reverse_slice(%x: tensor<?x16xf32>) -> tensor<?x16xf32> {
  %cm1 = graph.constant dense<-1> : tensor<1xi64>
  %min = graph.constant dense<-9223372036854775808> : tensor<1xi64>
  %c0 = graph.constant dense<0> : tensor<1xi64>
  %y = graph.slice %x, %cm1, %min, %c0, %cm1 : (tensor<?x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// -----

// Tests that shape arithmetic (Gather, Mul, Equal, Where) of static dims folds
// completely, and that result types pick up dims the analysis proves.
// CHECK-LABEL: func.func @arith_and_refine
// CHECK-NOT: graph.where
// CHECK: %[[T:.+]] = graph.constant dense<[-1, 96]> : tensor<2xi64>
// CHECK: graph.reshape %{{.+}}, %[[T]] : (tensor<?x8x12xf32>, tensor<2xi64>) -> tensor<?x96xf32>
func.func @arith_and_refine(%x: tensor<?x8x12xf32>) -> tensor<?x?xf32> {
  %i1 = graph.constant dense<1> : tensor<i64>
  %i2 = graph.constant dense<2> : tensor<i64>
  %a0 = graph.constant dense<0> : tensor<1xi64>
  %m1 = graph.constant dense<-1> : tensor<1xi64>
  %s = graph.shape %x : (tensor<?x8x12xf32>) -> tensor<3xi64>
  %d1 = graph.gather %s, %i1 {axis = 0 : i64} : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %d2 = graph.gather %s, %i2 {axis = 0 : i64} : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %p = graph.mul %d1, %d2 : (tensor<i64>, tensor<i64>) -> tensor<i64>
  %pu = graph.unsqueeze %p, %a0 : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
  %t = graph.concat %m1, %pu {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %eq = graph.equal %t, %m1 : (tensor<2xi64>, tensor<1xi64>) -> tensor<2xi1>
  %t2 = graph.where %eq, %t, %t : (tensor<2xi1>, tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  %y = graph.reshape %x, %t2 : (tensor<?x8x12xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %z = graph.relu %y : (tensor<?x?xf32>) -> tensor<?x?xf32>
  return %z : tensor<?x?xf32>
}
