// disc-ral-to-llvm{by-name=true}: calls go through ral_api_call(ctx, name, args); the import
// table is empty.
// RUN: ral-opt %s -disc-ral-to-llvm=by-name=true | FileCheck %s

// CHECK: module attributes {disc_ral.imports = []}
// CHECK: llvm.mlir.global internal constant @[[NAME:__ral_name_0]]("ral_recv_input___cpu___pvoid_i64___m1df64\00")
// CHECK: llvm.func @ral_api_call(!llvm.ptr, !llvm.ptr, !llvm.ptr)
// CHECK: llvm.mlir.global external @ral_imports() {{.*}} : !llvm.array<0 x struct<(ptr, ptr)>>
// CHECK: llvm.mlir.global external constant @ral_import_count(0 : i32) {{.*}} : i32
// CHECK-LABEL: llvm.func internal @main
// CHECK-SAME: (%[[CTX:.*]]: !llvm.ptr)
// CHECK: %[[STR:.*]] = llvm.mlir.addressof @[[NAME]] : !llvm.ptr
// CHECK-NEXT: llvm.call @ral_api_call(%[[CTX]], %[[STR]], %{{.*}}) : (!llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
// CHECK-NEXT: llvm.load %[[CTX]] : !llvm.ptr -> i32
// CHECK: llvm.call @ral_api_call
// CHECK-NOT: @ral_imports
// CHECK-LABEL: llvm.func @ral_entry

func.func @main(%ctx: !disc_ral.context) attributes {disc_ral.entry} {
  %x = disc_ral.recv_input %ctx, 0 : memref<?xf64>
  disc_ral.send_output %ctx, 0, %x : memref<?xf64>
  return
}
