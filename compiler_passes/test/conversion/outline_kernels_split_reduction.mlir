// disc-ral-outline-kernels on the cpu: a row's long reduction into one buffer (a spatial mean per
// image and channel) runs in 8 parts of its outermost scf.for's range, each folding into its own
// partials (through a stack buffer), then each row folds the parts in order
// (host_split_reduction.h). A chain that reads
// its accumulator elsewhere, or a row that reads memory before the chain, stays one kernel.
// RUN: ral-opt %s -disc-ral-outline-kernels -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @mean
// CHECK: %[[ACC:.*]] = disc_ral.alloc %{{.*}} : memref<?x96xf32>
// CHECK: %[[P:.*]] = disc_ral.alloc %{{.*}}(%{{.*}}) : memref<8x?x96xf32>
// CHECK: disc_ral.launch %{{.*}}, @[[PARTS:ral_kernel_[0-9]+]] grid({{.*}}) args({{.*}}%[[P]]{{.*}}) :
// CHECK: disc_ral.launch %{{.*}}, @[[FOLD:ral_kernel_[0-9]+]] grid({{.*}}) args(%{{.*}}, %[[ACC]], %[[P]], %{{.*}}) :
// CHECK: disc_ral.dealloc %{{.*}}, %[[P]] : memref<8x?x96xf32>
// CHECK: return
// A part sums in a stack buffer (which LLVM knows nothing else reads), then copies it to P.
// CHECK: func.func @[[PARTS]](
// CHECK: %[[LOCAL:.*]] = memref.alloca() : memref<96xf32>
// CHECK: memref.store %cst{{.*}}, %[[LOCAL]]
// CHECK: arith.muli %{{.*}}, %c7 : index
// CHECK: scf.for
// CHECK: scf.for
// CHECK: memref.load %[[LOCAL]]
// CHECK: arith.addf
// CHECK: memref.store %{{.*}}, %[[LOCAL]]
// CHECK: memref.load %[[LOCAL]]
// CHECK: memref.store %{{.*}} : memref<8x?x96xf32>
// CHECK: func.func @[[FOLD]](
// CHECK: memref.store %cst{{.*}} : memref<?x96xf32>
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c8{{.*}} step %c1{{.*}} iter_args
// CHECK: memref.load %{{.*}} : memref<8x?x96xf32>
// CHECK: arith.addf
// CHECK: arith.divf
func.func @mean(%ctx: !disc_ral.context, %x: memref<?x56x56x96xf32>, %y: memref<?x96xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c56 = arith.constant 56 : index
  %c96 = arith.constant 96 : index
  %zero = arith.constant 0.0 : f32
  %cnt = arith.constant 3136.0 : f32
  %acc = disc_ral.alloc %ctx(%n) : memref<?x96xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.parallel (%c) = (%c0) to (%c96) step (%c1) {
      memref.store %zero, %acc[%i, %c] : memref<?x96xf32>
      scf.reduce
    }
    scf.for %h = %c0 to %c56 step %c1 {
      scf.for %w = %c0 to %c56 step %c1 {
        scf.parallel (%c) = (%c0) to (%c96) step (%c1) {
          %v = memref.load %x[%i, %h, %w, %c] : memref<?x56x56x96xf32>
          %a = memref.load %acc[%i, %c] : memref<?x96xf32>
          %s = arith.addf %a, %v : f32
          memref.store %s, %acc[%i, %c] : memref<?x96xf32>
          scf.reduce
        }
      }
    }
    scf.parallel (%c) = (%c0) to (%c96) step (%c1) {
      %a = memref.load %acc[%i, %c] : memref<?x96xf32>
      %m = arith.divf %a, %cnt : f32
      memref.store %m, %y[%i, %c] : memref<?x96xf32>
      scf.reduce
    }
    scf.reduce
  }
  return
}

// -----

