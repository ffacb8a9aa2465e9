// RUN: ral-opt %s -disc-ral-to-llvm -split-input-file -verify-diagnostics -allow-unregistered-dialect

// expected-error@+1 {{no RAL entry function (run disc-ral-inject-execution-context first)}}
module {
  func.func @main(%a: memref<4xf32>) {
    return
  }
}

// -----

// An op with no lowering is named.
func.func @main(%ctx: !disc_ral.context) attributes {disc_ral.entry} {
  // expected-error@+1 {{failed to legalize operation 'test.unknown'}}
  "test.unknown"() : () -> ()
  return
}

// -----

func.func @main(%ctx: !disc_ral.context, %a: memref<2x2xf32>, %b: memref<2x2xf32>) attributes {disc_ral.entry} {
  // expected-error@+1 {{failed to legalize operation 'linalg.matmul'}}
  linalg.matmul ins(%a, %a : memref<2x2xf32>, memref<2x2xf32>) outs(%b : memref<2x2xf32>)
  return
}
