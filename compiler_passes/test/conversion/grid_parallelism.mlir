// Device kernels take every parallel dimension they legally can (grid_parallelism.h): nested
// parallel loops merge, a body of several parallel loops becomes one kernel each, a parallel loop
// under scf.for loops moves out when its writes are element-wise, a long reduction per element
// splits into partial folds, and the dimensions collapse into the one the grid strides over.
// What is not provably legal stays sequential in a thread.
// RUN: ral-opt %s -disc-ral-outline-kernels="device=cuda gpu-arch=sm_90" | FileCheck %s
// RUN: ral-opt %s -disc-ral-outline-kernels="device=vulkan" | FileCheck %s --check-prefix=SPIRV

// Two inner loops: two kernels, each over the batch times its own loop.
// CHECK-LABEL: func.func @fission
// CHECK-SAME: %[[N:[^:]*]]: index)
// CHECK: %[[N0:.*]] = arith.maxsi %[[N]], %{{.*}} : index
// CHECK: %[[T0:.*]] = arith.muli %[[N0]], %c12{{.*}} : index
// CHECK: disc_ral.launch %{{.*}}, @ral_kernel_0
// CHECK: %[[N1:.*]] = arith.maxsi %[[N]], %{{.*}} : index
// CHECK: %[[T1:.*]] = arith.muli %[[N1]], %c20{{.*}} : index
// CHECK: disc_ral.launch %{{.*}}, @ral_kernel_1
// CHECK-NOT: scf.parallel
// CHECK: return
// SPIRV-LABEL: func.func @fission
// SPIRV: disc_ral.launch %{{.*}}, @ral_kernel_0
// SPIRV: disc_ral.launch %{{.*}}, @ral_kernel_1
// SPIRV: return
func.func @fission(%ctx: !disc_ral.context, %a: memref<?x12xf32>, %b: memref<?x20xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c12 = arith.constant 12 : index
  %c20 = arith.constant 20 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.parallel (%j) = (%c0) to (%c12) step (%c1) {
      memref.store %zero, %a[%i, %j] : memref<?x12xf32>
      scf.reduce
    }
    scf.parallel (%j) = (%c0) to (%c20) step (%c1) {
      memref.store %zero, %b[%i, %j] : memref<?x20xf32>
      scf.reduce
    }
    scf.reduce
  }
  return
}

// A max pool over channels-last buffers into a fresh buffer: the channel loop leaves the window
// loops, so the grid runs n x 4 x 4 x 8 threads and each walks its 3x3 window.
// CHECK-LABEL: func.func @pool
// CHECK: arith.muli %{{.*}}, %c4{{.*}} : index
// CHECK: arith.muli %{{.*}}, %c4{{.*}} : index
// CHECK: arith.muli %{{.*}}, %c8{{.*}} : index
// CHECK: disc_ral.launch %{{.*}}, @ral_kernel_2
func.func @pool(%ctx: !disc_ral.context, %x: memref<?x6x6x8xf32>, %n: index) -> memref<?x4x4x8xf32> {
  %y = memref.alloc(%n) : memref<?x4x4x8xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%b) = (%c0) to (%n) step (%c1) {
    scf.parallel (%h, %w) = (%c0, %c0) to (%c4, %c4) step (%c1, %c1) {
      scf.for %kh = %c0 to %c3 step %c1 {
        %ih = arith.addi %h, %kh : index
        scf.for %kw = %c0 to %c3 step %c1 {
          %iw = arith.addi %w, %kw : index
          scf.parallel (%c) = (%c0) to (%c8) step (%c1) {
            %v = memref.load %x[%b, %ih, %iw, %c] : memref<?x6x6x8xf32>
            %m = memref.load %y[%b, %h, %w, %c] : memref<?x4x4x8xf32>
            %r = arith.maximumf %m, %v : f32
            memref.store %r, %y[%b, %h, %w, %c] : memref<?x4x4x8xf32>
            scf.reduce
          }
        }
      }
      scf.reduce
    }
    scf.reduce
  }
  return %y : memref<?x4x4x8xf32>
}

// Each step of the scf.for shifts the row by one element: the inner iterations read what their
// neighbours write, so the parallel loop must stay inside the scf.for (the grid covers n only).
// CHECK-LABEL: func.func @shift
// CHECK-SAME: %[[N:[^:]*]]: index)
// CHECK: %[[T:.*]] = arith.maxsi %{{.*}}, %{{.*}} : index
// CHECK-NOT: arith.muli %[[T]]
// CHECK: disc_ral.launch %{{.*}}, @ral_kernel_3
func.func @shift(%ctx: !disc_ral.context, %a: memref<?x9xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %k = %c0 to %c4 step %c1 {
      scf.parallel (%j) = (%c0) to (%c8) step (%c1) {
        %j1 = arith.addi %j, %c1 : index
        %v = memref.load %a[%i, %j1] : memref<?x9xf32>
        memref.store %v, %a[%i, %j] : memref<?x9xf32>
        scf.reduce
      }
    }
    scf.reduce
  }
  return
}

