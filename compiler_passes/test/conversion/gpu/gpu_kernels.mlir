// disc-ral-outline-kernels{device=cuda|hsa}: an outermost parallel loop becomes a gpu.module with
// one #nvvm.target / #rocdl.target per architecture (buffers as global pointers, scalars and
// dynamic strides as values, a grid-stride loop over the nested parallel loops' iterations) and a launch of
// 256-thread blocks; disc-ral-lower-gpu-kernels inlines every math op (no libdevice __nv_*, no
// ROCm __ocml_* call) and lowers to NVVM / ROCDL; disc-ral-serialize-gpu-kernels stores PTX or
// HSACO per architecture on the module attribute.
// RUN: ral-opt %s -disc-ral-outline-kernels="device=cuda gpu-arch=sm_80,sm_90" | FileCheck %s --check-prefix=OUTLINE
// RUN: ral-opt %s -disc-ral-outline-kernels="device=cuda gpu-arch=sm_80" -disc-ral-lower-gpu-kernels | FileCheck %s --check-prefix=NVVM
// RUN: ral-opt %s -disc-ral-outline-kernels="device=hsa gpu-arch=gfx90a" -disc-ral-lower-gpu-kernels | FileCheck %s --check-prefix=ROCDL
// RUN: ral-opt %s -disc-ral-outline-kernels="device=cuda gpu-arch=sm_80,sm_90" -disc-ral-lower-gpu-kernels -disc-ral-serialize-gpu-kernels | FileCheck %s --check-prefix=PTX
// RUN: ral-opt %s -disc-ral-outline-kernels="device=hsa gpu-arch=gfx90a,gfx1100" -disc-ral-lower-gpu-kernels -disc-ral-serialize-gpu-kernels | sed -E 's/data = "(.{12})[^"]*"/data = "\1..."/g' | FileCheck %s --check-prefix=HSACO

// OUTLINE: module attributes {gpu.container_module}
// OUTLINE-LABEL: func.func @act
// OUTLINE-SAME: (%[[CTX:.*]]: !disc_ral.context, %[[X:.*]]: memref<?x?xf32, strided<[?, 1], offset: ?>>, %[[Y:.*]]: memref<?x?xf32>, %[[N:.*]]: index, %[[M:.*]]: index)
// The nested loops are one grid dimension of n * m iterations (grid_parallelism.h).
// OUTLINE: %[[N0:.*]] = arith.maxsi %[[N]], %{{.*}} : index
// OUTLINE: %[[M0:.*]] = arith.maxsi %[[M]], %{{.*}} : index
// OUTLINE: %[[NM:.*]] = arith.muli %[[N0]], %[[M0]] : index
// OUTLINE: %[[TRIPS:.*]] = arith.maxsi %[[NM]], %{{.*}} : index
// OUTLINE: %[[C256:.*]] = arith.constant 256 : index
// OUTLINE: %[[WANT:.*]] = arith.ceildivsi %[[TRIPS]], %[[C256]] : index
// OUTLINE: %[[GRID:.*]] = arith.minsi %[[WANT]], %{{.*}} : index
// OUTLINE: %[[THREADS:.*]] = arith.muli %[[GRID]], %[[C256]] : index
// OUTLINE: memref.extract_strided_metadata %[[X]]
// OUTLINE: %[[PX:.*]] = memref.extract_aligned_pointer_as_index %[[X]]
// OUTLINE: %[[PY:.*]] = memref.extract_aligned_pointer_as_index %[[Y]]
// OUTLINE: disc_ral.launch %[[CTX]], @ral_kernel_0 grid(%[[GRID]], %{{.*}}, %{{.*}}) block(%[[C256]], %{{.*}}, %{{.*}}) args(%[[PX]], %[[PY]], %[[TRIPS]], %[[THREADS]], {{.*}})
// OUTLINE-NOT: scf.parallel
// OUTLINE: return
// OUTLINE: gpu.module @ral_kernel_0 [#nvvm.target<O = 3, chip = "sm_80", features = "+ptx70">, #nvvm.target<O = 3, chip = "sm_90", features = "+ptx78">] attributes {disc_ral.kernel}
// OUTLINE: gpu.func @ral_kernel_0(%[[P0:.*]]: !llvm.ptr<1>, %[[P1:.*]]: !llvm.ptr<1>, %{{.*}}: i64, %{{.*}}: i64, {{.*}}) kernel
// OUTLINE: gpu.block_id x
// OUTLINE: gpu.thread_id x
// OUTLINE: scf.for
// OUTLINE-NEXT: arith.muli
// OUTLINE-NEXT: arith.addi
// OUTLINE-NEXT: %[[J:.*]] = arith.remui %{{.*}}, %{{.*}} : index
// OUTLINE-NEXT: %[[I:.*]] = arith.divui %{{.*}}, %{{.*}} : index
// OUTLINE-NOT: scf.for
// OUTLINE: llvm.getelementptr %[[P0]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// OUTLINE: llvm.load
// OUTLINE: math.exp
// OUTLINE: llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr<1>

