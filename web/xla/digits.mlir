module @jit_predict attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<1x8x8xf32>, %arg1: tensor<64x32xf32>, %arg2: tensor<32xf32>, %arg3: tensor<32x10xf32>, %arg4: tensor<10xf32>) -> (tensor<1x10xf32> {jax.result_info = "result[0]"}, tensor<1xi32> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.reshape %arg0 : (tensor<1x8x8xf32>) -> tensor<1x64xf32>
    %cst = stablehlo.constant dense<1.600000e+01> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<1x64xf32>
    %2 = stablehlo.divide %0, %1 : tensor<1x64xf32>
    %3 = stablehlo.dot_general %2, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<1x64xf32>, tensor<64x32xf32>) -> tensor<1x32xf32>
    %4 = stablehlo.broadcast_in_dim %arg2, dims = [1] : (tensor<32xf32>) -> tensor<1x32xf32>
    %5 = stablehlo.add %3, %4 : tensor<1x32xf32>
    %6 = stablehlo.tanh %5 : tensor<1x32xf32>
    %7 = stablehlo.dot_general %6, %arg3, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<1x32xf32>, tensor<32x10xf32>) -> tensor<1x10xf32>
    %8 = stablehlo.broadcast_in_dim %arg4, dims = [1] : (tensor<10xf32>) -> tensor<1x10xf32>
    %9 = stablehlo.add %7, %8 : tensor<1x10xf32>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %10 = stablehlo.reduce(%9 init: %cst_0) applies stablehlo.maximum across dimensions = [1] : (tensor<1x10xf32>, tensor<f32>) -> tensor<1xf32>
    %cst_1 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %11 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<1xf32>
    %12 = stablehlo.maximum %11, %10 : tensor<1xf32>
    %13 = stablehlo.broadcast_in_dim %12, dims = [0] : (tensor<1xf32>) -> tensor<1x1xf32>
    %14 = stablehlo.broadcast_in_dim %13, dims = [0, 1] : (tensor<1x1xf32>) -> tensor<1x10xf32>
    %15 = stablehlo.subtract %9, %14 : tensor<1x10xf32>
    %16 = stablehlo.exponential %15 : tensor<1x10xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %17 = stablehlo.reduce(%16 init: %cst_2) applies stablehlo.add across dimensions = [1] : (tensor<1x10xf32>, tensor<f32>) -> tensor<1xf32>
    %18 = stablehlo.broadcast_in_dim %17, dims = [0] : (tensor<1xf32>) -> tensor<1x1xf32>
    %19 = stablehlo.broadcast_in_dim %18, dims = [0, 1] : (tensor<1x1xf32>) -> tensor<1x10xf32>
    %20 = stablehlo.divide %16, %19 : tensor<1x10xf32>
    %21 = call @argmax(%9) : (tensor<1x10xf32>) -> tensor<1xi32>
    return %20, %21 : tensor<1x10xf32>, tensor<1xi32>
  }
  func.func private @argmax(%arg0: tensor<1x10xf32>) -> tensor<1xi32> {
    %0 = stablehlo.iota dim = 1 : tensor<1x10xi32>
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1:2 = stablehlo.reduce(%arg0 init: %cst), (%0 init: %c) across dimensions = [1] : (tensor<1x10xf32>, tensor<1x10xi32>, tensor<f32>, tensor<i32>) -> (tensor<1xf32>, tensor<1xi32>)
     reducer(%arg1: tensor<f32>, %arg3: tensor<f32>) (%arg2: tensor<i32>, %arg4: tensor<i32>)  {
      %2 = stablehlo.compare GT, %arg1, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %3 = stablehlo.compare NE, %arg1, %arg1, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %4 = stablehlo.or %2, %3 : tensor<i1>
      %5 = stablehlo.compare EQ, %arg1, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %6 = stablehlo.compare LT, %arg2, %arg4, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %7 = stablehlo.and %5, %6 : tensor<i1>
      %8 = stablehlo.or %4, %7 : tensor<i1>
      %9 = stablehlo.select %4, %arg1, %arg3 : tensor<i1>, tensor<f32>
      %10 = stablehlo.select %8, %arg2, %arg4 : tensor<i1>, tensor<i32>
      stablehlo.return %9, %10 : tensor<f32>, tensor<i32>
    }
    return %1#1 : tensor<1xi32>
  }
}
