// A RAL function the runtime does not have: the import-table module is refused at load time
// naming it; the by-name module fails at the call, the generated code sees the error flag and
// returns early, and ral-run reports the error instead of crashing.
// RUN: ral-compile %s -o %t.ralm
// RUN: not ral-run %t.ralm --input=4xf32=1,2,3,4 2>&1 | FileCheck %s --check-prefix=TABLE
// RUN: ral-compile %s -o %t.by_name.ralm --by-name
// RUN: not ral-run %t.by_name.ralm --input=4xf32=1,2,3,4 2>&1 | FileCheck %s --check-prefix=BYNAME

// TABLE: ral-run: error: {{.*}}ral_no_such_kernel___cpu___pvoid_m1df32___void
// BYNAME: ral-run: error: {{.*}}ral_no_such_kernel___cpu___pvoid_m1df32___void

func.func private @missing(memref<?xf32>) attributes {disc_ral.custom_call = "ral_no_such_kernel"}

func.func @main(%x: memref<?xf32>) -> memref<?xf32> {
  call @missing(%x) : (memref<?xf32>) -> ()
  return %x : memref<?xf32>
}
