// Recursion in what the entry reaches is refused: a call depth set by the input would overflow
// the host thread's stack and kill the process (every other failure of a module is an error).
// Indirect calls are refused there too: they would hide recursion. Recursion nothing reaches is
// dead code and compiles.
// RUN: ral-opt %s -split-input-file -disc-ral-inject-execution-context -verify-diagnostics
// The last case on its own, compiled and run:
// RUN: %python -c "import sys; sys.stdout.write(open(sys.argv[1]).read().split('-' * 5)[-1])" %s > %t.unreachable.mlir
// RUN: ral-compile %t.unreachable.mlir -o %t.ralm
// RUN: ral-run %t.ralm --input=4xf32=1,2,3,4 | FileCheck %s --check-prefix=OUT
// The first case, refused by ral-compile (which used to compile it; it crashed when run):
// RUN: %python -c "import sys; sys.stdout.write(open(sys.argv[1]).read().split('-' * 5)[0])" %s > %t.recursive.mlir
// RUN: not ral-compile %t.recursive.mlir -o %t.bad.ralm 2>&1 | FileCheck %s --check-prefix=COMPILE
// RUN: not test -e %t.bad.ralm

func.func @count(%a: memref<4xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %done = arith.cmpi eq, %n, %c0 : index
  scf.if %done {
  } else {
    %m = arith.subi %n, %c1 : index
    // COMPILE: recursive.mlir:[[@LINE+2]]:5: error: @count calls itself: recursion is not supported
    // expected-error@+1 {{@count calls itself: recursion is not supported (a call depth set by the input could overflow the host thread's stack)}}
    func.call @count(%a, %m) : (memref<4xf32>, index) -> ()
  }
  return
}
func.func @main(%a: memref<4xf32>) -> memref<4xf32> {
  %c1000000 = arith.constant 1000000 : index
  func.call @count(%a, %c1000000) : (memref<4xf32>, index) -> ()
  return %a : memref<4xf32>
}

// -----

func.func @f(%a: memref<4xf32>) {
  func.call @g(%a) : (memref<4xf32>) -> ()
  return
}
func.func @g(%a: memref<4xf32>) {
  func.call @h(%a) : (memref<4xf32>) -> ()
  return
}
func.func @h(%a: memref<4xf32>) {
  // expected-error@+1 {{@f calls itself through @g @h: recursion is not supported}}
  func.call @f(%a) : (memref<4xf32>) -> ()
  return
}
func.func @main(%a: memref<4xf32>) -> memref<4xf32> {
  func.call @f(%a) : (memref<4xf32>) -> ()
  return %a : memref<4xf32>
}

// -----

func.func @twice(%x: f32) -> f32 {
  %y = arith.addf %x, %x : f32
  return %y : f32
}
func.func @main(%a: memref<4xf32>) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %v = memref.load %a[%c0] : memref<4xf32>
  %f = func.constant @twice : (f32) -> f32
  // expected-error@+1 {{'func.call_indirect' op is not supported: a RAL module's calls must be direct, so that recursion can be refused}}
  %r = func.call_indirect %f(%v) : (f32) -> f32
  memref.store %r, %a[%c0] : memref<4xf32>
  return %a : memref<4xf32>
}

// -----

// Not reached from @main: never runs, so it compiles (LLVM drops it). A function called twice
// (not recursion) is fine too.
func.func @forever(%a: memref<4xf32>) {
  func.call @forever(%a) : (memref<4xf32>) -> ()
  return
}
func.func @double(%a: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %a[%c0] : memref<4xf32>
  %w = arith.addf %v, %v : f32
  memref.store %w, %a[%c0] : memref<4xf32>
  return
}
func.func @twice(%a: memref<4xf32>) {
  func.call @double(%a) : (memref<4xf32>) -> ()
  func.call @double(%a) : (memref<4xf32>) -> ()
  return
}
func.func @main(%a: memref<4xf32>) -> memref<4xf32> {
  %m = memref.alloc() : memref<4xf32>
  memref.copy %a, %m : memref<4xf32> to memref<4xf32>
  func.call @twice(%m) : (memref<4xf32>) -> ()
  func.call @double(%m) : (memref<4xf32>) -> ()
  return %m : memref<4xf32>
}
// OUT: output 0: 4xf32=8,2,3,4
