// disc-ral-outline-kernels on the cpu: rows whose inner loops share buffers are split in parts
// when every part touches only its own slice of what they share (splittableInnerLoops).
// RUN: ral-opt %s -disc-ral-outline-kernels | FileCheck %s

// A LayerNorm's row loops share their per-row mean through a fresh buffer and a reshape of it,
// each access indexed by the loop's own row at the same place (stride 1, extent 128): split.
// CHECK-LABEL: func.func @split_shared_rows
// CHECK: %[[W1:.*]] = arith.ceildivsi %{{.*}}, %c16384 : index
// CHECK: %[[P1:.*]] = arith.minsi %[[W1]], %{{.*}} : index
// CHECK: disc_ral.launch %{{.*}}, @ral_kernel_[[K1:[0-9]+]] grid(%{{.*}}, %[[P1]], %{{.*}}) block(

// A spatial mean's scf.for nest (sliced by channel, every part would walk the whole window), a
// shared buffer read at another index than the one written, and a nest accumulating into one
// element for every channel keep the row whole: one part.
// CHECK-LABEL: func.func @mean_nest
// CHECK: disc_ral.launch %{{.*}}, @ral_kernel_{{[0-9]+}} grid(%{{.*}}, %[[ONE2:.*]], %[[ONE2]])
// CHECK-LABEL: func.func @unsplit_shared_rows
// CHECK: disc_ral.launch %{{.*}}, @ral_kernel_{{[0-9]+}} grid(%{{.*}}, %[[ONE3:.*]], %[[ONE3]])
// CHECK: disc_ral.launch %{{.*}}, @ral_kernel_{{[0-9]+}} grid(%{{.*}}, %[[ONE4:.*]], %[[ONE4]])

// Each part runs the same slice of the three row loops.
// CHECK: func.func @ral_kernel_[[K1]](
// CHECK: llvm.getelementptr %{{.*}}[4] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-NEXT: llvm.load
// CHECK-NEXT: %[[NP:.*]] = arith.index_castui
// CHECK: scf.parallel (%{{.*}}) =
// CHECK: arith.ceildivsi %{{.*}}, %[[NP]] : index
// CHECK: %[[FROM1:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK: %[[TO1:.*]] = arith.minsi %{{.*}}, %{{.*}} : index
// CHECK: scf.parallel (%{{.*}}) = (%[[FROM1]]) to (%[[TO1]])
// CHECK: memref.store
// CHECK: arith.ceildivsi %{{.*}}, %[[NP]] : index
// CHECK: %[[FROM2:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK: %[[TO2:.*]] = arith.minsi %{{.*}}, %{{.*}} : index
// CHECK: scf.parallel (%{{.*}}) = (%[[FROM2]]) to (%[[TO2]])
// CHECK: scf.for
// CHECK: arith.ceildivsi %{{.*}}, %[[NP]] : index
// CHECK: %[[FROM3:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK: %[[TO3:.*]] = arith.minsi %{{.*}}, %{{.*}} : index
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%[[FROM3]], %{{.*}}) to (%[[TO3]], %{{.*}})
// CHECK: arith.subf

func.func @split_shared_rows(%ctx: !disc_ral.context, %x: memref<?x128x768xf32>, %n: index)
    -> memref<?x128x768xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %c768 = arith.constant 768 : index
  %zero = arith.constant 0.0 : f32
  %mean = memref.alloc(%n) : memref<?x128xf32>
  %mean3 = memref.expand_shape %mean [[0], [1, 2]] output_shape [%n, 128, 1]
      : memref<?x128xf32> into memref<?x128x1xf32>
  %y = memref.alloc(%n) : memref<?x128x768xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.parallel (%j) = (%c0) to (%c128) step (%c1) {
      memref.store %zero, %mean[%i, %j] : memref<?x128xf32>
    }
    scf.parallel (%j) = (%c0) to (%c128) step (%c1) {
      %init = memref.load %mean3[%i, %j, %c0] : memref<?x128x1xf32>
      %sum = scf.for %k = %c0 to %c768 step %c1 iter_args(%acc = %init) -> (f32) {
        %v = memref.load %x[%i, %j, %k] : memref<?x128x768xf32>
        %a = arith.addf %acc, %v : f32
        scf.yield %a : f32
      }
      memref.store %sum, %mean3[%i, %j, %c0] : memref<?x128x1xf32>
    }
    scf.parallel (%j, %k) = (%c0, %c0) to (%c128, %c768) step (%c1, %c1) {
      %v = memref.load %x[%i, %j, %k] : memref<?x128x768xf32>
      %m = memref.load %mean[%i, %j] : memref<?x128xf32>
      %d = arith.subf %v, %m : f32
      memref.store %d, %y[%i, %j, %k] : memref<?x128x768xf32>
    }
  }
  return %y : memref<?x128x768xf32>
}

