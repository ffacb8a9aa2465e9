// disc-ral-outline-kernels{device=vulkan}: an outermost parallel loop becomes a SPIR-V kernel
// module (buffers as bindings, scalars and dynamic strides as push constants, a grid-stride loop
// over the iterations, inner loops sequential) and a launch of 64-invocation workgroups;
// disc-ral-serialize-kernels turns the module into a binary on the module attribute.
// RUN: ral-opt %s -disc-ral-outline-kernels=device=vulkan -split-input-file -verify-diagnostics | FileCheck %s
// RUN: ral-opt %s -disc-ral-outline-kernels=device=vulkan -disc-ral-serialize-kernels -split-input-file -verify-diagnostics | FileCheck %s --check-prefix=BIN

// CHECK-LABEL: func.func @scale
// CHECK-SAME: (%[[CTX:.*]]: !disc_ral.context, %[[X:.*]]: memref<?x?xf32, strided<[?, 1], offset: ?>>, %[[Y:.*]]: memref<?x?xf16>, %[[N:.*]]: index, %[[M:.*]]: index, %[[S:.*]]: f16)
// CHECK: %[[TRIPS:.*]] = arith.maxsi
// CHECK: memref.extract_strided_metadata %[[X]]
// CHECK: memref.extract_strided_metadata %[[Y]]
// CHECK: %[[PX:.*]] = memref.extract_aligned_pointer_as_index %[[X]]
// CHECK: %[[PY:.*]] = memref.extract_aligned_pointer_as_index %[[Y]]
// f16 scalars travel as f32.
// CHECK: %[[SW:.*]] = arith.extf %[[S]] : f16 to f32
// CHECK: %[[WANT:.*]] = arith.ceildivsi %[[TRIPS]], %[[C64:.*]] : index
// CHECK: %[[GRID:.*]] = arith.minsi %[[WANT]], %{{.*}} : index
// CHECK: disc_ral.launch %[[CTX]], @ral_kernel_0 grid(%[[GRID]], %{{.*}}, %{{.*}}) block(%[[C64]], %{{.*}}, %{{.*}}) args(%[[PX]], %[[PY]], %[[TRIPS]], {{.*}}%[[SW]]{{.*}}) : index, index, index,
// CHECK-NOT: scf.parallel
// CHECK: return

// Only the capabilities the kernel needs (f16 here) are required.
// CHECK: spirv.module @ral_kernel_0 Logical GLSL450 requires #spirv.vce<v1.0, [{{[^]]*}}Float16{{[^]]*}}]
// CHECK-SAME: attributes {disc_ral.kernel
// CHECK-DAG: spirv.GlobalVariable @ral_buffer_0 bind(0, 0) : !spirv.ptr<!spirv.struct<(!spirv.rtarray<f32, stride=4> [0])>, StorageBuffer>
// CHECK-DAG: spirv.GlobalVariable @ral_buffer_1 bind(0, 1) : !spirv.ptr<!spirv.struct<(!spirv.rtarray<f16, stride=2> [0])>, StorageBuffer>
// CHECK-DAG: spirv.GlobalVariable @ral_push_constants : !spirv.ptr<!spirv.struct<({{.*}}f32{{.*}})>, PushConstant>
// CHECK: spirv.func @ral_kernel_0() "None"
// Function variables only in the entry block.
// CHECK-NOT: ^bb
// CHECK: spirv.Variable
// CHECK: spirv.mlir.loop
// CHECK: spirv.mlir.loop
// CHECK: spirv.FConvert %{{.*}} : f32 to f16
// CHECK: spirv.FMul
// CHECK: spirv.Store "StorageBuffer"
// CHECK: spirv.EntryPoint "GLCompute" @ral_kernel_0
// CHECK: spirv.ExecutionMode @ral_kernel_0 "LocalSize", 64, 1, 1

// BIN: module attributes {disc_ral.device_kernels = [{data = "{{.*}}", format = "spirv", name = "ral_kernel_0", workgroup = array<i64: 64, 1, 1>}]}
// BIN: disc_ral.launch %{{.*}}, @ral_kernel_0
// BIN-NOT: spirv.module

