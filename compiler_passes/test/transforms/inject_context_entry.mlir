// The entry function can have another name.
// RUN: ral-opt %s -disc-ral-inject-execution-context=entry=forward | FileCheck %s
// CHECK: func @forward(%[[CTX:.*]]: !disc_ral.context) attributes {disc_ral.entry}
// CHECK: %[[X:.*]] = memref.reinterpret_cast {{.*}} to memref<3xf64>
// CHECK: disc_ral.send_output %[[CTX]], 0, %[[X]] : memref<3xf64>
func.func @forward(%x: memref<3xf64>) -> memref<3xf64> {
  return %x : memref<3xf64>
}
