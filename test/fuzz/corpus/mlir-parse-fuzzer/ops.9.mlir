

// Tests that comparisons produce i1 and that graph.and / graph.or take i1.
// CHECK-LABEL: func.func @compare_and_logic
// CHECK-SAME: (%[[A:.+]]: tensor<?xi64>, %[[B:.+]]: tensor<i64>)
// CHECK: %[[EQ:.+]] = graph.equal %[[A]], %[[B]] : (tensor<?xi64>, tensor<i64>) -> tensor<?xi1>
// CHECK: %[[LT:.+]] = graph.less %[[A]], %[[B]] : (tensor<?xi64>, tensor<i64>) -> tensor<?xi1>
// CHECK: %[[LE:.+]] = graph.less_or_equal %[[A]], %[[B]] : (tensor<?xi64>, tensor<i64>) -> tensor<?xi1>
// CHECK: %[[GT:.+]] = graph.greater %[[A]], %[[B]] : (tensor<?xi64>, tensor<i64>) -> tensor<?xi1>
// CHECK: %[[GE:.+]] = graph.greater_or_equal %[[A]], %[[B]] : (tensor<?xi64>, tensor<i64>) -> tensor<?xi1>
// CHECK: %[[AND:.+]] = graph.and %[[EQ]], %[[LT]] : (tensor<?xi1>, tensor<?xi1>) -> tensor<?xi1>
// CHECK: graph.or %[[AND]], %[[GE]] : (tensor<?xi1>, tensor<?xi1>) -> tensor<?xi1>
func.func @compare_and_logic(%a: tensor<?xi64>, %b: tensor<i64>) -> (tensor<?xi1>, tensor<?xi1>, tensor<?xi1>) {
  %0 = graph.equal %a, %b : (tensor<?xi64>, tensor<i64>) -> tensor<?xi1>
  %1 = graph.less %a, %b : (tensor<?xi64>, tensor<i64>) -> tensor<?xi1>
  %2 = graph.less_or_equal %a, %b : (tensor<?xi64>, tensor<i64>) -> tensor<?xi1>
  %3 = graph.greater %a, %b : (tensor<?xi64>, tensor<i64>) -> tensor<?xi1>
  %4 = graph.greater_or_equal %a, %b : (tensor<?xi64>, tensor<i64>) -> tensor<?xi1>
  %5 = graph.and %0, %1 : (tensor<?xi1>, tensor<?xi1>) -> tensor<?xi1>
  %6 = graph.or %5, %4 : (tensor<?xi1>, tensor<?xi1>) -> tensor<?xi1>
  return %2, %3, %6 : tensor<?xi1>, tensor<?xi1>, tensor<?xi1>
}
