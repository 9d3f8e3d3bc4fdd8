// A graph-dialect module whose weight W is a file reference; mlir-weight-file.test replaces
// REFERENCE with the path to try.
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = graph.weight <W> : tensor<4xf32>
  %y = graph.add %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
{-#
  dialect_resources: {
    graph: {
      W: "file:REFERENCE:0:16"
    }
  }
#-}
