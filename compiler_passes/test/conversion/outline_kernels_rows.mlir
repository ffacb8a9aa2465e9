// disc-ral-outline-kernels on the cpu: rows of a loop whose body is parallel loops are split
// in parts (grid y), so a loop over a batch of 1 still spreads over the thread pool.
// RUN: ral-opt %s -disc-ral-outline-kernels | FileCheck %s

// A row whose body is parallel loops is split in parts too (grid y): at batch 1 a
// [n, h, w, c] loop would otherwise be one workgroup. The parts: ceil(work / grain), at most the
// longest inner loop's trips; part p of each inner loop runs its first dimension's slice p.
// CHECK-LABEL: func.func @split_rows
// CHECK-SAME: (%[[CTX:.*]]: !disc_ral.context, %[[X:.*]]: memref<?x?x?xf32>, %[[N:.*]]: index, %[[H:.*]]: index, %[[W:.*]]: index)
// CHECK: %[[WANTED:.*]] = arith.ceildivsi %{{.*}}, %c16384 : index
// CHECK: %[[PARTS:.*]] = arith.minsi %[[WANTED]], %{{.*}} : index
// CHECK: disc_ral.launch %[[CTX]], @ral_kernel_{{[0-9]+}} grid(%{{.*}}, %[[PARTS]], %{{.*}}) block(

// Rows that store outside their inner loop, or whose inner loops depend on each other, are
// not split: one part.
// CHECK-LABEL: func.func @unsplit_rows
// CHECK: disc_ral.launch %{{.*}}, @ral_kernel_{{[0-9]+}} grid(%{{.*}}, %[[ONE:.*]], %[[ONE]])
// CHECK: disc_ral.launch %{{.*}}, @ral_kernel_{{[0-9]+}} grid(%{{.*}}, %[[ONE2:.*]], %[[ONE2]])

// The split kernel reads group_id.y (28) and grid.y (4) and slices the inner loop.
// CHECK-LABEL: func.func @ral_kernel_{{[0-9]+}}(
// CHECK-SAME: %[[WG:.*]]: !llvm.ptr, %{{.*}}: !llvm.ptr) attributes {disc_ral.kernel}
// CHECK: llvm.getelementptr %[[WG]][28] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK: llvm.getelementptr %[[WG]][4] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-NEXT: llvm.load
// CHECK-NEXT: %[[NPARTS:.*]] = arith.index_castui
// CHECK: scf.parallel (%[[I:.*]]) =
// CHECK: %[[SLICE:.*]] = arith.ceildivsi %{{.*}}, %[[NPARTS]] : index
// CHECK: %[[FROM:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK: %[[TO:.*]] = arith.minsi %{{.*}}, %{{.*}} : index
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%[[FROM]], %{{.*}}) to (%[[TO]], %{{.*}})
// CHECK: memref.store
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}})
// CHECK: memref.store
// Fresh buffers (distinct from %x and from each other) for the two inner loops to write.
func.func @split_rows(%ctx: !disc_ral.context, %x: memref<?x?x?xf32>, %n: index, %h: index,
                      %w: index) -> (memref<?x?x?xf32>, memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %two = arith.constant 2.0 : f32
  %y = memref.alloc(%n, %h, %w) : memref<?x?x?xf32>
  %z = memref.alloc(%n, %w) : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %first = memref.load %x[%i, %c0, %c0] : memref<?x?x?xf32>
    scf.parallel (%j, %k) = (%c0, %c0) to (%h, %w) step (%c1, %c1) {
      %v = memref.load %x[%i, %j, %k] : memref<?x?x?xf32>
      %s = arith.mulf %v, %first : f32
      memref.store %s, %y[%i, %j, %k] : memref<?x?x?xf32>
    }
    scf.parallel (%k) = (%c0) to (%w) step (%c1) {
      memref.store %two, %z[%i, %k] : memref<?x?xf32>
    }
  }
  return %y, %z : memref<?x?x?xf32>, memref<?x?xf32>
}

func.func @unsplit_rows(%ctx: !disc_ral.context, %x: memref<?x?xf32>, %y: memref<?x?xf32>,
                        %n: index, %m: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %two = arith.constant 2.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %two, %y[%i, %c0] : memref<?x?xf32>
    scf.parallel (%j) = (%c0) to (%m) step (%c1) {
      memref.store %two, %x[%i, %j] : memref<?x?xf32>
    }
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.parallel (%j) = (%c0) to (%m) step (%c1) {
      memref.store %two, %x[%i, %j] : memref<?x?xf32>
    }
    scf.parallel (%j) = (%c0) to (%m) step (%c1) {
      %v = memref.load %x[%i, %j] : memref<?x?xf32>
      memref.store %v, %y[%i, %j] : memref<?x?xf32>
    }
  }
  return
}
