// RUN: infer-opt --split-input-file --infer-transpose-weights %s | FileCheck %s

// Tests tiny-llama's o_proj: a lone [k, n] weight becomes a one-source
// transposed pack [n, k] right after it, and the linear reads it with
// transpose_weight; the residual stays.
// CHECK-LABEL: func.func @lone_weight
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x64xf32>, %[[R:.+]]: tensor<?x?x32xf32>)
// CHECK-NEXT: %[[W:.+]] = graph.weight <o_proj> : tensor<64x32xf32>
// CHECK-NEXT: %[[T:.+]] = graph.pack_weights %[[W]] {axis = 0 : i64, transpose} : (tensor<64x32xf32>) -> tensor<32x64xf32>
// CHECK-NEXT: %[[Y:.+]] = graph.linear %[[X]], %[[T]] residual(%[[R]]) {transpose_weight = true} : (tensor<?x?x64xf32>, tensor<32x64xf32>, tensor<?x?x32xf32>) -> tensor<?x?x32xf32>
// CHECK-NEXT: return %[[Y]]
func.func @lone_weight(%x: tensor<?x?x64xf32>, %r: tensor<?x?x32xf32>) -> tensor<?x?x32xf32> {
  %w = graph.weight <o_proj> : tensor<64x32xf32>
  %y = graph.linear %x, %w residual(%r) : (tensor<?x?x64xf32>, tensor<64x32xf32>, tensor<?x?x32xf32>) -> tensor<?x?x32xf32>
  return %y : tensor<?x?x32xf32>
}

// -----

