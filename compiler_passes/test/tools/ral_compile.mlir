// ral-compile writes a module whose signature comes from the entry's type and whose import list
// is the table of the host library.
// RUN: ral-compile %s -o %t.ralm
// RUN: ral-inspect %t.ralm | FileCheck %s
// RUN: ral-compile %s -o %t.ll --emit=llvm
// RUN: FileCheck %s --input-file=%t.ll --check-prefix=LLVM
// RUN: ral-compile %s -o %t.by_name.ralm --by-name
// RUN: ral-inspect %t.by_name.ralm | FileCheck %s --check-prefix=BYNAME
// RUN: ral-compile %s --name=renamed -o %t.renamed.ralm
// RUN: ral-inspect %t.renamed.ralm | FileCheck %s --check-prefix=NAME
// NAME: module: renamed
// RUN: ral-compile %s --device=vulkan -o %t.vulkan.ralm
// RUN: ral-inspect %t.vulkan.ralm | FileCheck %s --check-prefix=VULKAN
// RUN: ral-compile %s -o %t.mlir --emit=mlir
// RUN: FileCheck %s --input-file=%t.mlir --check-prefix=MLIR

// CHECK: module: ral_compile
// CHECK: entry: ral_entry
// CHECK: inputs (2):
// CHECK-NEXT: 0: ?x3xf32
// CHECK-NEXT: 1: 3x?xf32
// CHECK: outputs (2):
// CHECK-NEXT: 0: ?x?xf32
// CHECK-NEXT: 1: 5xi32
// CHECK: imports (8):
// CHECK-NEXT: ral_recv_input___cpu___pvoid_i64___m2df32
// Inputs compiled for a static layout are checked; a mismatch signals an error.
// CHECK-NEXT: ral_signal_error___cpu___pvoid_i32_pi8___void
// CHECK-NEXT: ral_alloc___cpu___pvoid_i64___pvoid
// CHECK-NEXT: ral_gemm___cpu___pvoid_m2df32_m2df32_m2df32_i1_i1___void
// Each output is sent once final (disc-ral-place-inputs-outputs): %c right after the GEMM.
// CHECK-NEXT: ral_send_output___cpu___pvoid_i64_m2df32___void
// The fill of %k is a kernel.
// CHECK-NEXT: ral_kernel_launch___cpu___pvoid_i64_i64_i64_i64_i64_i64_i64_i64_i64_ppvoid_pi64_i64___void
// CHECK-NEXT: ral_send_output___cpu___pvoid_i64_m1di32___void
// CHECK-NEXT: ral_dealloc___cpu___pvoid_pvoid___void
// CHECK: executables (1):
// CHECK-NEXT: host_kernels: host, 13 bytes, entries: ral_kernel_0 (0x0x0)

// For Vulkan the loops are SPIR-V executables and the GEMM the device's; host glue stays cpu and
// the data lives on the device.
// VULKAN: inputs (2):
// VULKAN-NEXT: 0: ?x3xf32@vulkan
// VULKAN: ral_recv_input___cpu___
// VULKAN: ral_gemm___vulkan___pvoid_m2df32_m2df32_m2df32_i1_i1___void
// VULKAN: ral_kernel_launch___vulkan___
// VULKAN: executables (
// VULKAN-NEXT: ral_kernel_0: spirv, {{[0-9]+}} bytes, entries: ral_kernel_0 (64x1x1)
// VULKAN-NOT: host_kernels

// LLVM-DAG: @ral_imports = {{.*}}global [8 x { ptr, ptr }]
// LLVM-DAG: @ral_import_count = {{.*}}constant i32 8
// LLVM-DAG: define {{.*}}void @ral_entry(ptr
// Kernels are exported: the loader finds them by name.
// LLVM-DAG: define void @ral_kernel_0(ptr

// BYNAME: imports (0):

// MLIR: llvm.func @ral_entry

func.func @main(%a: memref<?x3xf32>, %b: memref<3x?xf32>) -> (memref<?x?xf32>, memref<5xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %m = memref.dim %a, %c0 : memref<?x3xf32>
  %n = memref.dim %b, %c1 : memref<3x?xf32>
  %c = memref.alloc(%m, %n) : memref<?x?xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<?x?xf32>)
  linalg.matmul ins(%a, %b : memref<?x3xf32>, memref<3x?xf32>) outs(%c : memref<?x?xf32>)
  %k = memref.alloc() : memref<5xi32>
  %seven = arith.constant 7 : i32
  linalg.fill ins(%seven : i32) outs(%k : memref<5xi32>)
  %tmp = memref.alloc() : memref<16xf32>
  memref.dealloc %tmp : memref<16xf32>
  return %c, %k : memref<?x?xf32>, memref<5xi32>
}
