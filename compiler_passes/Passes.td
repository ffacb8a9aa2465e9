// The RAL passes (DESIGN.md §7). mlir-tblgen generates their base classes, options, create
// functions and registration into passes.h.inc; each pass's logic is in its own .cc file.
#ifndef RAL_COMPILER_PASSES_PASSES_TD_
#define RAL_COMPILER_PASSES_PASSES_TD_

include "mlir/Pass/PassBase.td"

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
    input, instead of being read with the wrong layout.
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
    would abort the host process).
  }];
  let options = [
    Option<"device", "device", "std::string", /*default=*/"\"cpu\"",
           "Device of the library calls and allocations">,
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
    inline, computed in f64 and rounded once, so loops over them vectorize instead of calling
    libm per element.
  }];
  let options = [
    Option<"inlineF32", "inline-f32", "std::string", /*default=*/"\"exp,expm1,log,log1p,tanh,erf\"",
           "f32 ops to expand inline (comma-separated: exp, expm1, log, log1p, tanh, erf; empty: none)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect", "::mlir::math::MathDialect",
  ];
}

def DiscRalToLLVMPass : Pass<"disc-ral-to-llvm", "::mlir::ModuleOp"> {
  let summary = "Lower the module to the LLVM dialect and RAL ops to calls through the ABI";
  let description = [{
    Every disc_ral op becomes a call of its RAL function through the module's `ral_imports`
    table (or `ral_api_call(ctx, name, args)` by name), followed by a test of the execution
    context's error flag; the rest of the module goes to the LLVM dialect and the entry is
    exported as `void ral_entry(void* ctx)`.
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