func.func @scale(%ctx: !disc_ral.context, %x: memref<?x?xf32, strided<[?, 1], offset: ?>>, %y: memref<?x?xf16>, %n: index, %m: index, %s: f16) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %acc = scf.for %j = %c0 to %m step %c1 iter_args(%a = %s) -> (f16) {
      %v = memref.load %x[%i, %j] : memref<?x?xf32, strided<[?, 1], offset: ?>>
      %h = arith.truncf %v : f32 to f16
      %p = arith.mulf %a, %h : f16
      scf.yield %p : f16
    }
    scf.parallel (%j) = (%c0) to (%m) step (%c1) {
      memref.store %acc, %y[%i, %j] : memref<?x?xf16>
      scf.reduce
    }
    scf.reduce
  }
  return
}

// -----

// A loop that calls a function cannot be a kernel, and nothing may stay on the host.
func.func private @helper(f32) -> f32

func.func @calls(%ctx: !disc_ral.context, %x: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{this loop cannot run on device 'vulkan': see the error above}}
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %x[%i] : memref<?xf32>
    // expected-error @+1 {{cannot run in a SPIR-V kernel}}
    %w = func.call @helper(%v) : (f32) -> f32
    memref.store %w, %x[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// Host code reads and writes single elements through the runtime: a load becomes
// ral_read_element of a rank-0 view at the element, a store ral_write_element.
// CHECK-LABEL: func.func @host_element
// CHECK-SAME: (%[[CTX:.*]]: !disc_ral.context, %[[X:.*]]: memref<?x?xf32, strided<[?, 1], offset: ?>>, %[[I:.*]]: index, %[[J:.*]]: index, %[[B:.*]]: memref<i1>)
// CHECK: %[[BASE:.*]], %[[OFF:.*]], %[[SIZES:.*]]:2, %[[STRIDES:.*]]:2 = memref.extract_strided_metadata %[[X]]
// CHECK: %[[R:.*]] = arith.muli %[[I]], %[[STRIDES]]#0
// CHECK: %[[O1:.*]] = arith.addi %[[OFF]], %[[R]]
// CHECK: %[[C:.*]] = arith.muli %[[J]], %[[STRIDES]]#1
// CHECK: %[[O2:.*]] = arith.addi %[[O1]], %[[C]]
// CHECK: %[[E:.*]] = memref.reinterpret_cast %[[BASE]] to offset: [%[[O2]]], sizes: [], strides: [] : memref<f32> to memref<f32, strided<[], offset: ?>>
// CHECK: %[[V:.*]] = disc_ral.dispatch %[[CTX]], "ral_read_element", "vulkan" (%[[E]]) : (memref<f32, strided<[], offset: ?>>) -> f32
// CHECK: %[[P:.*]] = arith.cmpf ogt, %[[V]]
// CHECK: memref.extract_strided_metadata %[[B]]
// CHECK: disc_ral.dispatch %[[CTX]], "ral_write_element", "vulkan" (%{{.*}}, %[[P]]) : (memref<i1, strided<[], offset: ?>>, i1) -> ()
// CHECK-NOT: memref.load
// CHECK-NOT: memref.store
func.func @host_element(%ctx: !disc_ral.context, %x: memref<?x?xf32, strided<[?, 1], offset: ?>>, %i: index, %j: index, %b: memref<i1>) -> f32 {
  %v = memref.load %x[%i, %j] : memref<?x?xf32, strided<[?, 1], offset: ?>>
  %zero = arith.constant 0.0 : f32
  %p = arith.cmpf ogt, %v, %zero : f32
  memref.store %p, %b[] : memref<i1>
  return %v : f32
}

// -----

// An element RAL cannot bind (index) stays a host access: an error naming the operation.
func.func @host_access(%ctx: !disc_ral.context, %x: memref<?xindex>) -> index {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{would run on the host over device memory: with device 'vulkan' every access of a buffer runs in a kernel, and this memref.load is not in an outlined loop}}
  %v = memref.load %x[%c0] : memref<?xindex>
  return %v : index
}

// -----

// bf16 has no SPIR-V type.
func.func @bf16(%ctx: !disc_ral.context, %x: memref<?xbf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{SPIR-V kernels cannot read or write bf16 buffers}}
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %x[%i] : memref<?xbf16>
    memref.store %v, %x[%i] : memref<?xbf16>
    scf.reduce
  }
  return
}
