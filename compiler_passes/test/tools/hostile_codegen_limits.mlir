// Compile time stays near-linear: a function too large for LLVM's code generation (quadratic in
// its size) or with loops nested too deeply for its loop passes (about the fourth power of the
// depth) gets `optnone`, alone; results do not change. The limits are lowered here to reach them
// with a small function (defaults: 10000 instructions, loop depth 32).
// RUN: ral-compile %s --emit=llvm -o %t.default.ll
// RUN: FileCheck %s --input-file=%t.default.ll --check-prefix=DEFAULT
// RUN: ral-compile %s --emit=llvm --max-optimized-function-size=20 -o %t.size.ll
// RUN: FileCheck %s --input-file=%t.size.ll --check-prefix=LIMITED
// RUN: ral-compile %s --emit=llvm --max-optimized-loop-depth=1 -o %t.depth.ll
// RUN: FileCheck %s --input-file=%t.depth.ll --check-prefix=LIMITED
// RUN: ral-compile %s -o %t.ralm
// RUN: ral-compile %s --max-optimized-function-size=20 -o %t.size.ralm
// RUN: ral-compile %s --max-optimized-loop-depth=1 -o %t.depth.ralm
// RUN: ral-run %t.ralm --input=2x3xf32=1,2,3,4,5,6 | FileCheck %s --check-prefix=OUT
// RUN: ral-run %t.size.ralm --input=2x3xf32=1,2,3,4,5,6 | FileCheck %s --check-prefix=OUT
// RUN: ral-run %t.depth.ralm --input=2x3xf32=1,2,3,4,5,6 | FileCheck %s --check-prefix=OUT

// DEFAULT-NOT: optnone
// The entry's code (inlined into ral_entry when optimised first):
// LIMITED: define {{.*}}void @{{main|ral_entry}}(ptr %0) {{.*}}[[ATTRS:#[0-9]+]] {
// LIMITED: attributes [[ATTRS]] = { noinline optnone

// The sum of all elements, twice: 21 + 21.
// OUT: output 0: 1xf32=42

func.func @main(%a: memref<?x3xf32>) -> memref<1xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %a, %c0 : memref<?x3xf32>
  %sum = memref.alloc() : memref<1xf32>
  memref.store %zero, %sum[%c0] : memref<1xf32>
  scf.for %r = %c0 to %c1 step %c1 {
    scf.for %i = %c0 to %n step %c1 {
      scf.for %j = %c0 to %c3 step %c1 {
        %v = memref.load %a[%i, %j] : memref<?x3xf32>
        %s = memref.load %sum[%c0] : memref<1xf32>
        %t = arith.addf %s, %v : f32
        %u = arith.addf %t, %v : f32
        memref.store %u, %sum[%c0] : memref<1xf32>
      }
    }
  }
  return %sum : memref<1xf32>
}
