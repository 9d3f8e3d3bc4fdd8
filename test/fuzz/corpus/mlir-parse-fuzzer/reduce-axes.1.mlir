

// Tests that an integer reduction with an axes operand round-trips.
// CHECK-LABEL: func.func @reduce_axes_int
// CHECK: graph.reduce_sum %{{.+}} axes(%{{.+}}) : (tensor<?x4xi64>, tensor<1xi64>) -> tensor<?x1xi64>
func.func @reduce_axes_int(%x: tensor<?x4xi64>, %a: tensor<1xi64>) -> tensor<?x1xi64> {
  %0 = graph.reduce_sum %x axes(%a) : (tensor<?x4xi64>, tensor<1xi64>) -> tensor<?x1xi64>
  return %0 : tensor<?x1xi64>
}