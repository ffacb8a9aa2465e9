// disc-ral-to-llvm lowers disc_ral.launch to ral_kernel_launch(ctx, executable 0, entry, grid,
// block, shared bytes, args, arg sizes, count) through the import table; kernels stay exported
// and the module lists them in entry order. The LLVM code vectorizes the kernel's inner loops,
// including float reductions.
// RUN: ral-opt %s -ral-compile-pipeline | FileCheck %s
// RUN: ral-compile %s --emit=llvm --mcpu=x86-64-v3 -o %t.ll
// RUN: FileCheck %s --input-file=%t.ll --check-prefix=LLVM

// The row sums of y fuse with the loop writing y: one kernel.
// CHECK: module attributes {disc_ral.host_kernels = ["ral_kernel_0"]
// CHECK-SAME: disc_ral.imports = [{{.*}}"ral_kernel_launch___cpu___pvoid_i64_i64_i64_i64_i64_i64_i64_i64_i64_ppvoid_pi64_i64___void"
// CHECK-LABEL: llvm.func internal @main
// The argument sizes: an index (8 bytes) and a rank-2 descriptor (8 * (3 + 2 * 2) = 56 bytes).
// CHECK-DAG: llvm.mlir.constant(8 : i64)
// CHECK-DAG: llvm.mlir.constant(56 : i64)
// CHECK: llvm.call
// CHECK-LABEL: llvm.func @ral_kernel_0(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// CHECK-NOT: linkage

// LLVM: define void @ral_kernel_0(
// LLVM: fmul <8 x float>
// LLVM: fadd reassoc <8 x float>
// LLVM: @llvm.vector.reduce.fadd.v8f32

#rows = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

func.func @main(%x: memref<?x?xf32>) -> (memref<?x?xf32>, memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %x, %c0 : memref<?x?xf32>
  %m = memref.dim %x, %c1 : memref<?x?xf32>
  %y = memref.alloc(%n, %m) : memref<?x?xf32>
  linalg.generic {indexing_maps = [#rows, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = arith.mulf %v, %v : f32
    linalg.yield %s : f32
  }
  // Row sums: a fresh accumulator per row, kept in a register.
  %sum = memref.alloc(%n) : memref<?xf32>
  linalg.fill ins(%zero : f32) outs(%sum : memref<?xf32>)
  linalg.generic {indexing_maps = [#rows, #row],
                  iterator_types = ["parallel", "reduction"]}
      ins(%y : memref<?x?xf32>) outs(%sum : memref<?xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  }
  return %y, %sum : memref<?x?xf32>, memref<?xf32>
}
