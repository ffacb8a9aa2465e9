// ral-compile reports bad input with a location and a non-zero exit, and writes nothing.
// RUN: not ral-compile %S/Inputs/bad_syntax.mlir -o %t.1.ralm 2>&1 | FileCheck %s --check-prefix=SYNTAX
// RUN: not test -e %t.1.ralm
// SYNTAX: bad_syntax.mlir:3:37: error: expected ',' or '>' in memref type

// RUN: not ral-compile %S/Inputs/no_lowering.mlir -o %t.2.ralm 2>&1 | FileCheck %s --check-prefix=SIGNATURE
// RUN: not test -e %t.2.ralm
// A tensor argument with a memref result: one-shot bufferization cannot rewrite the function.
// SIGNATURE: no_lowering.mlir:1:1: error: op was not bufferized

// RUN: not ral-compile %S/Inputs/unlowerable_op.mlir -o %t.3.ralm 2>&1 | FileCheck %s --check-prefix=OP
// RUN: not test -e %t.3.ralm
// OP: unlowerable_op.mlir:3:{{[0-9]+}}: error: 'bufferization.to_tensor' op to_tensor ops without `restrict` are not supported

// RUN: not ral-compile %S/Inputs/missing.mlir -o %t.4.ralm 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: ral-compile: error: cannot open input file {{.*}}missing.mlir

// RUN: not ral-compile %S/Inputs/bad_syntax.mlir --device=tpu -o %t.5.ralm 2>&1 | FileCheck %s --check-prefix=DEVICE
// DEVICE: ral-compile: error: --device=tpu is not supported