// Lowered: NVVM special registers, no math op and no call of a device library.
// NVVM: gpu.module @ral_kernel_0 [#nvvm.target
// NVVM: llvm.func @ral_kernel_0(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, {{.*}}) attributes {gpu.kernel, nvvm.kernel}
// NVVM-DAG: nvvm.read.ptx.sreg.ctaid.x
// NVVM-DAG: nvvm.read.ptx.sreg.tid.x
// NVVM-DAG: llvm.intr.sqrt
// NVVM-DAG: llvm.intr.fma
// NVVM-NOT: math.
// NVVM-NOT: __nv_
// NVVM-NOT: llvm.call

// ROCDL: gpu.module @ral_kernel_0 [#rocdl.target<O = 3, chip = "gfx90a">]
// ROCDL: llvm.func @ral_kernel_0(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, {{.*}}) attributes {gpu.kernel, rocdl.kernel}
// ROCDL-DAG: rocdl.workgroup.id.x
// ROCDL-DAG: rocdl.workitem.id.x
// ROCDL-DAG: llvm.intr.sqrt
// ROCDL-NOT: math.
// ROCDL-NOT: __ocml_
// ROCDL-NOT: llvm.call

// PTX text per architecture; the kernel modules are gone.
// PTX: module attributes {disc_ral.device_kernels = [{format = "ptx", name = "ral_kernel_0", variants = [{data = "{{.*}}.version 7.0{{.*}}.target sm_80{{.*}}.visible .entry ral_kernel_0{{.*}}", target = "sm_80"}, {data = "{{.*}}.version 7.8{{.*}}.target sm_90{{.*}}", target = "sm_90"}], workgroup = array<i64: 256, 1, 1>}]}
// PTX-NOT: gpu.module
// PTX-NOT: gpu.container_module

// One ELF (\7FELF, 64-bit \02, little-endian \01) per processor (the data cut short by sed).
// HSACO: module attributes {disc_ral.device_kernels = [{format = "hsaco", name = "ral_kernel_0", variants = [{data = "\7FELF\02\01...", target = "gfx90a"}, {data = "\7FELF\02\01...", target = "gfx1100"}], workgroup = array<i64: 256, 1, 1>}]}
// HSACO-NOT: gpu.module

func.func @act(%ctx: !disc_ral.context, %x: memref<?x?xf32, strided<[?, 1], offset: ?>>, %y: memref<?x?xf32>, %n: index, %m: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.parallel (%j) = (%c0) to (%m) step (%c1) {
      %v = memref.load %x[%i, %j] : memref<?x?xf32, strided<[?, 1], offset: ?>>
      %e = math.exp %v : f32
      %r = math.erf %e : f32
      %s = math.sin %r : f32
      %t = math.tanh %s : f32
      %p = math.powf %t, %v : f32
      %l = math.log %p : f32
      %q = math.sqrt %l : f32
      %f = math.fma %q, %v, %e : f32
      memref.store %f, %y[%i, %j] : memref<?x?xf32>
      scf.reduce
    }
    scf.reduce
  }
  return
}