// The accumulator is read inside the chain (a running value), and a row that reads x before the
// chain: one kernel each.
// CHECK-LABEL: func.func @not_split
// CHECK-COUNT-2: disc_ral.launch
// CHECK-NOT: disc_ral.launch
// CHECK-NOT: memref<8x?x96xf32>
func.func @not_split(%ctx: !disc_ral.context, %x: memref<?x56x56x96xf32>, %y: memref<?x96xf32>,
                     %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c56 = arith.constant 56 : index
  %c96 = arith.constant 96 : index
  %zero = arith.constant 0.0 : f32
  %acc = disc_ral.alloc %ctx(%n) : memref<?x96xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %h = %c0 to %c56 step %c1 {
      scf.for %w = %c0 to %c56 step %c1 {
        scf.parallel (%c) = (%c0) to (%c96) step (%c1) {
          %v = memref.load %x[%i, %h, %w, %c] : memref<?x56x56x96xf32>
          %a = memref.load %acc[%i, %c] : memref<?x96xf32>
          %s = arith.addf %a, %v : f32
          memref.store %s, %acc[%i, %c] : memref<?x96xf32>
          memref.store %s, %x[%i, %h, %w, %c] : memref<?x56x56x96xf32>
          scf.reduce
        }
      }
    }
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.parallel (%c) = (%c0) to (%c96) step (%c1) {
      %v = memref.load %x[%i, %c0, %c0, %c] : memref<?x56x56x96xf32>
      memref.store %v, %acc[%i, %c] : memref<?x96xf32>
      scf.reduce
    }
    scf.for %h = %c0 to %c56 step %c1 {
      scf.for %w = %c0 to %c56 step %c1 {
        scf.parallel (%c) = (%c0) to (%c96) step (%c1) {
          %v = memref.load %x[%i, %h, %w, %c] : memref<?x56x56x96xf32>
          %a = memref.load %acc[%i, %c] : memref<?x96xf32>
          %s = arith.addf %a, %v : f32
          memref.store %s, %acc[%i, %c] : memref<?x96xf32>
          scf.reduce
        }
      }
    }
    scf.reduce
  }
  return
}

// -----

// More elements than a part sums on the stack (2048 channels): it folds into P directly.
// CHECK-LABEL: func.func @mean_wide
// CHECK: func.func @ral_kernel_{{[0-9]+}}(
// CHECK-NOT: memref.alloca
// CHECK: memref.store %cst{{.*}} : memref<8x?x2048xf32>
// CHECK: scf.for
// CHECK: scf.for
// CHECK: memref.load %{{.*}} : memref<8x?x2048xf32>
// CHECK: arith.addf
// CHECK: memref.store %{{.*}} : memref<8x?x2048xf32>
func.func @mean_wide(%ctx: !disc_ral.context, %x: memref<?x56x56x2048xf32>, %y: memref<?x2048xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c56 = arith.constant 56 : index
  %c2048 = arith.constant 2048 : index
  %zero = arith.constant 0.0 : f32
  %cnt = arith.constant 3136.0 : f32
  %acc = disc_ral.alloc %ctx(%n) : memref<?x2048xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.parallel (%c) = (%c0) to (%c2048) step (%c1) {
      memref.store %zero, %acc[%i, %c] : memref<?x2048xf32>
      scf.reduce
    }
    scf.for %h = %c0 to %c56 step %c1 {
      scf.for %w = %c0 to %c56 step %c1 {
        scf.parallel (%c) = (%c0) to (%c2048) step (%c1) {
          %v = memref.load %x[%i, %h, %w, %c] : memref<?x56x56x2048xf32>
          %a = memref.load %acc[%i, %c] : memref<?x2048xf32>
          %s = arith.addf %a, %v : f32
          memref.store %s, %acc[%i, %c] : memref<?x2048xf32>
          scf.reduce
        }
      }
    }
    scf.parallel (%c) = (%c0) to (%c2048) step (%c1) {
      %a = memref.load %acc[%i, %c] : memref<?x2048xf32>
      %m = arith.divf %a, %cnt : f32
      memref.store %m, %y[%i, %c] : memref<?x2048xf32>
      scf.reduce
    }
    scf.reduce
  }
  return
}

