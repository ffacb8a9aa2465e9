// disc-ral-lower-to-library-calls: matmuls and custom calls become disc_ral.dispatch, allocations
// come from the host context.
// RUN: ral-opt %s -disc-ral-lower-to-library-calls -split-input-file | FileCheck %s
// RUN: ral-opt %s -disc-ral-lower-to-library-calls=device=gpu -split-input-file | FileCheck %s --check-prefix=GPU

// A zero-filled output: the fill goes, gemm writes c.
// CHECK-LABEL: func @matmul_fill
// CHECK-SAME: (%[[CTX:.*]]: !disc_ral.context, %[[A:.*]]: memref<?x4xf32>, %[[B:.*]]: memref<4x8xf32>, %[[N:.*]]: index)
// CHECK: %[[C:.*]] = disc_ral.alloc %[[CTX]](%[[N]]) : memref<?x8xf32>
// CHECK-NOT: linalg.fill
// CHECK: %[[F:.*]] = arith.constant false
// CHECK-NEXT: disc_ral.dispatch %[[CTX]], "ral_gemm", "cpu" (%[[A]], %[[B]], %[[C]], %[[F]], %[[F]]) : (memref<?x4xf32>, memref<4x8xf32>, memref<?x8xf32>, i1, i1) -> ()
// CHECK-NOT: linalg.matmul
// CHECK: disc_ral.dealloc %[[CTX]], %[[C]] : memref<?x8xf32>
// GPU-LABEL: func @matmul_fill
// GPU: disc_ral.dispatch %{{.*}}, "ral_gemm", "gpu"
func.func @matmul_fill(%ctx: !disc_ral.context, %a: memref<?x4xf32>, %b: memref<4x8xf32>, %n: index) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc(%n) : memref<?x8xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<?x8xf32>)
  linalg.matmul ins(%a, %b : memref<?x4xf32>, memref<4x8xf32>) outs(%c : memref<?x8xf32>)
  memref.dealloc %c : memref<?x8xf32>
  return
}

// -----

// Accumulating into a buffer that holds data: gemm into a temporary, then c += tmp.
// CHECK-LABEL: func @matmul_accumulate
// CHECK-SAME: (%[[CTX:.*]]: !disc_ral.context, %[[A:.*]]: memref<?x?xf64>, %[[B:.*]]: memref<?x?xf64>, %[[C:.*]]: memref<?x?xf64>)
// CHECK-DAG: %[[D0:.*]] = memref.dim %[[C]], %c0
// CHECK-DAG: %[[D1:.*]] = memref.dim %[[C]], %c1
// CHECK: %[[T:.*]] = disc_ral.alloc %[[CTX]](%[[D0]], %[[D1]]) : memref<?x?xf64>
// CHECK: disc_ral.dispatch %[[CTX]], "ral_gemm", "cpu" (%[[A]], %[[B]], %[[T]], %{{.*}}, %{{.*}}) : (memref<?x?xf64>, memref<?x?xf64>, memref<?x?xf64>, i1, i1) -> ()
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[T]] : memref<?x?xf64>) outs(%[[C]] : memref<?x?xf64>)
// CHECK: arith.addf
// CHECK: disc_ral.dealloc %[[CTX]], %[[T]]
func.func @matmul_accumulate(%ctx: !disc_ral.context, %a: memref<?x?xf64>, %b: memref<?x?xf64>, %c: memref<?x?xf64>) {
  linalg.matmul ins(%a, %b : memref<?x?xf64>, memref<?x?xf64>) outs(%c : memref<?x?xf64>)
  return
}

// -----

// A use of the buffer between fill and matmul keeps the fill.
// CHECK-LABEL: func @fill_then_read
// CHECK: linalg.fill
// CHECK: memref.load
// CHECK: disc_ral.alloc
// CHECK: "ral_gemm"
// CHECK: linalg.generic
func.func @fill_then_read(%ctx: !disc_ral.context, %a: memref<2x2xf32>, %b: memref<2x2xf32>, %out: memref<f32>) {
  %zero = arith.constant 0.0 : f32
  %i = arith.constant 0 : index
  %c = memref.alloc() : memref<2x2xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<2x2xf32>)
  %v = memref.load %c[%i, %i] : memref<2x2xf32>
  memref.store %v, %out[] : memref<f32>
  linalg.matmul ins(%a, %b : memref<2x2xf32>, memref<2x2xf32>) outs(%c : memref<2x2xf32>)
  return
}

// -----

