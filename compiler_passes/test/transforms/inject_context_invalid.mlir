// Entry functions RAL cannot bind are rejected with the argument and type named.
// RUN: ral-opt %s -disc-ral-inject-execution-context -split-input-file -verify-diagnostics

// expected-error@+1 {{argument #1 of entry function @main has type 'tensor<4xf32>', which RAL cannot bind}}
func.func @main(%a: memref<4xf32>, %b: tensor<4xf32>) {
  return
}

// -----

// expected-error@+1 {{result #0 of entry function @main has type 'memref<*xf32>', which RAL cannot bind}}
func.func @main(%a: memref<4xf32>) -> memref<*xf32> {
  %u = memref.cast %a : memref<4xf32> to memref<*xf32>
  return %u : memref<*xf32>
}

// -----

// expected-error@+1 {{argument #0 of entry function @main has type 'f32'}}
func.func @main(%a: f32) {
  return
}

// -----

// expected-error@+1 {{argument #0 of entry function @main has type 'memref<4xindex>'}}
func.func @main(%a: memref<4xindex>) {
  return
}

// -----

// expected-error@+1 {{no entry function @main in the module}}
module {
  func.func @forward(%a: memref<4xf32>) {
    return
  }
}

// -----

// expected-error@+1 {{entry function @main has no body}}
func.func private @main(memref<4xf32>)

// -----

// expected-error@+1 {{entry function @main already takes an execution context}}
func.func @main(%ctx: !disc_ral.context) {
  return
}

// -----

func.func @main(%a: memref<4xf32>) {
  call @helper(%a) : (memref<4xf32>) -> ()
  return
}
func.func private @helper(%a: memref<4xf32>) {
  return
}
func.func @other(%a: memref<4xf32>) {
  // expected-error@+1 {{@other calls @helper, which takes the execution context, but is not reachable from the entry function @main}}
  call @helper(%a) : (memref<4xf32>) -> ()
  return
}

// -----

// expected-error@+1 {{argument #0 of entry function @main has type 'memref<4xf32, strided<[1], offset: 3>>': an input starts at the element the host passes, so its layout's offset must be 0 or ?, got 3}}
func.func @main(%x: memref<4xf32, strided<[1], offset: 3>>) {
  return
}

// -----

// expected-error@+1 {{argument #0 of entry function @main has type 'memref<4x3xf32, strided<[-3, 1], offset: ?>>': its layout has a negative stride, which hosts cannot lay an input out in; use ? for a stride the input decides}}
func.func @main(%x: memref<4x3xf32, strided<[-3, 1], offset: ?>>) {
  return
}
