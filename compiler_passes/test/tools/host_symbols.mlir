// ral-compile checks the host library's undefined symbols after linking: only RAL's import
// mechanism and libc/libm may be left to the loader, so what compiles also loads. A declared
// libm function is fine and runs, and so does the malloc/free of an unranked memref returned
// from a private function.
// RUN: ral-compile %s -o %t.ralm
// RUN: ral-run %t.ralm --input=3xf32=0,0.5,-1 | FileCheck %s
// CHECK: output 0: 3xf32=0,0.462117{{[0-9]*}},-0.761594{{[0-9]*}}
// RUN: rm -f %t.bad.ralm
// RUN: not ral-compile %S/../Inputs/external_call.mlir -o %t.bad.ralm 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not test -e %t.bad.ralm
// RUN: not ral-compile %S/../Inputs/external_call.mlir --by-name -o %t.bad.ralm 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: ral-compile %S/../Inputs/unranked_return.mlir -o %t.unranked.ralm
// RUN: ral-run %t.unranked.ralm --input=3xf32=1,-2.5,0.25 | FileCheck %s --check-prefix=UNRANKED
// UNRANKED: output 0: 3xf32=2,-5,0.5
// BAD: external_call.mlir:6:8: error: the module needs 'my_helper', which neither RAL ({{.*}}) nor libc/libm provides: it would fail to load

func.func private @tanhf(f32) -> f32

func.func @main(%x: memref<?xf32>) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %y = memref.alloc(%n) : memref<?xf32>
  linalg.map ins(%x : memref<?xf32>) outs(%y : memref<?xf32>)
    (%v: f32) {
      %t = func.call @tanhf(%v) : (f32) -> f32
      linalg.yield %t : f32
    }
  return %y : memref<?xf32>
}
