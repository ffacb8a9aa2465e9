// External declarations with arguments (reported to crash ral-compile in disc-ral-to-llvm): an
// unused one compiles at every level, with scalar, memref and several results, by import table
// and by name; a used one the module cannot resolve is a compile-time error at the call; one
// libm resolves is called.
// RUN: %python -c "import sys; sys.stdout.write(open(sys.argv[1]).read().split('-' * 5)[0])" %s > %t.unused.mlir
// RUN: %python -c "import sys; sys.stdout.write(open(sys.argv[1]).read().split('-' * 5)[1])" %s > %t.used.mlir
// RUN: %python -c "import sys; sys.stdout.write(open(sys.argv[1]).read().split('-' * 5)[2])" %s > %t.libm.mlir
// RUN: %python -c "import sys; sys.stdout.write(open(sys.argv[1]).read().split('-' * 5)[3])" %s > %t.context.mlir
// RUN: ral-compile %t.unused.mlir -O0 -o %t.O0.ralm
// RUN: ral-compile %t.unused.mlir -O1 -o %t.O1.ralm
// RUN: ral-compile %t.unused.mlir -O2 -o %t.O2.ralm
// RUN: ral-compile %t.unused.mlir -O3 -o %t.O3.ralm
// RUN: ral-compile %t.unused.mlir -O3 --by-name -o %t.by_name.ralm
// RUN: ral-run %t.O0.ralm --input=4xf32=1,2,3,4 | FileCheck %s --check-prefix=SAME
// RUN: ral-run %t.O3.ralm --input=4xf32=1,2,3,4 | FileCheck %s --check-prefix=SAME
// RUN: ral-run %t.by_name.ralm --input=4xf32=1,2,3,4 | FileCheck %s --check-prefix=SAME
// RUN: not ral-compile %t.used.mlir -O0 -o %t.used.ralm 2>&1 | FileCheck %s --check-prefix=USED
// RUN: not ral-compile %t.used.mlir -O3 -o %t.used.ralm 2>&1 | FileCheck %s --check-prefix=USED
// RUN: not ral-compile %t.used.mlir -O3 --by-name -o %t.used.ralm 2>&1 | FileCheck %s --check-prefix=USED
// RUN: not test -e %t.used.ralm
// RUN: ral-compile %t.libm.mlir -O0 -o %t.libm0.ralm
// RUN: ral-compile %t.libm.mlir -O3 -o %t.libm3.ralm
// RUN: ral-run %t.libm0.ralm --input=4xf32=8,2,3,4 | FileCheck %s --check-prefix=CBRT
// RUN: ral-run %t.libm3.ralm --input=4xf32=8,2,3,4 | FileCheck %s --check-prefix=CBRT
// RUN: ral-compile %t.context.mlir -o %t.context.ralm
// RUN: ral-run %t.context.ralm --input=4xf32=1,2,3,4 | FileCheck %s --check-prefix=SAME

// SAME: output 0: 4xf32=1,2,3,4
// USED: used.mlir:{{[0-9]+}}:10: error: the module needs 'ext', which neither RAL ({{.*}}) nor libc/libm provides: it would fail to load (declare RAL functions with disc_ral.custom_call)
// CBRT: output 0: 4xf32=2,2,3,4

func.func private @ext(%x: f32) -> f32
func.func private @ext2(%x: f32, %m: memref<?x4xf32>, %i: index) -> (f32, memref<4xi8>, i1)
func.func private @ext3(memref<4xf32>)
func.func @main(%a: memref<4xf32>) -> memref<4xf32> {
  %m = memref.alloc() : memref<4xf32>
  memref.copy %a, %m : memref<4xf32> to memref<4xf32>
  return %m : memref<4xf32>
}

// -----

func.func private @ext(%x: f32, %m: memref<4xf32>) -> (f32, i32)
func.func @main(%a: memref<4xf32>) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %v = memref.load %a[%c0] : memref<4xf32>
  %r:2 = call @ext(%v, %a) : (f32, memref<4xf32>) -> (f32, i32)
  %m = memref.alloc() : memref<4xf32>
  memref.copy %a, %m : memref<4xf32> to memref<4xf32>
  memref.store %r#0, %m[%c0] : memref<4xf32>
  return %m : memref<4xf32>
}

// -----

func.func private @cbrtf(%x: f32) -> f32
func.func @main(%a: memref<4xf32>) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %v = memref.load %a[%c0] : memref<4xf32>
  %r = call @cbrtf(%v) : (f32) -> f32
  %m = memref.alloc() : memref<4xf32>
  memref.copy %a, %m : memref<4xf32> to memref<4xf32>
  memref.store %r, %m[%c0] : memref<4xf32>
  return %m : memref<4xf32>
}

// -----

// A declaration taking the context, called from a function the entry does not reach with a
// context that is not that function's first argument: the error check after the call reads the
// context passed to it (it used to read the caller's first argument, an f32: invalid IR).
func.func private @takes_context(!disc_ral.context)
func.func @helper(%x: f32, %c: !disc_ral.context) {
  func.call @takes_context(%c) : (!disc_ral.context) -> ()
  return
}
func.func @main(%a: memref<4xf32>) -> memref<4xf32> {
  %m = memref.alloc() : memref<4xf32>
  memref.copy %a, %m : memref<4xf32> to memref<4xf32>
  return %m : memref<4xf32>
}
