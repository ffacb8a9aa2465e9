// Index arithmetic a loop body keeps as affine.apply (an im2col window's input row, as the ONNX
// importer's convolutions on GPU devices have) is lowered inside the kernel for both GPU back ends:
// nothing but LLVM, NVVM and ROCDL ops is left (it used to stop the compile with an unrealized
// cast). The result of such a convolution was checked against the CPU on an NVIDIA GPU.
// RUN: ral-opt %s -disc-ral-outline-kernels="device=cuda gpu-arch=sm_80" -disc-ral-lower-gpu-kernels | FileCheck %s --check-prefix=NVVM
// RUN: ral-opt %s -disc-ral-outline-kernels="device=hsa gpu-arch=gfx90a" -disc-ral-lower-gpu-kernels | FileCheck %s --check-prefix=ROCDL

// NVVM: llvm.func @ral_kernel_0({{.*}}) attributes {gpu.kernel, nvvm.kernel}
// NVVM-NOT: affine.
// NVVM-NOT: unrealized_conversion_cast
// NVVM: llvm.mul
// NVVM-NOT: affine.
// NVVM-NOT: unrealized_conversion_cast

// ROCDL: llvm.func @ral_kernel_0({{.*}}) attributes {gpu.kernel, rocdl.kernel}
// ROCDL-NOT: affine.
// ROCDL-NOT: unrealized_conversion_cast

#row = affine_map<(d0, d1) -> (d0 * 2 + d1 - 3)>
func.func @window(%ctx: !disc_ral.context, %x: memref<?x?xf32>, %y: memref<?x?xf32>, %n: index, %k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.parallel (%j) = (%c0) to (%k) step (%c1) {
      %r = affine.apply #row(%i, %j)
      %s = arith.addi %r, %c3 : index
      %v = memref.load %x[%s, %j] : memref<?x?xf32>
      memref.store %v, %y[%i, %j] : memref<?x?xf32>
      scf.reduce
    }
    scf.reduce
  }
  return
}
