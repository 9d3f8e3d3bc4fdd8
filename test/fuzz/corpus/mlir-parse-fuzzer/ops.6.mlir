

// Tests that graph.clip round-trips with both, either and neither bound.
// CHECK-LABEL: func.func @clip
// CHECK-SAME: (%[[X:.+]]: tensor<?xf32>, %[[LO:.+]]: tensor<f32>, %[[HI:.+]]: tensor<f32>)
// CHECK: graph.clip %[[X]] min(%[[LO]]) max(%[[HI]]) : (tensor<?xf32>, tensor<f32>, tensor<f32>) -> tensor<?xf32>
// CHECK: graph.clip %[[X]] min(%[[LO]]) : (tensor<?xf32>, tensor<f32>) -> tensor<?xf32>
// CHECK: graph.clip %[[X]] max(%[[HI]]) : (tensor<?xf32>, tensor<f32>) -> tensor<?xf32>
// CHECK: graph.clip %[[X]] : (tensor<?xf32>) -> tensor<?xf32>
func.func @clip(%x: tensor<?xf32>, %lo: tensor<f32>, %hi: tensor<f32>)
    -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
  %0 = graph.clip %x min(%lo) max(%hi) : (tensor<?xf32>, tensor<f32>, tensor<f32>) -> tensor<?xf32>
  %1 = graph.clip %x min(%lo) : (tensor<?xf32>, tensor<f32>) -> tensor<?xf32>
  %2 = graph.clip %x max(%hi) : (tensor<?xf32>, tensor<f32>) -> tensor<?xf32>
  %3 = graph.clip %x : (tensor<?xf32>) -> tensor<?xf32>
  return %0, %1, %2, %3 : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
}
