// Portable modules carry their host code for newer x86-64 levels too; the loader runs the best one
// the CPU has (ral/host_variant.h), and every variant computes the same result.
// REQUIRES: x86_64
// RUN: ral-compile %s -o %t.ralm
// RUN: ral-inspect %t.ralm | FileCheck %s --check-prefix=AUTO
// AUTO: host library: {{[0-9]+}} bytes
// AUTO-NEXT: variant x86-64-v3: {{[0-9]+}} bytes
// AUTO-NEXT: variant x86-64-v4: {{[0-9]+}} bytes
// RUN: RAL_HOST_VARIANT=baseline ral-inspect %t.ralm | FileCheck %s --check-prefix=BASELINE
// BASELINE: (this CPU loads the baseline library)

// The same result from the baseline and from what the CPU picks.
// RUN: RAL_HOST_VARIANT=baseline ral-run %t.ralm --input 2x5xf32=1,-2,3,-4,5,-6,7,-8,9,-10 | FileCheck %s --check-prefix=OUT
// RUN: ral-run %t.ralm --input 2x5xf32=1,-2,3,-4,5,-6,7,-8,9,-10 | FileCheck %s --check-prefix=OUT
// RUN: ral-run %t.ralm --input 0x5xf32= | FileCheck %s --check-prefix=EMPTY
// RUN: not env RAL_HOST_VARIANT=x86-64-v9 ral-run %t.ralm --input 2x5xf32=1,-2,3,-4,5,-6,7,-8,9,-10 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// OUT: output 0: 2x5xf32=1,0,3,0,5,0,7,0,9,0
// EMPTY: output 0: 0x5xf32=
// UNKNOWN: RAL_HOST_VARIANT=x86-64-v9: the module has no such host variant (it has baseline, x86-64-v3, x86-64-v4)

// A module for a named CPU, one without optimisation, or --host-variants=none has none; a list
// picks them.
// RUN: ral-compile %s --mcpu=native -o %t.native.ralm
// RUN: ral-inspect %t.native.ralm | FileCheck %s --check-prefix=NONE
// RUN: ral-compile %s -O 0 -o %t.o0.ralm
// RUN: ral-inspect %t.o0.ralm | FileCheck %s --check-prefix=NONE
// RUN: ral-compile %s --host-variants=none -o %t.none.ralm
// RUN: ral-inspect %t.none.ralm | FileCheck %s --check-prefix=NONE
// NONE: host library: {{[0-9]+}} bytes
// NONE-NEXT: inputs (1):
// RUN: ral-compile %s --mcpu=native --host-variants=x86-64-v2 -o %t.v2.ralm
// RUN: ral-inspect %t.v2.ralm | FileCheck %s --check-prefix=V2
// V2: host library: {{[0-9]+}} bytes
// V2-NEXT: variant x86-64-v2: {{[0-9]+}} bytes
// V2-NEXT: inputs (1):

// RUN: not ral-compile %s --host-variants=x86-64-v5 -o %t.bad.ralm 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: --host-variants: 'x86-64-v5' is not a host variant target (auto, none, or a comma-separated list of: x86-64-v2, x86-64-v3, x86-64-v4)
// RUN: not ral-compile %s --host-variants=x86-64-v3,x86-64-v3 -o %t.bad.ralm 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: --host-variants: 'x86-64-v3' is listed twice
// RUN: not test -e %t.bad.ralm

// relu(x), elementwise: a loop the vectoriser widens differently per level.
func.func @main(%x: tensor<?x5xf32>) -> tensor<?x5xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x5xf32>
  %e = tensor.empty(%n) : tensor<?x5xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x5xf32>) outs(%e : tensor<?x5xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<?x5xf32>
  return %r : tensor<?x5xf32>
}
