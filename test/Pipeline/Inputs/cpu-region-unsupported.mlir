// A fusion group holding an op no elementwise kernel of the cpu backend runs (target-cpu.test).
func.func @main(%x: tensor<?x?x4xf32> {graph.name = "X"}) -> (tensor<?x?x4xf32> {graph.name = "Y"}) {
  %r = graph.fusion_group %x : (tensor<?x?x4xf32>) -> tensor<?x?x4xf32> {
  ^bb0(%a: tensor<?x?x4xf32>):
    %s = graph.softmax %a {axis = 2 : i64} : tensor<?x?x4xf32>
    graph.yield %s : tensor<?x?x4xf32>
  }
  return %r : tensor<?x?x4xf32>
}
