// A stack allocation of a size set at run time could overflow the host thread's stack and kill
// the process: only static sizes (of at most 64 KiB, disc-ral-check-limits) are accepted.
// RUN: ral-opt %s -disc-ral-inject-execution-context -disc-ral-lower-to-library-calls -verify-diagnostics

func.func @main(%a: memref<?xf32>) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  // expected-error@+1 {{'memref.alloca' op with dynamic sizes is not supported ('memref<?xf32>'): a stack allocation of a size set at run time could overflow the stack; use memref.alloc}}
  %s = memref.alloca(%n) : memref<?xf32>
  return %a : memref<?xf32>
}
