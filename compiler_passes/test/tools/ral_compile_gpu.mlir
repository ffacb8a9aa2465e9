// ral-compile --device=cuda|hsa: one executable per kernel, one variant per --gpu-arch
// architecture (PTX or HSACO), listed by ral-inspect and extracted by ral-inspect --extract; bad
// architecture lists are usage errors (exit 2) naming the accepted ones.
// RUN: rm -rf %t && mkdir -p %t
// RUN: ral-compile %S/../../../examples/softmax.mlir --device=cuda --gpu-arch=sm_80,sm_90 -o %t/s.cuda.ralm
// RUN: ral-inspect %t/s.cuda.ralm | FileCheck %s --check-prefix=CUDA
// RUN: ral-inspect %t/s.cuda.ralm --extract ral_kernel_0 --target sm_90 -o %t/k.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t/k.ptx
// RUN: not ral-inspect %t/s.cuda.ralm --extract ral_kernel_0 --target sm_70 -o %t/none.ptx 2>&1 | FileCheck %s --check-prefix=NOTARGET
// RUN: ral-compile %S/../../../examples/softmax.mlir --device=hsa --gpu-arch=gfx90a -o %t/s.hsa.ralm
// RUN: ral-inspect %t/s.hsa.ralm | FileCheck %s --check-prefix=HSA
// RUN: ral-inspect %t/s.hsa.ralm --extract ral_kernel_0 --target gfx90a -o %t/k.hsaco
// RUN: llvm-readelf-19 --file-header --notes %t/k.hsaco | FileCheck %s --check-prefix=ELF
// The PTX does not depend on a CUDA toolkit being installed (no libdevice is used).
// RUN: env CUDA_ROOT=%t/no-toolkit ral-compile %S/../../../examples/softmax.mlir --device=cuda --gpu-arch=sm_80,sm_90 -o %t/s.notoolkit.ralm 2>&1 | FileCheck %s --allow-empty --check-prefix=NOTOOLKIT
// RUN: cmp %t/s.cuda.ralm %t/s.notoolkit.ralm
// RUN: not ral-compile %S/../../../examples/softmax.mlir --device=cuda --gpu-arch=sm_80,sm_81 -o %t/bad.ralm 2>&1 | FileCheck %s --check-prefix=BADARCH
// RUN: not ral-compile %S/../../../examples/softmax.mlir --device=hsa --gpu-arch=sm_80 -o %t/bad.ralm 2>&1 | FileCheck %s --check-prefix=WRONGKIND
// RUN: not ral-compile %S/../../../examples/softmax.mlir --gpu-arch=sm_80 -o %t/bad.ralm 2>&1 | FileCheck %s --check-prefix=CPUARCH
// RUN: not test -e %t/bad.ralm

// CUDA: inputs (1):
// CUDA-NEXT: 0: ?x?xf32@cuda
// CUDA: executables (1):
// CUDA-NEXT: ral_kernel_0: ptx, {{[0-9]+}} bytes, entries: ral_kernel_0 (256x1x1)
// CUDA-NEXT: target sm_80: {{[0-9]+}} bytes
// CUDA-NEXT: target sm_90: {{[0-9]+}} bytes
// CUDA-NEXT: constants (0):

// PTX: .version 7.8
// PTX: .target sm_90
// PTX: .visible .entry ral_kernel_0(
// PTX-NOT: __nv_
// PTX-NOT: call

// NOTOOLKIT-NOT: error

// NOTARGET: ral-inspect: error: executable 'ral_kernel_0' has no variant for target 'sm_70' (its targets: sm_80, sm_90)

// HSA: executables (1):
// HSA-NEXT: ral_kernel_0: hsaco, {{[0-9]+}} bytes, entries: ral_kernel_0 (256x1x1)
// HSA-NEXT: target gfx90a: {{[0-9]+}} bytes

// ELF: OS/ABI: AMDGPU - HSA
// ELF: Type: DYN (Shared object file)
// ELF: Machine: EM_AMDGPU
// ELF: Flags: 0x{{[0-9A-F]*}}3F, gfx90a
// ELF: NT_AMDGPU_METADATA
// ELF: .args:
// ELF: .value_kind: global_buffer
// ELF: .kernarg_segment_size:
// ELF: .name: ral_kernel_0
// ELF: .symbol: ral_kernel_0.kd
// ELF: amdhsa.target: amdgcn-amd-amdhsa--gfx90a

// BADARCH: ral-compile: error: --gpu-arch: unknown cuda architecture 'sm_81'; the accepted ones are {{.*}}sm_80, sm_86{{.*}}
// WRONGKIND: ral-compile: error: --gpu-arch: unknown hsa architecture 'sm_80'; the accepted ones are {{.*}}gfx90a
// CPUARCH: ral-compile: error: --gpu-arch goes with --device=cuda or --device=hsa
