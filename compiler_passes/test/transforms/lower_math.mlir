// disc-ral-lower-math: f16/bf16 math runs in f32; f32 exp/expm1/log/log1p/tanh/erf are expanded
// inline in f32 (or in f64 as "<op>.f64"; no call either way, so loops vectorize); other ops LLVM
// cannot lower (and f64 log1p/expm1, which its lowering gets wrong for small x) call libm; f64 ->
// bf16 truncation rounds to odd first.
// RUN: ral-opt %s -disc-ral-lower-math | FileCheck %s
// RUN: ral-opt %s "-disc-ral-lower-math=inline-f32=exp.f64,tanh.f64,log1p" | FileCheck %s --check-prefix=F64
// RUN: ral-opt %s "-disc-ral-lower-math=inline-f32=" | FileCheck %s --check-prefix=LIBM
// RUN: not ral-opt %s "-disc-ral-lower-math=inline-f32=exp,sin" 2>&1 | FileCheck %s --check-prefix=BAD
// With libm-calls=false (GPU kernels), the ops without an intrinsic stay for the GPU lowering.
// RUN: ral-opt %s "-disc-ral-lower-math=libm-calls=false" | FileCheck %s --check-prefix=NOLIBM
// NOLIBM-NOT: func.func private
// NOLIBM-LABEL: func.func @libm
// NOLIBM-NOT: call @
// NOLIBM: math.erf %{{.*}} : f64
// NOLIBM: math.expm1 %{{.*}} : f64
// NOLIBM: math.atan2 %{{.*}}, %{{.*}} : f32
// BAD: inline-f32 must name ops among exp, expm1, log, log1p, tanh, erf (each optionally with .f64); got 'exp,sin'

// CHECK-NOT: func.func private @tanhf
// CHECK-NOT: func.func private @log1pf
// CHECK-DAG: func.func private @erf(f64) -> f64
// CHECK-DAG: func.func private @expm1(f64) -> f64
// CHECK-DAG: func.func private @atan2f(f32, f32) -> f32

// CHECK-LABEL: func.func @libm
// CHECK-NOT: call @tanhf
// CHECK-NOT: call @log1pf
// CHECK-NOT: math.exp {{.*}} : f32
// The f32 ops become f32 arithmetic and bit operations.
// CHECK-NOT: f32 to f64
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: call @erf(%{{.*}}) : (f64) -> f64
// CHECK: call @expm1(%{{.*}}) : (f64) -> f64
// CHECK: call @atan2f(%{{.*}}, %{{.*}}) : (f32, f32) -> f32
// What LLVM lowers well stays.
// CHECK: math.sqrt %{{.*}} : f64

// F64-NOT: call @tanhf
// F64-NOT: call @log1pf
// F64-LABEL: func.func @libm
// F64: arith.extf %{{.*}} : f32 to f64
// F64: arith.truncf %{{.*}} : f64 to f32

// LIBM-DAG: func.func private @tanhf(f32) -> f32
// LIBM-DAG: func.func private @log1pf(f32) -> f32
// LIBM-LABEL: func.func @libm
// LIBM: call @tanhf(%{{.*}}) : (f32) -> f32
// LIBM: call @erf(%{{.*}}) : (f64) -> f64
// LIBM: call @log1pf(%{{.*}}) : (f32) -> f32
// LIBM: call @expm1(%{{.*}}) : (f64) -> f64
// LIBM: call @atan2f(%{{.*}}, %{{.*}}) : (f32, f32) -> f32
// LIBM: math.exp %{{.*}} : f32
// LIBM: math.sqrt %{{.*}} : f64
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
// CHECK-DAG: arith.extf %{{.*}} : f16 to f32
// CHECK-DAG: arith.extf %{{.*}} : bf16 to f32
// CHECK-NOT: call
// CHECK-DAG: arith.truncf %{{.*}}: f32 to bf16
// CHECK-DAG: arith.truncf %{{.*}}: f32 to f16
// LIBM-LABEL: func.func @half
// LIBM: %[[W:.*]] = arith.extf %{{.*}} : bf16 to f32
// LIBM: %[[T:.*]] = call @tanhf(%[[W]])
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
