// ral-compile reports bad input with a location and a non-zero exit, and writes nothing.
// RUN: not ral-compile %S/Inputs/bad_syntax.mlir -o %t.1.ralm 2>&1 | FileCheck %s --check-prefix=SYNTAX
// RUN: not test -e %t.1.ralm
// SYNTAX: bad_syntax.mlir:4:3: error: expected ',' or '>' in memref type

// RUN: not ral-compile %S/Inputs/no_lowering.mlir -o %t.2.ralm 2>&1 | FileCheck %s --check-prefix=SIGNATURE
// RUN: not test -e %t.2.ralm
// SIGNATURE: no_lowering.mlir:1:1: error: argument #0 of entry function @main has type 'tensor<4xf32>', which RAL cannot bind

// RUN: not ral-compile %S/Inputs/unlowerable_op.mlir -o %t.3.ralm 2>&1 | FileCheck %s --check-prefix=OP
// RUN: not test -e %t.3.ralm
// OP: unlowerable_op.mlir:3:{{[0-9]+}}: error: failed to legalize operation 'bufferization.to_tensor'

// RUN: not ral-compile %S/Inputs/missing.mlir -o %t.4.ralm 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: ral-compile: error: cannot open input file {{.*}}missing.mlir

// RUN: not ral-compile %S/Inputs/bad_syntax.mlir --device=tpu -o %t.5.ralm 2>&1 | FileCheck %s --check-prefix=DEVICE
// DEVICE: ral-compile: error: --device=tpu is not supported