// Tests a packed QKV with a packed bias (Qwen2): the weight pack becomes a
// transposed pack of the same sources along the same axis, the old pack is
// erased, and the rank-1 bias pack is untouched.
// CHECK-LABEL: func.func @packed_qkv
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x64xf32>)
// CHECK-DAG: %[[WQ:.+]] = graph.weight <q.weight> : tensor<64x64xf32>
// CHECK-DAG: %[[WK:.+]] = graph.weight <k.weight> : tensor<64x32xf32>
// CHECK-DAG: %[[WV:.+]] = graph.weight <v.weight> : tensor<64x32xf32>
// CHECK: %[[T:.+]] = graph.pack_weights %[[WQ]], %[[WK]], %[[WV]] {axis = 1 : i64, transpose} : (tensor<64x64xf32>, tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<128x64xf32>
// CHECK: %[[B:.+]] = graph.pack_weights %{{.+}}, %{{.+}}, %{{.+}} {axis = 0 : i64} : (tensor<64xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<128xf32>
// CHECK-NOT: graph.pack_weights
// CHECK: %[[Y:.+]] = graph.linear %[[X]], %[[T]] bias(%[[B]]) {transpose_weight = true} : (tensor<?x?x64xf32>, tensor<128x64xf32>, tensor<128xf32>) -> tensor<?x?x128xf32>
// CHECK-NEXT: return %[[Y]]
func.func @packed_qkv(%x: tensor<?x?x64xf32>) -> tensor<?x?x128xf32> {
  %wq = graph.weight <q.weight> : tensor<64x64xf32>
  %wk = graph.weight <k.weight> : tensor<64x32xf32>
  %wv = graph.weight <v.weight> : tensor<64x32xf32>
  %w = graph.pack_weights %wq, %wk, %wv {axis = 1 : i64} : (tensor<64x64xf32>, tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<64x128xf32>
  %bq = graph.weight <q.bias> : tensor<64xf32>
  %bk = graph.weight <k.bias> : tensor<32xf32>
  %bv = graph.weight <v.bias> : tensor<32xf32>
  %b = graph.pack_weights %bq, %bk, %bv {axis = 0 : i64} : (tensor<64xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<128xf32>
  %y = graph.linear %x, %w bias(%b) : (tensor<?x?x64xf32>, tensor<64x128xf32>, tensor<128xf32>) -> tensor<?x?x128xf32>
  return %y : tensor<?x?x128xf32>
}

// -----

// Tests that a weight two linears read is transposed once, for both.
// CHECK-LABEL: func.func @shared_weight
// CHECK: %[[W:.+]] = graph.weight <shared> : tensor<64x16xf32>
// CHECK-NEXT: %[[T:.+]] = graph.pack_weights %[[W]] {axis = 0 : i64, transpose} : (tensor<64x16xf32>) -> tensor<16x64xf32>
// CHECK-NEXT: graph.linear %{{.+}}, %[[T]] {transpose_weight = true}
// CHECK-NEXT: graph.linear %{{.+}}, %[[T]] {transpose_weight = true}
// CHECK-NOT: graph.pack_weights
func.func @shared_weight(%a: tensor<?x?x64xf32>, %b: tensor<?x?x64xf32>) -> (tensor<?x?x16xf32>, tensor<?x?x16xf32>) {
  %w = graph.weight <shared> : tensor<64x16xf32>
  %ya = graph.linear %a, %w : (tensor<?x?x64xf32>, tensor<64x16xf32>) -> tensor<?x?x16xf32>
  %yb = graph.linear %b, %w : (tensor<?x?x64xf32>, tensor<64x16xf32>) -> tensor<?x?x16xf32>
  return %ya, %yb : tensor<?x?x16xf32>, tensor<?x?x16xf32>
}

// -----

// Tests that a weight something other than a linear's weight operand reads
// (a table graph.embedding also gathers from) is left as it is, with its
// linear.
// CHECK-LABEL: func.func @tied_table
// CHECK-NOT: graph.pack_weights
// CHECK: %[[W:.+]] = graph.weight <table> : tensor<64x64xf32>
// CHECK: %[[E:.+]] = graph.embedding %[[W]], %{{.+}}
// CHECK: graph.linear %[[E]], %[[W]] : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
// CHECK-NOT: graph.pack_weights
func.func @tied_table(%ids: tensor<?x?xi64>) -> tensor<?x?x64xf32> {
  %w = graph.weight <table> : tensor<64x64xf32>
  %e = graph.embedding %w, %ids : (tensor<64x64xf32>, tensor<?x?xi64>) -> tensor<?x?x64xf32>
  %y = graph.linear %e, %w : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}

// -----

// Tests that linears already in the [n, k] layout are left as they are, and
// so is a weight one [k, n] and one [n, k] linear share.
// CHECK-LABEL: func.func @already_transposed
// CHECK-NOT: graph.pack_weights
// CHECK: %[[W:.+]] = graph.weight <lm_head> : tensor<512x64xf32>
// CHECK: %[[S:.+]] = graph.weight <square> : tensor<64x64xf32>
// CHECK: graph.linear %{{.+}}, %[[W]] {transpose_weight = true} : (tensor<?x?x64xf32>, tensor<512x64xf32>) -> tensor<?x?x512xf32>
// CHECK: graph.linear %{{.+}}, %[[S]] : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
// CHECK: graph.linear %{{.+}}, %[[S]] {transpose_weight = true} : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
// CHECK-NOT: graph.pack_weights
func.func @already_transposed(%x: tensor<?x?x64xf32>) -> (tensor<?x?x512xf32>, tensor<?x?x64xf32>) {
  %w = graph.weight <lm_head> : tensor<512x64xf32>
  %s = graph.weight <square> : tensor<64x64xf32>
  %y = graph.linear %x, %w {transpose_weight = true} : (tensor<?x?x64xf32>, tensor<512x64xf32>) -> tensor<?x?x512xf32>
  %a = graph.linear %x, %s : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
  %b = graph.linear %a, %s {transpose_weight = true} : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
  return %y, %b : tensor<?x?x512xf32>, tensor<?x?x64xf32>
}

// -----

// Tests that a weight a pack reads is transposed only through that pack, and
// a weight used as a linear's input rather than its weight is left alone.
// CHECK-LABEL: func.func @through_pack_only
// CHECK: %[[WG:.+]] = graph.weight <gate> : tensor<64x160xf32>
// CHECK: %[[WU:.+]] = graph.weight <up> : tensor<64x160xf32>
// CHECK: %[[T:.+]] = graph.pack_weights %[[WG]], %[[WU]] {axis = 1 : i64, transpose} : (tensor<64x160xf32>, tensor<64x160xf32>) -> tensor<320x64xf32>
// CHECK: %[[I:.+]] = graph.weight <as_input> : tensor<8x64xf32>
// CHECK-NOT: graph.pack_weights
// CHECK: %[[Y:.+]] = graph.linear %{{.+}}, %[[T]] {transpose_weight = true}
// CHECK: graph.linear %[[I]], %[[T]] {transpose_weight = true} : (tensor<8x64xf32>, tensor<320x64xf32>) -> tensor<8x320xf32>
func.func @through_pack_only(%x: tensor<?x?x64xf32>) -> (tensor<?x?x320xf32>, tensor<8x320xf32>) {
  %wg = graph.weight <gate> : tensor<64x160xf32>
  %wu = graph.weight <up> : tensor<64x160xf32>
  %w = graph.pack_weights %wg, %wu {axis = 1 : i64} : (tensor<64x160xf32>, tensor<64x160xf32>) -> tensor<64x320xf32>
  %i = graph.weight <as_input> : tensor<8x64xf32>
  %y = graph.linear %x, %w : (tensor<?x?x64xf32>, tensor<64x320xf32>) -> tensor<?x?x320xf32>
  %z = graph.linear %i, %w : (tensor<8x64xf32>, tensor<64x320xf32>) -> tensor<8x320xf32>
  return %y, %z : tensor<?x?x320xf32>, tensor<8x320xf32>
}
