// disc-ral-fuse-loops: linalg ops become parallel loops; loops over the same rows fuse when each
// fresh buffer one writes and the other touches is indexed by the row; reduction accumulators
// live in registers, marked reassoc.
// RUN: ral-opt %s -disc-ral-fuse-loops | FileCheck %s

#rows = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// Softmax: fill, max, exp, fill, sum, divide -> one loop over rows.
// CHECK-LABEL: func.func @softmax
// CHECK: scf.parallel (%[[I:.*]]) =
// CHECK: scf.for {{.*}} iter_args(%[[M:.*]] = {{.*}}) -> (f32)
// CHECK: arith.maximumf {{.*}}, %[[M]] fastmath<reassoc> : f32
// CHECK: scf.parallel
// CHECK: math.exp
// CHECK: scf.for {{.*}} iter_args
// CHECK: arith.addf {{.*}} fastmath<reassoc> : f32
// CHECK: scf.parallel
// CHECK: arith.divf
// CHECK-NOT: scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK: return
func.func @softmax(%x: memref<?x?xf32>) -> memref<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %neg_inf = arith.constant 0xFF800000 : f32
  %n = memref.dim %x, %c0 : memref<?x?xf32>
  %m = memref.dim %x, %c1 : memref<?x?xf32>
  %max = memref.alloc(%n) : memref<?xf32>
  linalg.fill ins(%neg_inf : f32) outs(%max : memref<?xf32>)
  linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x?xf32>) outs(%max : memref<?xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.maximumf %v, %acc : f32
    linalg.yield %r : f32
  }
  %y = memref.alloc(%n, %m) : memref<?x?xf32>
  linalg.generic {indexing_maps = [#rows, #row, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : memref<?x?xf32>, memref<?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%v: f32, %mx: f32, %out: f32):
    %d = arith.subf %v, %mx : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  }
  %sum = memref.alloc(%n) : memref<?xf32>
  linalg.fill ins(%zero : f32) outs(%sum : memref<?xf32>)
  linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%y : memref<?x?xf32>) outs(%sum : memref<?xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#row, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%sum : memref<?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%s: f32, %v: f32):
    %q = arith.divf %v, %s : f32
    linalg.yield %q : f32
  }
  memref.dealloc %max : memref<?xf32>
  memref.dealloc %sum : memref<?xf32>
  return %y : memref<?x?xf32>
}

// The second loop reads row i+1 of what the first wrote: not fusable.
// CHECK-LABEL: func.func @shifted
// CHECK: scf.parallel
// CHECK: memref.store
// CHECK: scf.reduce
// CHECK: scf.parallel
// CHECK: arith.addi
// CHECK: memref.load
func.func @shifted(%x: memref<8xf32>) -> memref<7xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %t = memref.alloc() : memref<8xf32>
  scf.parallel (%i) = (%c0) to (%c7) step (%c1) {
    %v = memref.load %x[%i] : memref<8xf32>
    memref.store %v, %t[%i] : memref<8xf32>
  }
  %out = memref.alloc() : memref<7xf32>
  scf.parallel (%i) = (%c0) to (%c7) step (%c1) {
    %j = arith.addi %i, %c1 : index
    %v = memref.load %t[%j] : memref<8xf32>
    memref.store %v, %out[%i] : memref<7xf32>
  }
  memref.dealloc %t : memref<8xf32>
  return %out : memref<7xf32>
}

// Writing an input (which may alias the other input) is not fusable either.
// CHECK-LABEL: func.func @inputs_may_alias
// CHECK-COUNT-2: scf.parallel
func.func @inputs_may_alias(%a: memref<8xf32>, %b: memref<8xf32>) -> memref<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    memref.store %f, %a[%i] : memref<8xf32>
  }
  %out = memref.alloc() : memref<8xf32>
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %v = memref.load %b[%i] : memref<8xf32>
    memref.store %v, %out[%i] : memref<8xf32>
  }
  return %out : memref<8xf32>
}

