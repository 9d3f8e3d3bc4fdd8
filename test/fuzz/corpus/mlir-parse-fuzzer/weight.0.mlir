// Round trip of graph.weight in its custom form `graph.weight <key> : type`.

// Tests that graph.weight round-trips with its key, its type and its hex blob.
// CHECK-LABEL: func.func @weights
// CHECK: %[[W:.+]] = graph.weight <w0> : tensor<2xf32>
// CHECK: %[[B:.+]] = graph.weight <my.mask> : tensor<2xi1>
// CHECK: return %[[W]], %[[B]]
// CHECK: dialect_resources
// CHECK: graph:
// CHECK-DAG: w0: "0x040000000000803F00000040"
// CHECK-DAG: "0x040000000100"
func.func @weights() -> (tensor<2xf32>, tensor<2xi1>) {
  %0 = graph.weight <w0> : tensor<2xf32>
  %1 = graph.weight <my.mask> : tensor<2xi1>
  return %0, %1 : tensor<2xf32>, tensor<2xi1>
}

{-#
  dialect_resources: {
    graph: {
      w0: "0x040000000000803F00000040",
      my.mask: "0x040000000100"
    }
  }
#-}