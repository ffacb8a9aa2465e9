// The RAL passes. mlir-tblgen generates their base classes, options, create
// functions and registration into passes.h.inc; each pass's logic is in its own .cc file.
#ifndef RAL_COMPILER_PASSES_PASSES_TD_
#define RAL_COMPILER_PASSES_PASSES_TD_

include "mlir/Pass/PassBase.td"

def CheckLimitsPass : Pass<"disc-ral-check-limits", "::mlir::ModuleOp"> {
  let summary = "Refuse IR nested too deeply or with shapes too large to allocate";
  let description = [{
    The first pass of the pipeline (limits.h has the limits and why): regions nest at most 256
    levels deep, and every static shape in the module (op results, block arguments, function
    signatures, globals, constants; tensors, memrefs and vectors) holds at most 2^48 elements and
    2^56 bytes. A shape beyond that is an error naming the op and the type: its byte size would
    wrap in the generated code, and the module would allocate a buffer far smaller than it uses.
    A `memref.alloca` takes at most 64 KiB (a stack overflow kills the host process), and the
    module's constant values at most 2 GiB - 64 MiB in all (a module file holds 2 GiB).
  }];
}

def BufferizePass : Pass<"disc-ral-bufferize", "::mlir::ModuleOp"> {
  let summary = "Bring a tensor-level program to buffers";
  let description = [{
    For a module whose functions work on tensors (linalg on tensors, `tensor`, `arith`/`math`,
    TOSA): TOSA is lowered to linalg, then one-shot bufferization turns every function,
    including its boundary, into memrefs with identity layouts, and ownership-based buffer
    deallocation frees every temporary. A buffer returned by the entry is its own allocation,
    never a copy, so after `disc-ral-lower-to-library-calls` it comes from `ral_alloc` and the
    host takes it as is. A module with no tensors is left untouched.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect",
  ];
}

def InjectExecutionContextPass
    : Pass<"disc-ral-inject-execution-context", "::mlir::ModuleOp"> {
  let summary = "Make the entry take the RAL execution context and bind its inputs and outputs";
  let description = [{
    `func @main(args) -> results` becomes `func @main(%ctx: !disc_ral.context)`: each argument
    is received with `disc_ral.recv_input`, each returned value is sent with
    `disc_ral.send_output`, and every function reachable from the entry takes the context as
    its first argument, so later passes always find one in the enclosing function. An input
    declared with a static layout (the identity: row-major) is received as any strided view and
    checked: a view with other strides or offset fails the execution with an error naming the
    input, instead of being read with the wrong layout. Recursion and indirect calls in what the
    entry reaches are errors: a call depth set by the input would overflow the host's stack.
  }];
  let options = [
    Option<"entryName", "entry", "std::string", /*default=*/"\"main\"",
           "Name of the entry function">,
  ];
  let dependentDialects = [
    "::mlir::disc_ral::DiscRalDialect", "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
  ];
}

def LowerToLibraryCallsPass : Pass<"disc-ral-lower-to-library-calls", "::mlir::ModuleOp"> {
  let summary = "Ops with a RAL kernel become disc_ral.dispatch; buffers come from RAL";
  let description = [{
    `linalg.matmul` / `linalg.batch_matmul` on f16, bf16, f32 or f64 memrefs become
    `ral_gemm` / `ral_batch_gemm` dispatches; a call of a function marked
    `disc_ral.custom_call = "target"` becomes a dispatch of `target`; `memref.alloc` /
    `memref.dealloc` become `disc_ral.alloc` / `disc_ral.dealloc`, so buffers belong to the host
    context (an output is handed over without a copy). `memref.copy` between non-contiguous
    buffers becomes a `linalg.copy`, compiled to loops: MLIR's own lowering would call a runtime
    library a module cannot link against. `cf.assert` becomes `disc_ral.signal_error` under an
    `scf.if`: a failed assertion fails the execution with its message (MLIR's own lowering
    would abort the host process). A `memref.alloca` with dynamic sizes is an error: a stack
    allocation sized at run time could overflow the host's stack. On the cpu, a pointwise
    expansion, depthwise convolution and pointwise projection (`disc_ral.conv`, two or three of
    them) whose intermediate buffers nothing else reads become one `ral_conv_block` dispatch:
    the intermediates never reach memory whole; and a `disc_ral.conv` whose input is a product
    of data and one value per image and channel (a `linalg.generic` multiply, the
    squeeze-and-excitation of EfficientNet) that nothing else reads becomes one
    `ral_conv_scaled` dispatch of the data and the scale: the product is never stored.
  }];
  let options = [
    Option<"device", "device", "std::string", /*default=*/"\"cpu\"",
           "Device of the library calls and allocations">,
    Option<"fuseConvBlocks", "fuse-conv-blocks", "bool", /*default=*/"true",
           "On the cpu, run depthwise-separable chains of disc_ral.conv as one ral_conv_block">,
    Option<"fuseConvScales", "fuse-conv-scales", "bool", /*default=*/"true",
           "On the cpu, run a disc_ral.conv whose input is a per-image, per-channel broadcast "
           "multiply used nowhere else as one ral_conv_scaled">,
  ];
  let dependentDialects = [
    "::mlir::disc_ral::DiscRalDialect", "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
  ];
}

def LowerMathPass : Pass<"disc-ral-lower-math", "::mlir::ModuleOp"> {
  let summary = "Math ops on every float type, with libm's accuracy where LLVM has no lowering";
  let description = [{
    f16 and bf16 math ops compute in f32 and round once (`math-legalize-to-f32`). On f32 and
    f64, the ops LLVM has no instruction or intrinsic for (tanh, erf, atan, atan2, tan, sinh,
    cosh, asin, acos, asinh, acosh, atanh, cbrt) and those MLIR's LLVM lowering gets wrong for
    small arguments (log1p as log(1 + x), expm1 as exp(x) - 1) become calls of the C library's
    functions, which a module's host library may import. The rest (exp, log, sqrt, sin, cos,
    pow, abs, ceil, floor, ...) go to LLVM's intrinsics in disc-ral-to-llvm. The f32 ops named
    in `inline-f32` (any of exp, expm1, log, log1p, tanh, erf; all by default) are first expanded
    inline, computed in f32 within about 1 ulp (`<op>.f64` in the list: computed in f64 and
    rounded once), so loops over them vectorize instead of calling libm per element. With
    `libm-calls=false` (GPU kernels) the ops without an intrinsic stay math ops, for
    disc-ral-lower-gpu-kernels to approximate.
  }];
  let options = [
    Option<"inlineF32", "inline-f32", "std::string", /*default=*/"\"exp,expm1,log,log1p,tanh,erf\"",
           "f32 ops to expand inline (comma-separated: exp, expm1, log, log1p, tanh, erf, or "
           "<op>.f64 for the f64-evaluated form; empty: none)">,
    Option<"libmCalls", "libm-calls", "bool", /*default=*/"true",
           "Lower the ops without an LLVM intrinsic to C library calls (false for GPU kernels, "
           "which approximate them in disc-ral-lower-gpu-kernels instead)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect", "::mlir::math::MathDialect",
  ];
}

