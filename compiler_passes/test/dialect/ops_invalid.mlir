// Verifier errors of the disc_ral ops.
// RUN: ral-opt %s -split-input-file -verify-diagnostics

func.func @recv_tensor(%ctx: !disc_ral.context) {
  // expected-error@+1 {{result must be a ranked memref}}
  %x = disc_ral.recv_input %ctx, 0 : memref<*xf32>
  return
}

// -----

func.func @recv_negative_index(%ctx: !disc_ral.context) {
  // expected-error@+1 {{attribute 'index' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  %x = disc_ral.recv_input %ctx, -1 : memref<?xf32>
  return
}

// -----

func.func @send_complex(%ctx: !disc_ral.context, %v: memref<4xcomplex<f32>>) {
  // expected-error@+1 {{sent value must be a ranked memref}}
  disc_ral.send_output %ctx, 0, %v : memref<4xcomplex<f32>>
  return
}

// -----

func.func @dispatch_separator(%ctx: !disc_ral.context) {
  // expected-error@+1 {{'call_target_name' must not contain "___"}}
  disc_ral.dispatch %ctx, "ral___gemm", "cpu" () : () -> ()
  return
}

// -----

func.func @dispatch_empty_device(%ctx: !disc_ral.context) {
  // expected-error@+1 {{requires a non-empty 'device'}}
  disc_ral.dispatch %ctx, "ral_gemm", "" () : () -> ()
  return
}

// -----

func.func @dispatch_tensor(%ctx: !disc_ral.context, %t: tensor<4xf32>) {
  // expected-error@+1 {{has no RAL encoding for type 'tensor<4xf32>'}}
  disc_ral.dispatch %ctx, "ral_sum", "cpu" (%t) : (tensor<4xf32>) -> ()
  return
}

// -----

func.func @dispatch_two_contexts(%ctx: !disc_ral.context) {
  // expected-error@+1 {{takes the context only as its first operand}}
  disc_ral.dispatch %ctx, "ral_f", "cpu" (%ctx) : (!disc_ral.context) -> ()
  return
}

// -----

func.func @alloc_sizes(%ctx: !disc_ral.context, %n: index) {
  // expected-error@+1 {{expects 2 dynamic sizes}}
  %m = disc_ral.alloc %ctx(%n) : memref<?x?xf32>
  return
}

// -----

// expected-error@+1 {{unknown  type `stream` in dialect `disc_ral`}}
func.func @bad_type(%s: !disc_ral.stream) {
  return
}

// -----

func.func @alloc_layout(%ctx: !disc_ral.context) {
  // expected-error@+1 {{allocates only memrefs with the identity layout}}
  %m = disc_ral.alloc %ctx() : memref<4x4xf32, strided<[8, 1]>>
  return
}

// -----

func.func @alloc_memory_space(%ctx: !disc_ral.context) {
  // expected-error@+1 {{allocates integer, index or float memrefs in the default memory space}}
  %m = disc_ral.alloc %ctx() : memref<4xf32, 1>
  return
}

// -----

func.func @index_elements(%ctx: !disc_ral.context) {
  // expected-error@+1 {{result must be a ranked memref with a strided layout, rank <= 8}}
  %x = disc_ral.recv_input %ctx, 0 : memref<?xindex>
  return
}

// -----

// expected-note@+1 {{prior use here}}
func.func @not_a_context(%ctx: i64) {
  // expected-error@+1 {{use of value '%ctx' expects different type than prior uses: '!disc_ral.context' vs 'i64'}}
  %x = disc_ral.recv_input %ctx, 0 : memref<?xf32>
  return
}

// -----

func.func @generic_not_a_context(%ctx: i64) {
  // expected-error@+1 {{operand #0 must be the per-execution RAL context, but got 'i64'}}
  %x = "disc_ral.recv_input"(%ctx) <{index = 0 : i64}> : (i64) -> memref<?xf32>
  return
}

// -----

func.func @missing_index(%ctx: !disc_ral.context) {
  // expected-error@+1 {{requires attribute 'index'}}
  %x = "disc_ral.recv_input"(%ctx) : (!disc_ral.context) -> memref<?xf32>
  return
}
