// disc-ral-inject-execution-context: the entry receives its inputs and sends its outputs through
// the context; functions it calls take the context first.
// RUN: ral-opt %s -disc-ral-inject-execution-context -split-input-file | FileCheck %s

// CHECK-LABEL: func @main
// CHECK-SAME: (%[[CTX:.*]]: !disc_ral.context)
// CHECK-SAME: attributes {disc_ral.entry}
// CHECK-NEXT: %[[A:.*]] = disc_ral.recv_input %[[CTX]], 0 : memref<?x?xf32>
// CHECK-NEXT: %[[B:.*]] = disc_ral.recv_input %[[CTX]], 1 : memref<4xi64>
// CHECK-NEXT: %[[R:.*]] = call @helper(%[[CTX]], %[[A]]) : (!disc_ral.context, memref<?x?xf32>) -> memref<?x?xf32>
// CHECK-NEXT: disc_ral.send_output %[[CTX]], 0, %[[R]] : memref<?x?xf32>
// CHECK-NEXT: disc_ral.send_output %[[CTX]], 1, %[[B]] : memref<4xi64>
// CHECK-NEXT: return{{$}}
func.func @main(%a: memref<?x?xf32>, %b: memref<4xi64>) -> (memref<?x?xf32>, memref<4xi64>) {
  %r = call @helper(%a) : (memref<?x?xf32>) -> memref<?x?xf32>
  return %r, %b : memref<?x?xf32>, memref<4xi64>
}

// Called from the entry, and transitively: both get the context.
// CHECK-LABEL: func private @helper
// CHECK-SAME: (%[[HCTX:.*]]: !disc_ral.context, %{{.*}}: memref<?x?xf32>) -> memref<?x?xf32>
// CHECK: call @leaf(%[[HCTX]], %{{.*}})
func.func private @helper(%a: memref<?x?xf32>) -> memref<?x?xf32> {
  call @leaf(%a) : (memref<?x?xf32>) -> ()
  return %a : memref<?x?xf32>
}

// CHECK-LABEL: func private @leaf
// CHECK-SAME: (%{{.*}}: !disc_ral.context, %{{.*}}: memref<?x?xf32>)
func.func private @leaf(%a: memref<?x?xf32>) {
  return
}

// Custom calls and external declarations keep their signatures.
// CHECK-LABEL: func private @softmax(memref<?x?xf32>, memref<?x?xf32>)
func.func private @softmax(memref<?x?xf32>, memref<?x?xf32>) attributes {disc_ral.custom_call = "ral_softmax"}

// Not reachable from the entry: unchanged.
// CHECK-LABEL: func @unused(%{{.*}}: memref<2xf32>)
func.func @unused(%a: memref<2xf32>) {
  return
}

// -----

// Several returns, static shapes, other element types, rank 0.
// CHECK-LABEL: func @main
// CHECK-SAME: (%[[CTX:.*]]: !disc_ral.context)
// CHECK: disc_ral.recv_input %[[CTX]], 0 : memref<i1>
// CHECK: disc_ral.recv_input %[[CTX]], 1 : memref<2x3xbf16>
// CHECK: disc_ral.recv_input %[[CTX]], 2 : memref<8xui8>
// CHECK: ^bb1:
// CHECK-NEXT: disc_ral.send_output %[[CTX]], 0, %{{.*}} : memref<2x3xbf16>
// CHECK-NEXT: return
// CHECK: ^bb2:
// CHECK-NEXT: disc_ral.send_output %[[CTX]], 0, %{{.*}} : memref<2x3xbf16>
// CHECK-NEXT: return
func.func @main(%c: memref<i1>, %x: memref<2x3xbf16>, %y: memref<8xui8>) -> memref<2x3xbf16> {
  %v = memref.load %c[] : memref<i1>
  cf.cond_br %v, ^bb1, ^bb2
^bb1:
  return %x : memref<2x3xbf16>
^bb2:
  return %x : memref<2x3xbf16>
}