def ModuleConstantsPass : Pass<"disc-ral-module-constants", "::mlir::ModuleOp"> {
  let summary = "Large constant globals move into the module file's constants section";
  let description = [{
    A `memref.get_global` of a constant `memref.global` with a dense, non-splat initializer of
    at least `min-bytes` bytes becomes `disc_ral.constant %ctx, i`: the data goes into the
    module attribute `disc_ral.constants` (ral-compile writes it to the `.ralm` constants
    section, 64-byte aligned) and the global is erased once unused. At run time `ral_constant`
    returns the bytes in place from the mapped file on the CPU, and a copy uploaded once per
    context on a device. Smaller or splat constants stay in the host library. Element types with
    a RAL constant function: i1, i8, ui8, i16, i32, i64, f16, bf16, f32, f64.
  }];
  let options = [
    Option<"minBytes", "min-bytes", "int64_t", /*default=*/"256",
           "Smallest constant (in bytes) moved to the constants section; 0 moves every "
           "constant global, splats too (device kernels cannot read host-library data)">,
  ];
  let dependentDialects = ["::mlir::disc_ral::DiscRalDialect", "::mlir::memref::MemRefDialect"];
}

def FuseLoopsPass : Pass<"disc-ral-fuse-loops", "::mlir::ModuleOp"> {
  let summary = "Linalg ops to parallel loops, fused where their iteration spaces agree";
  let description = [{
    Every linalg op on buffers becomes an `scf.parallel` nest (reduction dimensions as
    `scf.for`). Each multi-dimensional `scf.parallel` is split into an outer loop over its first
    dimension holding a loop over the others, and consecutive outer loops with the same bounds
    are fused when that is provably safe: every buffer one of them writes and the other touches
    is a fresh allocation (or a reshape of one that keeps its first dimension) indexed in its
    first dimension by the outer induction variable in both, so iteration i of the fused loop
    reads exactly what iteration i wrote (a softmax becomes one loop over rows). Side-effect-free
    ops between two loops move above the first, and so do shape checks (`scf.if` holding only
    `disc_ral.signal_error`) when the first loop cannot fail itself: a failing check then skips
    a loop whose results nobody reads, and the first error is still the one reported. A size
    taken with `memref.dim` from an allocation or a reshape of one becomes the size it was made
    with, so loops over such views get the same bounds.
    Finally a reduction's accumulator (a load and store of one fresh buffer element around an
    `scf.for` body) is kept in a register (`iter_args`) and its combining op marked
    `reassoc`, so LLVM vectorizes the reduction; results then differ from a sequential sum only
    by rounding. On the cpu the accumulator may also be an element of a view of such a buffer;
    for a device it then stays in memory, the form in which disc-ral-outline-kernels splits a
    long reduction over the grid.
  }];
  let options = [
    Option<"device", "device", "std::string", /*default=*/"\"cpu\"",
           "Device the loops will run on: cpu, or a GPU (vulkan, cuda, hsa)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
  ];
}

