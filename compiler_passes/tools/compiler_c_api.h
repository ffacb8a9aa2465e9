/* libral_compiler.so: ral-compile in process, behind a C ABI (ctypes, other languages).
 *
 * Thread-safety: every function may be called from any thread, concurrently; each compile has its
 * own MLIR and LLVM contexts. Ownership: the caller frees *diagnostics with ral_compiler_free. */
#ifndef RAL_COMPILER_PASSES_TOOLS_COMPILER_C_API_H_
#define RAL_COMPILER_PASSES_TOOLS_COMPILER_C_API_H_

#ifdef __cplusplus
extern "C" {
#endif

/* Compiles like `ral-compile <input_path> -o <output_path> <options>`. `options` is a
 * space-separated list of ral-compile's flags, each --name=value or --name (a boolean), NULL for
 * none: "--device=cpu --name=mlp --emit=import --max-memory=2G". Integers are decimal and must fit
 * the option's range. Returns ral-compile's exit code (0 compiled, 1 failed, out of memory or over
 * --max-memory, 2 bad usage, an unreadable input or an output that is not a regular file, 4
 * internal error, LLVM's fatal errors included, 5 an ONNX operator, attribute or type the importer
 * does not handle). *diagnostics, when diagnostics is not NULL, receives every message as one
 * malloc'ed NUL-terminated text (NULL when there is none).
 *
 * No input or option ends the calling process: LLVM's fatal errors and out-of-memory reports on
 * the compile's thread become the error results above (that compile's IR is then leaked, not
 * freed), and the process can compile again. --max-memory bounds the compile by the growth of
 * the whole process's resident memory, checked between passes (see ral-compile --help); it does
 * not limit the address space, as ral-compile does. */
int ral_compiler_compile(const char* input_path, const char* output_path, const char* options,
                         char** diagnostics);

/* Frees what ral_compiler_compile returned in *diagnostics; NULL is fine. */
void ral_compiler_free(char* p);

/* The compiler's version, "RAL <x.y.z>, MLIR <n>"; static storage. */
const char* ral_compiler_version(void);

#ifdef __cplusplus
}
#endif

#endif /* RAL_COMPILER_PASSES_TOOLS_COMPILER_C_API_H_ */
