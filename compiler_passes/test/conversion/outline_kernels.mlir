// disc-ral-outline-kernels: an outermost parallel loop becomes a ral_host_kernel-shaped function
// (workgroup, args) and a disc_ral.launch sized from the trip count and the work per iteration;
// loops that call RAL stay host code.
// RUN: ral-opt %s -disc-ral-outline-kernels | FileCheck %s
// RUN: ral-opt %s "-disc-ral-outline-kernels=grain=64" | FileCheck %s --check-prefix=GRAIN

// CHECK-LABEL: func.func @scale
// CHECK-SAME: (%[[CTX:.*]]: !disc_ral.context, %[[X:.*]]: memref<?x?xf32>, %[[Y:.*]]: memref<?x?xf32>, %[[N:.*]]: index, %[[M:.*]]: index)
// The work of one row is its m inner iterations; each workgroup gets ceil(16384 / m) rows.
// CHECK: %[[G:.*]] = arith.constant 16384 : index
// CHECK: %[[PER:.*]] = arith.ceildivsi %[[G]]
// CHECK: %[[ROWS:.*]] = arith.minsi
// CHECK: %[[GROUPS:.*]] = arith.ceildivsi %{{.*}}, %[[ROWS]]
// CHECK: disc_ral.launch %[[CTX]], @ral_kernel_0 grid(%[[GROUPS]], %{{.*}}, %{{.*}}) block(%[[ROWS]], %{{.*}}, %{{.*}}) args(%[[N]], %[[X]], %[[Y]], %[[M]]) : index, memref<?x?xf32>, memref<?x?xf32>, index
// CHECK-NOT: scf.parallel
// CHECK: return
// GRAIN: arith.constant 64 : index

// The loop calling RAL (a custom call) is not outlined.
// CHECK-LABEL: func.func @calls_ral
// CHECK: scf.parallel
// CHECK: disc_ral.dispatch

// CHECK-LABEL: func.func @ral_kernel_0(
// CHECK-SAME: %[[WG:.*]]: !llvm.ptr, %[[ARGS:.*]]: !llvm.ptr) attributes {disc_ral.kernel}
// group_id.x and block.x of ral_host_workgroup.
// CHECK: llvm.getelementptr %[[WG]][24] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK: llvm.getelementptr %[[WG]][12] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK: llvm.getelementptr %[[ARGS]][1]
// CHECK: builtin.unrealized_conversion_cast {{.*}} to memref<?x?xf32>
// Constants are cloned, not passed.
// CHECK: arith.constant 2.000000e+00 : f32
// CHECK: scf.parallel
// CHECK: arith.mulf
// CHECK: return

func.func @scale(%ctx: !disc_ral.context, %x: memref<?x?xf32>, %y: memref<?x?xf32>, %n: index, %m: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %two = arith.constant 2.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.parallel (%j) = (%c0) to (%m) step (%c1) {
      %v = memref.load %x[%i, %j] : memref<?x?xf32>
      %w = arith.mulf %v, %two : f32
      memref.store %w, %y[%i, %j] : memref<?x?xf32>
    }
  }
  return
}

func.func @calls_ral(%ctx: !disc_ral.context, %x: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    disc_ral.dispatch %ctx, "my_op", "cpu" (%x) : (memref<?xf32>) -> ()
  }
  return
}
