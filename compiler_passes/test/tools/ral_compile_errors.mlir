// ral-compile reports bad input with a location and a non-zero exit, and writes nothing.
// RUN: rm -f %t.1.ralm %t.2.ralm %t.3.ralm %t.5.ralm %t.6.ralm
// RUN: not ral-compile %S/../Inputs/bad_syntax.mlir -o %t.1.ralm 2>&1 | FileCheck %s --check-prefix=SYNTAX
// RUN: not test -e %t.1.ralm
// SYNTAX: bad_syntax.mlir:3:37: error: expected ',' or '>' in memref type

// index has no fixed width in memory: no RAL tensor has index elements.
// RUN: not ral-compile %S/../Inputs/unbindable_signature.mlir -o %t.2.ralm 2>&1 | FileCheck %s --check-prefix=SIGNATURE
// RUN: not test -e %t.2.ralm
// SIGNATURE: unbindable_signature.mlir:1:1: error: argument #0 of entry function @main has type 'memref<4xindex>', which RAL cannot bind

// RUN: not ral-compile %S/../Inputs/unlowerable_op.mlir -o %t.3.ralm 2>&1 | FileCheck %s --check-prefix=OP
// RUN: not test -e %t.3.ralm
// OP: unlowerable_op.mlir:3:{{[0-9]+}}: error: 'bufferization.to_tensor' op to_tensor ops without `restrict` are not supported

// An op the pipeline has no LLVM lowering for is named, at its location.
// RUN: not ral-compile %S/../Inputs/no_llvm_lowering.mlir -o %t.6.ralm 2>&1 | FileCheck %s --check-prefix=LEGALIZE
// RUN: not test -e %t.6.ralm
// LEGALIZE: no_llvm_lowering.mlir:4:8: error: failed to legalize operation 'math.ipowi'

// RUN: not ral-compile %S/../Inputs/missing.mlir -o %t.4.ralm 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: ral-compile: error: cannot open '{{.*}}missing.mlir': No such file or directory

// RUN: not ral-compile %S/../Inputs/bad_syntax.mlir --device=tpu -o %t.5.ralm 2>&1 | FileCheck %s --check-prefix=DEVICE
// DEVICE: ral-compile: error: --device=tpu is not supported

// RUN: not ral-compile %S/../Inputs/bad_syntax.mlir --device=vulkan --kernels=false -o %t.5.ralm 2>&1 | FileCheck %s --check-prefix=NOKERNELS
// NOKERNELS: ral-compile: error: --device=vulkan runs every loop as a kernel; --kernels=false is cpu only