// A softmax as the ONNX importer writes it: accumulators reached through reshapes that keep the
// row dimension, sizes taken from those views, and shape checks between the loops. The checks
// move above the first loop, the dims fold to the allocation's size: one loop over rows, both
// accumulators in registers.
// CHECK-LABEL: func.func @softmax_through_views
// CHECK: scf.if
// CHECK: disc_ral.signal_error
// CHECK: scf.parallel (%{{.*}}) =
// CHECK: scf.for {{.*}} iter_args
// CHECK: arith.maximumf {{.*}} fastmath<reassoc>
// CHECK: scf.for {{.*}} iter_args
// CHECK: arith.addf {{.*}} fastmath<reassoc>
// CHECK: arith.divf
// CHECK-NOT: scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK: return
#r3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#r4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#acc4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#acc3 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
func.func @softmax_through_views(%ctx: !disc_ral.context, %x: memref<?x8x16xf32>,
                                 %bad: i1) -> memref<?x8x16xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %neg_inf = arith.constant 0xFF800000 : f32
  %n = memref.dim %x, %c0 : memref<?x8x16xf32>
  %max = disc_ral.alloc %ctx(%n) : memref<?x8xf32>
  linalg.fill ins(%neg_inf : f32) outs(%max : memref<?x8xf32>)
  %x4 = memref.expand_shape %x [[0], [1, 2], [3]] output_shape [%n, 8, 1, 16]
      : memref<?x8x16xf32> into memref<?x8x1x16xf32>
  %max3 = memref.expand_shape %max [[0], [1, 2]] output_shape [%n, 8, 1]
      : memref<?x8xf32> into memref<?x8x1xf32>
  %n4 = memref.dim %x4, %c0 : memref<?x8x1x16xf32>
  linalg.generic {indexing_maps = [#r4, #acc4],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x4 : memref<?x8x1x16xf32>) outs(%max3 : memref<?x8x1xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.maximumf %acc, %v : f32
    linalg.yield %r : f32
  }
  scf.if %bad {
    disc_ral.signal_error %ctx, "a size overflows"
  }
  %e = disc_ral.alloc %ctx(%n4) : memref<?x8x16xf32>
  linalg.generic {indexing_maps = [#r3, #acc3, #r3],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %max3 : memref<?x8x16xf32>, memref<?x8x1xf32>) outs(%e : memref<?x8x16xf32>) {
  ^bb0(%v: f32, %m: f32, %out: f32):
    %d = arith.subf %v, %m : f32
    linalg.yield %d : f32
  }
  %sum = disc_ral.alloc %ctx(%n) : memref<?x8xf32>
  linalg.fill ins(%zero : f32) outs(%sum : memref<?x8xf32>)
  %e4 = memref.expand_shape %e [[0], [1, 2], [3]] output_shape [%n4, 8, 1, 16]
      : memref<?x8x16xf32> into memref<?x8x1x16xf32>
  %sum3 = memref.expand_shape %sum [[0], [1, 2]] output_shape [%n, 8, 1]
      : memref<?x8xf32> into memref<?x8x1xf32>
  linalg.generic {indexing_maps = [#r4, #acc4],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%e4 : memref<?x8x1x16xf32>) outs(%sum3 : memref<?x8x1xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  }
  scf.if %bad {
    disc_ral.signal_error %ctx, "another size overflows"
  }
  %y = disc_ral.alloc %ctx(%n) : memref<?x8x16xf32>
  linalg.generic {indexing_maps = [#r3, #acc3, #r3],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%e, %sum3 : memref<?x8x16xf32>, memref<?x8x1xf32>) outs(%y : memref<?x8x16xf32>) {
  ^bb0(%v: f32, %s: f32, %out: f32):
    %q = arith.divf %v, %s : f32
    linalg.yield %q : f32
  }
  return %y : memref<?x8x16xf32>
}

// A loop that may itself fail keeps the check after it (the first error stays the one
// reported), and a view that merges the row dimension with another does not keep rows: three
// loops stay three.
// CHECK-LABEL: func.func @checks_and_views_that_block
// CHECK: scf.parallel
// CHECK: disc_ral.signal_error %{{.*}}, "inside"
// CHECK: scf.if
// CHECK-NEXT: disc_ral.signal_error %{{.*}}, "between"
// CHECK: scf.parallel
// CHECK: scf.parallel
func.func @checks_and_views_that_block(%ctx: !disc_ral.context, %x: memref<4x8xf32>, %bad: i1)
    -> memref<32xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %t = memref.alloc() : memref<4x8xf32>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %v = memref.load %x[%i, %c0] : memref<4x8xf32>
    %neg = arith.cmpf olt, %v, %zero : f32
    scf.if %neg {
      disc_ral.signal_error %ctx, "inside"
    }
    scf.for %j = %c0 to %c8 step %c1 {
      %w = memref.load %x[%i, %j] : memref<4x8xf32>
      memref.store %w, %t[%i, %j] : memref<4x8xf32>
    }
  }
  scf.if %bad {
    disc_ral.signal_error %ctx, "between"
  }
  %u = memref.alloc() : memref<4x8xf32>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    scf.for %j = %c0 to %c8 step %c1 {
      %w = memref.load %t[%i, %j] : memref<4x8xf32>
      memref.store %w, %u[%i, %j] : memref<4x8xf32>
    }
  }
  %flat = memref.collapse_shape %u [[0, 1]] : memref<4x8xf32> into memref<32xf32>
  %y = memref.alloc() : memref<32xf32>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %w = memref.load %flat[%i] : memref<32xf32>
    memref.store %w, %y[%i] : memref<32xf32>
  }
  return %y : memref<32xf32>
}
