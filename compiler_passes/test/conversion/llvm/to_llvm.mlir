// disc-ral-to-llvm: every RAL op becomes an argument struct, a void** array and an indirect call
// through the module's import table, followed by a test of the context's error flag.
// RUN: ral-opt %s -disc-ral-to-llvm | FileCheck %s

// The names are encoded from the types, exactly as RAL_API encodes C++ signatures. The
// allocation's dynamic size is checked: out of range, ral_signal_error fails the execution.
// CHECK: module attributes {disc_ral.imports = ["ral_recv_input___cpu___pvoid_i64___m2df32", "ral_alloc___cpu___pvoid_i64___pvoid", "ral_signal_error___cpu___pvoid_i32_pi8___void", "ral_gemm___cpu___pvoid_m2df32_m2df32_m2df32_i1_i1___void", "ral_send_output___cpu___pvoid_i64_m2df32___void", "ral_sum___cpu___pvoid_m2df32___f32", "ral_dealloc___cpu___pvoid_pvoid___void"]}
// CHECK: llvm.mlir.global internal constant @[[RECV:__ral_name_0]]("ral_recv_input___cpu___pvoid_i64___m2df32\00")
// CHECK: llvm.mlir.global internal constant @[[GEMM:__ral_name_3]]("ral_gemm___cpu___pvoid_m2df32_m2df32_m2df32_i1_i1___void\00")

// The table: {name, null} per import, filled by the loader; and its size.
// CHECK: llvm.mlir.global external @ral_imports() {{.*}} : !llvm.array<7 x struct<(ptr, ptr)>> {
// CHECK:   %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK:   %[[N0:.*]] = llvm.mlir.addressof @[[RECV]] : !llvm.ptr
// CHECK:   llvm.insertvalue %[[N0]], %{{.*}}[0, 0]
// CHECK:   llvm.insertvalue %[[NULL]], %{{.*}}[0, 1]
// CHECK: llvm.mlir.global external constant @ral_import_count(7 : i32) {{.*}} : i32

// CHECK-LABEL: llvm.func internal @main
// CHECK-SAME: (%[[CTX:.*]]: !llvm.ptr)
// Call storage lives in the entry block, in call order: recv_input 0 first.
// CHECK-NEXT: llvm.mlir.constant(1 : i64) : i64
// CHECK-NEXT: %[[RS:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(ptr, i64, struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>)>
// CHECK-NEXT: llvm.mlir.constant(1 : i64) : i64
// CHECK-NEXT: %[[RA:.*]] = llvm.alloca %{{.*}} x !llvm.array<3 x ptr>
// CHECK: llvm.alloca %{{.*}} x !llvm.struct<(ptr, struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>, struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>, struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>, i8, i8)>
// CHECK-NEXT: llvm.mlir.constant(1 : i64) : i64
// CHECK-NEXT: llvm.alloca %{{.*}} x !llvm.array<6 x ptr>
// recv_input 0: slots ctx, index, result descriptor; args[k] = &slot k.
// CHECK: %[[IDX:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK-NEXT: %[[S0:.*]] = llvm.getelementptr %[[RS]][0, 0]
// CHECK-NEXT: llvm.store %[[CTX]], %[[S0]]
// CHECK-NEXT: %[[A0:.*]] = llvm.getelementptr %[[RA]][0, 0]
// CHECK-NEXT: llvm.store %[[S0]], %[[A0]]
// CHECK-NEXT: %[[S1:.*]] = llvm.getelementptr %[[RS]][0, 1]
// CHECK-NEXT: llvm.store %[[IDX]], %[[S1]]
// CHECK: %[[TABLE:.*]] = llvm.mlir.addressof @ral_imports
// CHECK-NEXT: %[[SLOT:.*]] = llvm.getelementptr %[[TABLE]][0, 0, 1]
// CHECK-NEXT: %[[FN:.*]] = llvm.load %[[SLOT]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: llvm.call %[[FN]](%[[CTX]], %[[RA]]) : !llvm.ptr, (!llvm.ptr, !llvm.ptr) -> ()
// The error flag is the first i32 of the context; non-zero returns early.
// CHECK-NEXT: %[[FLAG:.*]] = llvm.load %[[CTX]] : !llvm.ptr -> i32
// CHECK-NEXT: %[[ZERO:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT: %[[FAILED:.*]] = llvm.icmp "ne" %[[FLAG]], %[[ZERO]] : i32
// CHECK-NEXT: llvm.cond_br %[[FAILED]] weights([1, 1000]), ^[[EARLY:.*]], ^[[NEXT:.*]]
// CHECK: ^[[NEXT]]:
// The result comes back through its slot.
// CHECK-NEXT: %[[RP:.*]] = llvm.getelementptr %[[RS]][0, 2]
// CHECK-NEXT: llvm.load %[[RP]]
// Each RAL function has its own slot of the table: alloc is import 1.
// CHECK: llvm.getelementptr %{{.*}}[0, 1, 1]
// Booleans travel as one byte holding 0 or 1, like a C++ bool.
// CHECK: %[[BOOL:.*]] = llvm.zext %{{.*}} : i1 to i8
// CHECK-NEXT: llvm.store %[[BOOL]], %{{.*}} : i8, !llvm.ptr
// The gemm call goes through slot 3 of the table.
// CHECK: llvm.getelementptr %{{.*}}[0, 3, 1]
// CHECK: llvm.call @helper(%[[CTX]],
// A call of a function that takes the context is checked too.
// CHECK-NEXT: llvm.load %[[CTX]] : !llvm.ptr -> i32
// CHECK: llvm.getelementptr %{{.*}}[0, 4, 1]
// CHECK: ^[[EARLY]]:
// CHECK-NEXT: llvm.return

// A function with a result returns undef on the early path.
// CHECK-LABEL: llvm.func internal @helper
// CHECK: llvm.getelementptr %{{.*}}[0, 5, 1]
// CHECK: llvm.getelementptr %{{.*}}[0, 6, 1]
// CHECK: llvm.return %{{.*}} : f32
// CHECK: llvm.mlir.undef : f32
// CHECK-NEXT: llvm.return %{{.*}} : f32

// The exported entry.
// CHECK-LABEL: llvm.func @ral_entry(%arg0: !llvm.ptr)
// CHECK-NEXT: llvm.call @main(%arg0) : (!llvm.ptr) -> ()
// CHECK-NEXT: llvm.return

func.func @main(%ctx: !disc_ral.context) attributes {disc_ral.entry} {
  %x = disc_ral.recv_input %ctx, 0 : memref<?x4xf32>
  %w = disc_ral.recv_input %ctx, 1 : memref<4x8xf32>
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x4xf32>
  %y = disc_ral.alloc %ctx(%n) : memref<?x8xf32>
  %f = arith.constant false
  disc_ral.dispatch %ctx, "ral_gemm", "cpu" (%x, %w, %y, %f, %f) : (memref<?x4xf32>, memref<4x8xf32>, memref<?x8xf32>, i1, i1) -> ()
  %s = call @helper(%ctx, %y) : (!disc_ral.context, memref<?x8xf32>) -> f32
  disc_ral.send_output %ctx, 0, %y : memref<?x8xf32>
  return
}

func.func private @helper(%ctx: !disc_ral.context, %y: memref<?x8xf32>) -> f32 {
  %s = disc_ral.dispatch %ctx, "ral_sum", "cpu" (%y) : (memref<?x8xf32>) -> f32
  disc_ral.dealloc %ctx, %y : memref<?x8xf32>
  return %s : f32
}
