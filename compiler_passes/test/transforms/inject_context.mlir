// disc-ral-inject-execution-context: the entry receives its inputs and sends its outputs through
// the context; functions it calls take the context first.
// RUN: ral-opt %s -disc-ral-inject-execution-context -split-input-file | FileCheck %s

// CHECK-LABEL: func @main
// CHECK-SAME: (%[[CTX:.*]]: !disc_ral.context)
// CHECK-SAME: attributes {disc_ral.entry}
// Inputs arrive as any strided view, are checked against the declared layout (row-major here),
// and are reinterpreted as the declared type.
// CHECK-NEXT: %[[A0:.*]] = disc_ral.recv_input %[[CTX]], 0 : memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK: %[[BASE:.*]], %[[OFF:.*]], %[[SIZES:.*]]:2, %[[STRIDES:.*]]:2 = memref.extract_strided_metadata %[[A0]]
// CHECK: %[[ROW:.*]] = arith.muli %{{.*}}, %[[SIZES]]#1 : index
// CHECK: arith.cmpi eq, %[[STRIDES]]#0, %[[ROW]] : index
// CHECK: arith.cmpi eq, %[[STRIDES]]#1, %{{.*}} : index
// CHECK: scf.if %{{.*}} {
// CHECK-NEXT: disc_ral.signal_error %[[CTX]], "input #0 is a view whose strides differ from the layout the module was compiled for (memref<?x?xf32>); {{.*}}" {code = 2 : i32}
// CHECK: %[[A:.*]] = memref.reinterpret_cast %[[A0]] to offset: [0], sizes: [%[[SIZES]]#0, %[[SIZES]]#1], strides: [%[[ROW]], 1] : {{.*}} to memref<?x?xf32>
// CHECK: disc_ral.recv_input %[[CTX]], 1 : memref<4xi64, strided<[?], offset: ?>>
// CHECK: %[[B:.*]] = memref.reinterpret_cast {{.*}} to offset: [0], sizes: [4], strides: [1] : {{.*}} to memref<4xi64>
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
// CHECK: disc_ral.recv_input %[[CTX]], 0 : memref<i1, strided<[], offset: ?>>
// CHECK: disc_ral.recv_input %[[CTX]], 1 : memref<2x3xbf16, strided<[?, ?], offset: ?>>
// CHECK: disc_ral.recv_input %[[CTX]], 2 : memref<8xui8, strided<[?], offset: ?>>
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

// -----

// An input declared with a fully dynamic layout is taken as it is: the code reads its strides.
// CHECK-LABEL: func @main
// CHECK-NEXT: %[[X:.*]] = disc_ral.recv_input %{{.*}}, 0 : memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK-NOT: signal_error
// CHECK: disc_ral.send_output %{{.*}}, 0, %{{.*}}
func.func @main(%x: memref<?x?xf32, strided<[?, ?], offset: ?>>) -> memref<?x?xf32> attributes {} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?x?xf32, strided<[?, ?], offset: ?>>
  %m = memref.dim %x, %c1 : memref<?x?xf32, strided<[?, ?], offset: ?>>
  %y = memref.alloc(%n, %m) : memref<?x?xf32>
  memref.copy %x, %y : memref<?x?xf32, strided<[?, ?], offset: ?>> to memref<?x?xf32>
  return %y : memref<?x?xf32>
}

// -----

// A static strided layout: its static stride is checked, its dynamic one is not; the offset
// is in the pointer already (disc-ral-to-llvm), so the view is reinterpreted at offset 0.
// CHECK-LABEL: func @main
// CHECK: %[[V:.*]] = disc_ral.recv_input %{{.*}}, 0 : memref<4x?xf32, strided<[?, ?], offset: ?>>
// CHECK: %{{.*}}, %{{.*}}, %{{.*}}:2, %[[ST:.*]]:2 = memref.extract_strided_metadata %[[V]]
// CHECK-NOT: arith.cmpi eq, %[[ST]]#0
// CHECK: arith.cmpi eq, %[[ST]]#1, %{{.*}} : index
// CHECK: signal_error
// CHECK: memref.reinterpret_cast %[[V]] to offset: [0], sizes: [4, %{{.*}}], strides: [%[[ST]]#0, 2]
func.func @main(%x: memref<4x?xf32, strided<[?, 2], offset: ?>>) {
  return
}
