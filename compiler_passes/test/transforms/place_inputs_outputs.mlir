// disc-ral-place-inputs-outputs: each input is received (with its layout check) right before its
// first use, each output sent right after the last op that touches its buffer; outputs that are
// not buffers of the entry block stay at the return.
// RUN: ral-opt %s -disc-ral-inject-execution-context -disc-ral-place-inputs-outputs -split-input-file | FileCheck %s

// After outlining for Vulkan, kernels take a buffer's address as an integer: the send waits for
// the launch that writes through it.
// RUN: ral-opt %S/../../../tests/modules/partial.mlir -disc-ral-inject-execution-context -disc-ral-fuse-loops=device=vulkan -disc-ral-outline-kernels=device=vulkan -disc-ral-place-inputs-outputs | FileCheck %s --check-prefix=VULKAN
// VULKAN-LABEL: func @main
// VULKAN: disc_ral.recv_input %{{.*}}, 0
// VULKAN: %[[A:.*]] = memref.alloc
// VULKAN: %[[PA:.*]] = memref.extract_aligned_pointer_as_index %[[A]]
// VULKAN: disc_ral.launch %{{.*}}, @ral_kernel_0 {{.*}} args(%{{.*}}, %[[PA]]
// VULKAN-NEXT: disc_ral.send_output %{{.*}}, 0, %[[A]]
// VULKAN: disc_ral.recv_input %{{.*}}, 1
// VULKAN: %[[B:.*]] = memref.alloc
// VULKAN: %[[PB:.*]] = memref.extract_aligned_pointer_as_index %[[B]]
// VULKAN: disc_ral.launch %{{.*}}, @ral_kernel_1 {{.*}} args(%{{.*}}, %[[PB]]
// VULKAN-NEXT: disc_ral.send_output %{{.*}}, 1, %[[B]]
// VULKAN-NEXT: return

// out0 = x + 1 needs only x; out1 = y * sum(out0) needs y: output 0 leaves before input 1 is
// received.
// CHECK-LABEL: func @main
// CHECK-SAME: (%[[CTX:.*]]: !disc_ral.context)
// CHECK: %[[X0:.*]] = disc_ral.recv_input %[[CTX]], 0
// CHECK: scf.if
// CHECK-NEXT: disc_ral.signal_error %[[CTX]], "input #0
// CHECK: %[[X:.*]] = memref.reinterpret_cast %[[X0]]
// CHECK: %[[A:.*]] = memref.alloc
// CHECK: scf.parallel
// CHECK: memref.store %{{.*}}, %[[A]]
// CHECK: %[[S:.*]] = scf.for
// CHECK: memref.load %[[A]]
// CHECK: disc_ral.send_output %[[CTX]], 0, %[[A]] : memref<?xf32>
// CHECK-NEXT: %[[Y0:.*]] = disc_ral.recv_input %[[CTX]], 1
// CHECK: scf.if
// CHECK-NEXT: disc_ral.signal_error %[[CTX]], "input #1
// CHECK: %[[B:.*]] = memref.alloc
// CHECK: scf.parallel
// CHECK: memref.store %{{.*}}, %[[B]]
// CHECK: disc_ral.send_output %[[CTX]], 1, %[[B]] : memref<?xf32>
// CHECK-NEXT: return
func.func @main(%x: memref<?xf32>, %y: memref<?xf32>) -> (memref<?xf32>, memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %x, %c0 : memref<?xf32>
  %a = memref.alloc(%n) : memref<?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %x[%i] : memref<?xf32>
    %r = arith.addf %v, %one : f32
    memref.store %r, %a[%i] : memref<?xf32>
  }
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> f32 {
    %v = memref.load %a[%i] : memref<?xf32>
    %t = arith.addf %acc, %v : f32
    scf.yield %t : f32
  }
  %m = memref.dim %y, %c0 : memref<?xf32>
  %b = memref.alloc(%m) : memref<?xf32>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    %v = memref.load %y[%i] : memref<?xf32>
    %r = arith.mulf %v, %s : f32
    memref.store %r, %b[%i] : memref<?xf32>
  }
  return %a, %b : memref<?xf32>, memref<?xf32>
}

// -----

// Buffers written through views of them (a subview, a cast) are sent once those writes are
// done; a view of an input stays at the return; unused inputs are received where they were.
// CHECK-LABEL: func @main
// CHECK-SAME: (%[[CTX:.*]]: !disc_ral.context)
// CHECK: disc_ral.recv_input %[[CTX]], 0
// CHECK: disc_ral.recv_input %[[CTX]], 1
// CHECK: %[[P:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: %[[Q:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: %[[SUB:.*]] = memref.subview %[[P]][1] [2] [1]
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[SUB]] : {{.*}})
// CHECK-NEXT: disc_ral.send_output %[[CTX]], 0, %[[P]] : memref<4xf32>
// CHECK-NEXT: %[[CAST:.*]] = memref.cast %[[Q]]
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[CAST]] : {{.*}})
// CHECK-NEXT: disc_ral.send_output %[[CTX]], 1, %[[Q]] : memref<4xf32>
// CHECK-NEXT: %[[Z0:.*]] = disc_ral.recv_input %[[CTX]], 2
// CHECK: %[[Z:.*]] = memref.reinterpret_cast %[[Z0]]
// CHECK-NEXT: disc_ral.send_output %[[CTX]], 2, %[[Z]] : memref<4xf32>
// CHECK-NEXT: return
func.func @main(%unused: memref<4xf32>, %also_unused: memref<4xi32>, %z: memref<4xf32>) -> (memref<4xf32>, memref<4xf32>, memref<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %p = memref.alloc() : memref<4xf32>
  %q = memref.alloc() : memref<4xf32>
  %sub = memref.subview %p[1] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1], offset: 1>>
  linalg.fill ins(%zero : f32) outs(%sub : memref<2xf32, strided<[1], offset: 1>>)
  %cast = memref.cast %q : memref<4xf32> to memref<?xf32>
  linalg.fill ins(%zero : f32) outs(%cast : memref<?xf32>)
  return %p, %q, %z : memref<4xf32>, memref<4xf32>, memref<4xf32>
}

