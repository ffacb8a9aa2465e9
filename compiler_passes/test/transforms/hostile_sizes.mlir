// disc-ral-check-limits: a static shape whose byte size would wrap, or beyond what RAL tensors
// and buffers hold (2^48 elements, 2^56 bytes), is an error naming the op and the type, wherever
// the type appears; so are stack allocations over 64 KiB and constants over what a module file
// holds. ral-compile runs the pass first.
// RUN: ral-opt %s -split-input-file -disc-ral-check-limits -verify-diagnostics
// RUN: not ral-compile %s -o %t.ralm 2>&1 | FileCheck %s --check-prefix=COMPILE
// RUN: not test -e %t.ralm

// The element count wraps int64: the byte size would wrap too, and the buffer be tiny.
// COMPILE: hostile_sizes.mlir:[[@LINE+3]]:8: error: 'memref.alloc' op result #0 has type 'memref<4611686018427387904x4xf32>', which has more elements than int64 can count
func.func @main(%a: memref<4xf32>) -> memref<4xf32> {
  // expected-error@+1 {{'memref.alloc' op result #0 has type 'memref<4611686018427387904x4xf32>', which has more elements than int64 can count (a tensor or buffer holds at most 2^48 elements and 2^56 bytes)}}
  %0 = memref.alloc() : memref<4611686018427387904x4xf32>
  return %a : memref<4xf32>
}

// -----

func.func @too_many_elements() {
  // expected-error@+1 {{has type 'memref<281474976710657xi8>', which has 281474976710657 elements; at most 2^48 are supported}}
  %0 = memref.alloc() : memref<281474976710657xi8>
  return
}

// -----

// Exactly the limits: accepted.
func.func @at_the_limits() {
  %0 = memref.alloc() : memref<281474976710656xi8>
  %1 = memref.alloca() : memref<16384xf32>
  return
}

// -----

func.func @too_many_bytes() {
  // expected-error@+1 {{has type 'memref<268435456xvector<268435456xf64>>', which has more than 2^56 bytes}}
  %0 = memref.alloc() : memref<268435456xvector<268435456xf64>>
  return
}

// -----

// A tensor program is checked before it is bufferized.
func.func @tensor(%n: index) -> tensor<?x4611686018427387904xf32> {
  // expected-error@+1 {{'tensor.empty' op result #0 has type 'tensor<?x4611686018427387904xf32>', which has 4611686018427387904 elements}}
  %0 = tensor.empty(%n) : tensor<?x4611686018427387904xf32>
  return %0 : tensor<?x4611686018427387904xf32>
}

// -----

// expected-error@+1 {{'func.func' op block argument #0 has type 'memref<9223372036854775807x2xf32>', which has more elements than int64 can count}}
func.func @argument(%a: memref<9223372036854775807x2xf32>) {
  return
}

// -----

// A declaration has no block arguments: its signature is checked.
// expected-error@+1 {{'func.func' op attribute 'function_type' has type 'memref<9223372036854775807x2xf32>'}}
func.func private @declaration(tuple<i32, memref<9223372036854775807x2xf32>>) -> f32

// -----

// expected-error@+1 {{'memref.global' op attribute 'type' has type 'memref<4611686018427387904x4xf32>'}}
memref.global "private" @global : memref<4611686018427387904x4xf32>

// -----

func.func @stack() {
  // expected-error@+1 {{'memref.alloca' op allocates 'memref<16385xf32>' on the stack, more than 65536 bytes (a stack overflow would kill the host process); use memref.alloc}}
  %0 = memref.alloca() : memref<16385xf32>
  return
}

// -----

// Splats count at their full size: LLVM materializes them in the host library.
memref.global "private" constant @a : memref<402653184xf32> = dense<1.0>
// expected-error@+1 {{'memref.global' op attribute 'initial_value' brings the module's constants to 3221225472 bytes; at most 2080374784 are supported (a module file holds at most 2 GiB)}}
memref.global "private" constant @b : memref<402653184xf32> = dense<2.0>