// -----

// The same mean with no row around the chain (one image, its unit batch dimension folded away):
// split the same way instead of staying a host loop nest that launches its scf.parallel once
// per position.
// CHECK-LABEL: func.func @mean_one_image
// CHECK: %[[ACC:.*]] = disc_ral.alloc %{{.*}} : memref<96xf32>
// CHECK: disc_ral.launch %{{.*}}, @{{ral_kernel_[0-9]+}}
// CHECK: %[[P:.*]] = disc_ral.alloc %{{.*}}(%{{.*}}) : memref<8x?x96xf32>
// CHECK: disc_ral.launch %{{.*}}, @[[PARTS:ral_kernel_[0-9]+]] grid({{.*}}) args({{.*}}%[[P]]{{.*}}) :
// CHECK: disc_ral.launch %{{.*}}, @[[FOLD:ral_kernel_[0-9]+]] grid({{.*}}) args({{.*}}%[[ACC]]{{.*}}%[[P]]{{.*}}) :
// CHECK: disc_ral.dealloc %{{.*}}, %[[P]] : memref<8x?x96xf32>
// CHECK-NOT: scf.for
// CHECK: return
// CHECK: func.func @[[PARTS]](
// CHECK: memref.alloca() : memref<96xf32>
// CHECK: scf.for
// CHECK: scf.for
// CHECK: arith.addf
// CHECK: func.func @[[FOLD]](
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c8{{.*}} step %c1{{.*}} iter_args
func.func @mean_one_image(%ctx: !disc_ral.context, %x: memref<1x56x56x96xf32>, %y: memref<96xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c56 = arith.constant 56 : index
  %c96 = arith.constant 96 : index
  %zero = arith.constant 0.0 : f32
  %acc = disc_ral.alloc %ctx() : memref<96xf32>
  scf.parallel (%c) = (%c0) to (%c96) step (%c1) {
    memref.store %zero, %acc[%c] : memref<96xf32>
    scf.reduce
  }
  scf.for %h = %c0 to %c56 step %c1 {
    scf.for %w = %c0 to %c56 step %c1 {
      scf.parallel (%c) = (%c0) to (%c96) step (%c1) {
        %v = memref.load %x[%c0, %h, %w, %c] : memref<1x56x56x96xf32>
        %a = memref.load %acc[%c] : memref<96xf32>
        %s = arith.addf %a, %v : f32
        memref.store %s, %acc[%c] : memref<96xf32>
        scf.reduce
      }
    }
  }
  scf.parallel (%c) = (%c0) to (%c96) step (%c1) {
    %a = memref.load %acc[%c] : memref<96xf32>
    memref.store %a, %y[%c] : memref<96xf32>
    scf.reduce
  }
  return
}

// -----

// A chain of too few steps to split (4 x 8) keeps its host loops around its kernel, unchanged.
// CHECK-LABEL: func.func @short_one_image
// CHECK-NOT: memref<8x
// CHECK: scf.for
// CHECK: scf.for
// CHECK: disc_ral.launch
func.func @short_one_image(%ctx: !disc_ral.context, %x: memref<4x8x96xf32>, %acc: memref<96xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c96 = arith.constant 96 : index
  scf.for %h = %c0 to %c4 step %c1 {
    scf.for %w = %c0 to %c8 step %c1 {
      scf.parallel (%c) = (%c0) to (%c96) step (%c1) {
        %v = memref.load %x[%h, %w, %c] : memref<4x8x96xf32>
        %a = memref.load %acc[%c] : memref<96xf32>
        %s = arith.addf %a, %v : f32
        memref.store %s, %acc[%c] : memref<96xf32>
        scf.reduce
      }
    }
  }
  return
}
