// GPU kernels refuse what they cannot compile: an unknown architecture (listing the accepted
// ones), a math op without an approximation (no device library is linked), a loop that calls.
// RUN: not ral-opt %s -disc-ral-outline-kernels="device=cuda gpu-arch=sm_80,sm_12" 2>&1 | FileCheck %s --check-prefix=ARCH
// RUN: not ral-opt %s -disc-ral-outline-kernels="device=hsa gpu-arch=gfx9000" 2>&1 | FileCheck %s --check-prefix=GFX
// RUN: ral-opt %s -split-input-file -disc-ral-outline-kernels="device=hsa gpu-arch=gfx90a" -disc-ral-lower-gpu-kernels -verify-diagnostics

// ARCH: error: unknown cuda architecture 'sm_12'; the accepted ones are {{.*}}sm_75, sm_80{{.*}}sm_90
// GFX: error: unknown hsa architecture 'gfx9000'; the accepted ones are {{.*}}gfx1100{{.*}}gfx90a

func.func @f64_exp(%ctx: !disc_ral.context, %x: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %x[%i] : memref<?xf64>
    // expected-error @+1 {{'math.exp' on 'f64' has no approximation for GPU kernels}}
    %e = math.exp %v : f64
    memref.store %e, %x[%i] : memref<?xf64>
    scf.reduce
  }
  return
}

// -----

func.func private @helper(f32) -> f32

func.func @calls(%ctx: !disc_ral.context, %x: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{this loop cannot run on device 'hsa': see the error above}}
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %x[%i] : memref<?xf32>
    // expected-error @+1 {{cannot run in a GPU kernel}}
    %w = func.call @helper(%v) : (f32) -> f32
    memref.store %w, %x[%i] : memref<?xf32>
    scf.reduce
  }
  return
}