def OutlineKernelsPass : Pass<"disc-ral-outline-kernels", "::mlir::ModuleOp"> {
  let summary = "Outermost parallel loops become kernels launched through RAL";
  let description = [{
    Each outermost `scf.parallel` whose body only computes (no RAL op, no call, no allocation)
    becomes a kernel: a function `@ral_kernel_<n>(%workgroup: !llvm.ptr, %args: !llvm.ptr)`
    marked `disc_ral.kernel`, of the `ral_host_kernel` form (drivers/cpu/host_kernel.h). It
    reads its captured values from `args` and runs the iterations of its workgroup: workgroup
    g covers `block_x` consecutive iterations of the first dimension starting at g * block_x.
    The host code computes the trip count and an estimate of the work per iteration, chooses
    `block_x` so each workgroup has about `grain` units of work, and launches
    `ceil(trips / block_x)` workgroups with `disc_ral.launch`. Where one iteration is more
    than `grain` and its body is parallel loops that do not depend on each other (plus loads
    and arithmetic), each iteration is split in `grid_y` parts as well: part p runs slice p
    of each inner loop's first dimension, so a loop over a batch of one still spreads over
    the thread pool. Constants used inside are cloned into the kernel, so strides and sizes
    known at compile time stay known.

    With `device=vulkan`, each such loop becomes a SPIR-V kernel instead (spirv_kernels.h): a
    `spirv.module @ral_kernel_<n>` marked `disc_ral.kernel`, one invocation per iteration
    (grid-stride), buffers as bindings, scalars and dynamic layouts as push constants. A loop
    that cannot run on the device is an error: a Vulkan module runs every loop over device
    memory on the device. The host code's single-element loads and stores left over (a
    condition, a trip count, a loop counter) become `ral_read_element` (the element copied
    back once the work before it is done) and `ral_write_element` (queued like a kernel)
    dispatches of a rank-0 view at the element; any other host access of memory is an error
    naming the operation.

    With `device=cuda` or `device=hsa`, each such loop becomes a `gpu.module @ral_kernel_<n>`
    (gpu_kernels.h) targeting one `#nvvm.target` / `#rocdl.target` per architecture of
    `gpu-arch`, holding one kernel: grid-stride over the iterations, buffers as pointer
    parameters, scalars and dynamic layouts as value parameters. The same errors apply.

    Before a loop becomes a device kernel (vulkan, cuda, hsa), its parallel dimensions are
    gathered into the one the grid strides over (grid_parallelism.h): a body of several
    parallel loops becomes one kernel each, nested parallel loops merge, a parallel loop under
    scf.for loops moves out of them where its writes are element-wise, and the dimensions
    collapse into one. Without that a loop over a batch of one ran on one GPU thread.
  }];
  let options = [
    Option<"grain", "grain", "int64_t", /*default=*/"16384",
           "Work per workgroup (innermost iterations) the launch aims at (cpu)">,
    Option<"device", "device", "std::string", /*default=*/"\"cpu\"",
           "Device the kernels are for: cpu (host functions), vulkan (SPIR-V), cuda or hsa "
           "(gpu.module kernels)">,
    Option<"gpuArchs", "gpu-arch", "std::string", /*default=*/"\"\"",
           "cuda, hsa: comma-separated architectures (sm_80, gfx90a, ...; empty: the default "
           "list) the gpu.modules target">,
  ];
  let dependentDialects = [
    "::mlir::disc_ral::DiscRalDialect", "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect", "::mlir::LLVM::LLVMDialect", "::mlir::scf::SCFDialect",
    "::mlir::gpu::GPUDialect", "::mlir::memref::MemRefDialect", "::mlir::spirv::SPIRVDialect",
  ];
}

def SerializeKernelsPass : Pass<"disc-ral-serialize-kernels", "::mlir::ModuleOp"> {
  let summary = "SPIR-V kernel modules become binaries in a module attribute";
  let description = [{
    Each `spirv.module` marked `disc_ral.kernel` is serialized and removed; the module attribute
    `disc_ral.device_kernels` lists `{name, format = "spirv", data, workgroup}` per kernel, in
    executable order, for ral-compile to store in the `.ralm`.
  }];
}

