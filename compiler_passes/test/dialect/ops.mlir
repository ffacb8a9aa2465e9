// The disc_ral ops print and parse back unchanged.
// RUN: ral-opt %s | FileCheck %s
// RUN: ral-opt %s | ral-opt | FileCheck %s
// The generic form parses back too.
// RUN: ral-opt %s --mlir-print-op-generic | ral-opt | FileCheck %s

// CHECK-LABEL: func @ops
// CHECK-SAME: (%[[CTX:.*]]: !disc_ral.context, %[[N:.*]]: index)
func.func @ops(%ctx: !disc_ral.context, %n: index) {
  // CHECK: %[[X:.*]] = disc_ral.recv_input %[[CTX]], 0 : memref<?x4xf32>
  %x = disc_ral.recv_input %ctx, 0 : memref<?x4xf32>
  // CHECK: %[[W:.*]] = disc_ral.recv_input %[[CTX]], 1 : memref<4x8xf32>
  %w = disc_ral.recv_input %ctx, 1 : memref<4x8xf32>
  // CHECK: %[[Y:.*]] = disc_ral.alloc %[[CTX]](%[[N]]) : memref<?x8xf32>
  %y = disc_ral.alloc %ctx(%n) : memref<?x8xf32>
  %f = arith.constant false
  // CHECK: disc_ral.dispatch %[[CTX]], "ral_gemm", "cpu" (%[[X]], %[[W]], %[[Y]], %{{.*}}, %{{.*}}) : (memref<?x4xf32>, memref<4x8xf32>, memref<?x8xf32>, i1, i1) -> ()
  disc_ral.dispatch %ctx, "ral_gemm", "cpu" (%x, %w, %y, %f, %f) : (memref<?x4xf32>, memref<4x8xf32>, memref<?x8xf32>, i1, i1) -> ()
  // CHECK: %{{.*}}:2 = disc_ral.dispatch %[[CTX]], "ral_stats", "cpu" (%[[Y]]) : (memref<?x8xf32>) -> (f32, i64)
  %s:2 = disc_ral.dispatch %ctx, "ral_stats", "cpu" (%y) : (memref<?x8xf32>) -> (f32, i64)
  // CHECK: disc_ral.send_output %[[CTX]], 0, %[[Y]] : memref<?x8xf32>
  disc_ral.send_output %ctx, 0, %y : memref<?x8xf32>
  %t = disc_ral.alloc %ctx() : memref<16xi32>
  // CHECK: disc_ral.dealloc %[[CTX]], %{{.*}} : memref<16xi32>
  disc_ral.dealloc %ctx, %t : memref<16xi32>
  return
}