func.func @mean_nest(%ctx: !disc_ral.context, %x: memref<?x56x56x96xf32>, %n: index)
    -> memref<?x96xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c56 = arith.constant 56 : index
  %c96 = arith.constant 96 : index
  %zero = arith.constant 0.0 : f32
  %count = arith.constant 3136.0 : f32
  %acc = memref.alloc(%n) : memref<?x96xf32>
  %acc4 = memref.expand_shape %acc [[0], [1, 2, 3]] output_shape [%n, 96, 1, 1]
      : memref<?x96xf32> into memref<?x96x1x1xf32>
  %y = memref.alloc(%n) : memref<?x96xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.parallel (%c) = (%c0) to (%c96) step (%c1) {
      memref.store %zero, %acc[%i, %c] : memref<?x96xf32>
    }
    scf.for %h = %c0 to %c56 step %c1 {
      scf.for %w = %c0 to %c56 step %c1 {
        scf.parallel (%c) = (%c0) to (%c96) step (%c1) {
          %v = memref.load %x[%i, %h, %w, %c] : memref<?x56x56x96xf32>
          %s = memref.load %acc4[%i, %c, %c0, %c0] : memref<?x96x1x1xf32>
          %a = arith.addf %s, %v : f32
          memref.store %a, %acc4[%i, %c, %c0, %c0] : memref<?x96x1x1xf32>
        }
      }
    }
    scf.parallel (%c) = (%c0) to (%c96) step (%c1) {
      %s = memref.load %acc[%i, %c] : memref<?x96xf32>
      %m = arith.divf %s, %count : f32
      memref.store %m, %y[%i, %c] : memref<?x96xf32>
    }
  }
  return %y : memref<?x96xf32>
}

func.func @unsplit_shared_rows(%ctx: !disc_ral.context, %x: memref<?x56x96xf32>, %n: index)
    -> (memref<?x96xf32>, memref<?x96xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c56 = arith.constant 56 : index
  %c96 = arith.constant 96 : index
  %buf = memref.alloc(%n) : memref<?x96xf32>
  %y = memref.alloc(%n) : memref<?x96xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.parallel (%c) = (%c0) to (%c96) step (%c1) {
      %v = memref.load %x[%i, %c0, %c] : memref<?x56x96xf32>
      memref.store %v, %buf[%i, %c] : memref<?x96xf32>
    }
    scf.parallel (%c) = (%c0) to (%c96) step (%c1) {
      %first = memref.load %buf[%i, %c0] : memref<?x96xf32>
      memref.store %first, %y[%i, %c] : memref<?x96xf32>
    }
  }
  %one = memref.alloc(%n) : memref<?x96xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %h = %c0 to %c56 step %c1 {
      scf.parallel (%c) = (%c0) to (%c96) step (%c1) {
        %v = memref.load %x[%i, %h, %c] : memref<?x56x96xf32>
        %s = memref.load %one[%i, %c0] : memref<?x96xf32>
        %a = arith.addf %s, %v : f32
        memref.store %a, %one[%i, %c0] : memref<?x96xf32>
      }
    }
  }
  return %y, %one : memref<?x96xf32>, memref<?x96xf32>
}