// The inner bound depends on the outer index (a triangle): the loops stay nested.
func.func @triangle(%ctx: !disc_ral.context, %a: memref<?x?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.parallel (%j) = (%c0) to (%i) step (%c1) {
      memref.store %zero, %a[%i, %j] : memref<?x?xf32>
      scf.reduce
    }
    scf.reduce
  }
  return
}

// Under an scf.for the written buffer may be the one read (two arguments): no interchange.
func.func @may_alias(%ctx: !disc_ral.context, %x: memref<?x8xf32>, %y: memref<?x8xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %k = %c0 to %c2 step %c1 {
      scf.parallel (%j) = (%c0) to (%c8) step (%c1) {
        %v = memref.load %x[%i, %j] : memref<?x8xf32>
        %m = memref.load %y[%i, %j] : memref<?x8xf32>
        %s = arith.addf %m, %v : f32
        memref.store %s, %y[%i, %j] : memref<?x8xf32>
        scf.reduce
      }
    }
    scf.reduce
  }
  return
}


// A mean's sum over 64x64 positions for 8 channels: 8 threads of 4096 additions each would be
// the grid. Split: 64 parts fold one row each into partials[part, n, c] (kernel 6, the part
// outermost so neighbouring threads read neighbouring channels), then each element adds its
// 64 partials to its sum in order (kernel 7); the partials are released after both.
// CHECK-LABEL: func.func @channel_mean
// CHECK: %[[P:.*]] = disc_ral.alloc %{{.*}}(%{{.*}}) : memref<64x?x8xf32>
// CHECK: disc_ral.launch %{{.*}}, @ral_kernel_6
// CHECK: disc_ral.launch %{{.*}}, @ral_kernel_7
// CHECK: disc_ral.dealloc %{{.*}}, %[[P]] : memref<64x?x8xf32>
func.func @channel_mean(%ctx: !disc_ral.context, %x: memref<?x64x64x8xf32>, %n: index) -> memref<?x8xf32> {
  %s = memref.alloc(%n) : memref<?x8xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%b) = (%c0) to (%n) step (%c1) {
    scf.for %h = %c0 to %c64 step %c1 {
      scf.for %w = %c0 to %c64 step %c1 {
        scf.parallel (%c) = (%c0) to (%c8) step (%c1) {
          %v = memref.load %x[%b, %h, %w, %c] : memref<?x64x64x8xf32>
          %a = memref.load %s[%b, %c] : memref<?x8xf32>
          %r = arith.addf %a, %v : f32
          memref.store %r, %s[%b, %c] : memref<?x8xf32>
          scf.reduce
        }
      }
    }
    scf.reduce
  }
  return %s : memref<?x8xf32>
}
// The kernels follow the functions.
// CHECK-LABEL: gpu.func @ral_kernel_2
// CHECK: scf.for
// CHECK: arith.remui
// CHECK: arith.divui
// CHECK: scf.for
// CHECK: scf.for
// CHECK: arith.maximumf
// CHECK-NOT: scf.for
// CHECK: gpu.return
// CHECK-LABEL: gpu.func @ral_kernel_3
// CHECK: scf.for
// CHECK-NOT: arith.remui
// CHECK: scf.for
// CHECK: scf.for
// CHECK: gpu.return
// CHECK-LABEL: gpu.func @ral_kernel_4
// CHECK: scf.for
// CHECK-NOT: arith.remui
// CHECK: scf.for
// CHECK: gpu.return
// CHECK-LABEL: gpu.func @ral_kernel_5
// CHECK: scf.for
// CHECK-NOT: arith.remui
// CHECK: scf.for
// CHECK: scf.for
// CHECK: gpu.return
// CHECK-LABEL: gpu.func @ral_kernel_6
// CHECK: scf.for
// CHECK: arith.remui %{{.*}}, %c8{{.*}} : index
// CHECK: %[[ROWS:.*]] = scf.for %{{.*}} iter_args(%[[ACC:.*]] = %cst) -> (f32)
// CHECK: scf.for %{{.*}} = %{{.*}} to %c64{{.*}} iter_args(%{{.*}} = %[[ACC]]) -> (f32)
// CHECK: arith.addf
// CHECK: llvm.store %[[ROWS]]
// CHECK: gpu.return
// CHECK-LABEL: gpu.func @ral_kernel_7
// CHECK: %[[START:.*]] = llvm.load
// CHECK: scf.for %{{.*}} = %{{.*}} to %c64{{.*}} iter_args(%{{.*}} = %[[START]]) -> (f32)
// CHECK: llvm.load
// CHECK: arith.addf
// CHECK: llvm.store
// CHECK: gpu.return