def LowerGpuKernelsPass : Pass<"disc-ral-lower-gpu-kernels", "::mlir::ModuleOp"> {
  let summary = "Kernel gpu.modules to the LLVM dialect with NVVM or ROCDL ops, math inlined";
  let description = [{
    In each `gpu.module` marked `disc_ral.kernel`: math ops are expanded into arithmetic with
    the approximations the other devices use (disc-ral-lower-math's f32 exp, expm1, log, log1p,
    tanh and erf; MLIR's polynomial approximations for sin, cos, log2, atan, asin, acos, cbrt;
    pow, exp2, log10, tan and the hyperbolic functions through those), so kernels need no device
    library (no libdevice `__nv_*`, no
    ROCm `__ocml_*` call) and compute the same on every GPU. What remains (sqrt, fma, abs,
    floor, ...) becomes LLVM intrinsics the NVPTX and AMDGPU back ends select directly; a math
    op with neither (an f64 transcendental) is an error naming it. Then scf goes to cf and the
    module to the LLVM dialect, gpu ops to NVVM (for #nvvm.target modules) or ROCDL
    (#rocdl.target) ops.
  }];
  let dependentDialects = [
    "::mlir::LLVM::LLVMDialect", "::mlir::NVVM::NVVMDialect", "::mlir::ROCDL::ROCDLDialect",
    "::mlir::cf::ControlFlowDialect",
  ];
}

def SerializeGpuKernelsPass : Pass<"disc-ral-serialize-gpu-kernels", "::mlir::ModuleOp"> {
  let summary = "Lowered kernel gpu.modules become PTX or HSACO binaries, one per architecture";
  let description = [{
    Each lowered `gpu.module` marked `disc_ral.kernel` is compiled in process for every target
    it lists and removed; the module attribute `disc_ral.device_kernels` gets
    one dictionary per kernel (name, format, variants: one target and data per architecture,
    workgroup), in executable order.
    NVVM targets go through `gpu-module-to-binary` (format isa): PTX text. ROCDL targets are
    translated to LLVM IR, compiled by LLVM's AMDGPU back end to an object (code object v5,
    with its AMDHSA metadata note) and linked into a shared object (the HSACO) by ld.lld.
  }];
}

def PlaceInputsOutputsPass : Pass<"disc-ral-place-inputs-outputs", "::mlir::ModuleOp"> {
  let summary = "Receive each input right before its first use, send each output once final";
  let description = [{
    Partial execution: in the entry's first block, each `disc_ral.recv_input` (with the pure
    ops and layout checks that only need it) moves down to right before the first op that uses
    the input, and each `disc_ral.send_output` moves up to right after the last op that may write
    the output's buffer, so a host can run part of the module before all its inputs are ready
    and hand out an output before the others are computed. An output is moved only when its
    buffer is allocated in that block (`memref.alloc`, `disc_ral.alloc`), where every access
    goes through SSA uses of the allocation and of values derived from them; any other output
    (a view of an input, a constant, a call's result) is sent where it was. Runs late, after
    fusion and outlining, so it never keeps loops apart.
  }];
  let dependentDialects = ["::mlir::disc_ral::DiscRalDialect"];
}

def ExpandArithPass : Pass<"disc-ral-expand-arith", "::mlir::ModuleOp"> {
  let summary = "Arith ops LLVM cannot lower become basic arithmetic";
  let description = [{
    bf16 conversions become integer ops (LLVM would call compiler-rt, which a module cannot
    import) and signed/unsigned ceil/floor divisions become plain divisions. Unlike upstream's
    arith-expand, float min/max stay ops: LLVM has intrinsics for them and vectorizes their
    reductions.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def DiscRalToLLVMPass : Pass<"disc-ral-to-llvm", "::mlir::ModuleOp"> {
  let summary = "Lower the module to the LLVM dialect and RAL ops to calls through the ABI";
  let description = [{
    Every disc_ral op becomes a call of its RAL function through the module's `ral_imports`
    table (or `ral_api_call(ctx, name, args)` by name), followed by a test of the execution
    context's error flag; the rest of the module goes to the LLVM dialect and the entry is
    exported as `void ral_entry(void* ctx)`. A `disc_ral.alloc` with dynamic sizes checks them
    first: a negative size, or more than 2^48 elements or 2^56 bytes, fails the execution with
    an error naming the allocation instead of allocating a wrapped byte size.
  }];
  let options = [
    Option<"byName", "by-name", "bool", /*default=*/"false",
           "Call RAL functions through ral_api_call(ctx, name, args) instead of the "
           "ral_imports table">,
    Option<"entrySymbol", "entry-symbol", "std::string", /*default=*/"\"ral_entry\"",
           "Exported symbol of the entry">,
    Option<"device", "device", "std::string", /*default=*/"\"cpu\"",
           "Device of the host-context functions recv_input, send_output, alloc and dealloc">,
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif  // RAL_COMPILER_PASSES_PASSES_TD_
