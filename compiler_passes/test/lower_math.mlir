// disc-ral-lower-math: f16/bf16 math runs in f32; ops LLVM cannot lower (and log1p/expm1, which
// its lowering gets wrong for small x) call libm; f64 -> bf16 truncation rounds to odd first.
// RUN: ral-opt %s -disc-ral-lower-math | FileCheck %s

// CHECK-DAG: func.func private @tanhf(f32) -> f32
// CHECK-DAG: func.func private @erf(f64) -> f64
// CHECK-DAG: func.func private @log1pf(f32) -> f32
// CHECK-DAG: func.func private @expm1(f64) -> f64
// CHECK-DAG: func.func private @atan2f(f32, f32) -> f32

// CHECK-LABEL: func.func @libm
// CHECK: call @tanhf(%{{.*}}) : (f32) -> f32
// CHECK: call @erf(%{{.*}}) : (f64) -> f64
// CHECK: call @log1pf(%{{.*}}) : (f32) -> f32
// CHECK: call @expm1(%{{.*}}) : (f64) -> f64
// CHECK: call @atan2f(%{{.*}}, %{{.*}}) : (f32, f32) -> f32
// What LLVM lowers well stays.
// CHECK: math.exp %{{.*}} : f32
// CHECK: math.sqrt %{{.*}} : f64
func.func @libm(%a: f32, %b: f64) -> (f32, f64, f32, f64, f32, f32, f64) {
  %0 = math.tanh %a : f32
  %1 = math.erf %b : f64
  %2 = math.log1p %a : f32
  %3 = math.expm1 %b : f64
  %4 = math.atan2 %a, %a : f32
  %5 = math.exp %a : f32
  %6 = math.sqrt %b : f64
  return %0, %1, %2, %3, %4, %5, %6 : f32, f64, f32, f64, f32, f32, f64
}

// CHECK-LABEL: func.func @half
// CHECK-DAG: %[[H:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK-DAG: %[[W:.*]] = arith.extf %{{.*}} : bf16 to f32
// CHECK: %[[T:.*]] = call @tanhf(%[[W]])
// CHECK: arith.truncf %[[T]] {{.*}}: f32 to bf16
// CHECK: %[[E:.*]] = math.exp %[[H]] : f32
// CHECK: arith.truncf %[[E]] {{.*}}: f32 to f16
func.func @half(%a: bf16, %b: f16) -> (bf16, f16) {
  %0 = math.tanh %a : bf16
  %1 = math.exp %b : f16
  return %0, %1 : bf16, f16
}

// CHECK-LABEL: func.func @f64_to_bf16
// CHECK: %[[N:.*]] = arith.truncf %[[X:.*]] : f64 to f32
// CHECK: arith.cmpf ogt
// CHECK: arith.subi
// CHECK: arith.cmpf une
// CHECK: arith.ori
// CHECK: %[[ODD:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK: arith.truncf %[[ODD]] : f32 to bf16
// CHECK-NOT: f64 to bf16
func.func @f64_to_bf16(%x: f64) -> bf16 {
  %0 = arith.truncf %x : f64 to bf16
  return %0 : bf16
}