// CHECK-LABEL: func @batch_matmul
// CHECK: disc_ral.dispatch %{{.*}}, "ral_batch_gemm", "cpu" (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (memref<?x?x?xf16>, memref<?x?x?xf16>, memref<?x?x?xf16>, i1, i1) -> ()
// CHECK-NOT: linalg.batch_matmul
func.func @batch_matmul(%ctx: !disc_ral.context, %a: memref<?x?x?xf16>, %b: memref<?x?x?xf16>, %d0: index, %d1: index, %d2: index) {
  %zero = arith.constant 0.0 : f16
  %c = memref.alloc(%d0, %d1, %d2) : memref<?x?x?xf16>
  linalg.fill ins(%zero : f16) outs(%c : memref<?x?x?xf16>)
  linalg.batch_matmul ins(%a, %b : memref<?x?x?xf16>, memref<?x?x?xf16>) outs(%c : memref<?x?x?xf16>)
  return
}

// -----

// No kernel for integer products: the matmul stays for linalg -> loops.
// CHECK-LABEL: func @integer_matmul
// CHECK: linalg.matmul
// CHECK-NOT: disc_ral.dispatch
func.func @integer_matmul(%ctx: !disc_ral.context, %a: memref<2x3xi32>, %b: memref<3x4xi32>, %c: memref<2x4xi32>) {
  linalg.matmul ins(%a, %b : memref<2x3xi32>, memref<3x4xi32>) outs(%c : memref<2x4xi32>)
  return
}

// -----

// Custom calls: the call becomes a dispatch with the marked target and device; the declaration
// goes once nothing calls it.
// CHECK-NOT: func private @topk
// CHECK-LABEL: func @custom_call
// CHECK-SAME: (%[[CTX:.*]]: !disc_ral.context, %[[X:.*]]: memref<?x?xf32>, %[[K:.*]]: i64)
// CHECK: %[[R:.*]]:2 = disc_ral.dispatch %[[CTX]], "ral_topk", "cpu" (%[[X]], %[[K]]) : (memref<?x?xf32>, i64) -> (memref<?x?xf32>, memref<?x?xi64>)
// CHECK: disc_ral.dispatch %[[CTX]], "ral_log", "vulkan" (%[[R]]#0) : (memref<?x?xf32>) -> ()
// CHECK-NOT: call @
func.func private @topk(memref<?x?xf32>, i64) -> (memref<?x?xf32>, memref<?x?xi64>) attributes {disc_ral.custom_call = "ral_topk"}
func.func private @log(memref<?x?xf32>) attributes {disc_ral.custom_call = "ral_log", disc_ral.device = "vulkan"}
func.func @custom_call(%ctx: !disc_ral.context, %x: memref<?x?xf32>, %k: i64) {
  %v, %i = call @topk(%x, %k) : (memref<?x?xf32>, i64) -> (memref<?x?xf32>, memref<?x?xi64>)
  call @log(%v) : (memref<?x?xf32>) -> ()
  return
}

// -----

// Allocations of any element type; static shapes take no sizes.
// CHECK-LABEL: func @allocs
// CHECK: disc_ral.alloc %{{.*}}() : memref<4x4xindex>
// CHECK: disc_ral.alloc %{{.*}}(%{{.*}}) : memref<?xi8>
// More than ral_alloc's 64 bytes of alignment is kept for disc-ral-to-llvm.
// CHECK: disc_ral.alloc %{{.*}}() {alignment = 4096 : i64} : memref<8xf64>
// CHECK-NOT: memref.alloc
// CHECK: memref.alloca
func.func @allocs(%ctx: !disc_ral.context, %n: index) {
  %a = memref.alloc() : memref<4x4xindex>
  %b = memref.alloc(%n) {alignment = 64} : memref<?xi8>
  %d = memref.alloc() {alignment = 4096} : memref<8xf64>
  %c = memref.alloca() : memref<4xf32>
  return
}

// -----

// memref.copy between contiguous buffers stays (it lowers to llvm.memcpy); a strided one becomes
// linalg.copy, compiled to loops, instead of a call of MLIR's runtime library.
// CHECK-LABEL: func @copies
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<4x4xf32> to memref<4x4xf32>
// CHECK: linalg.copy ins(%{{.*}} : memref<2x2xf32, strided<[4, 1], offset: 5>>) outs(%{{.*}} : memref<2x2xf32>)
// CHECK-NOT: memref.copy
func.func @copies(%a: memref<4x4xf32>, %b: memref<4x4xf32>, %c: memref<2x2xf32>) {
  memref.copy %a, %b : memref<4x4xf32> to memref<4x4xf32>
  %v = memref.subview %a[1, 1] [2, 2] [1, 1] : memref<4x4xf32> to memref<2x2xf32, strided<[4, 1], offset: 5>>
  memref.copy %v, %c : memref<2x2xf32, strided<[4, 1], offset: 5>> to memref<2x2xf32>
  return
}
