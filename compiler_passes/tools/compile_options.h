// The checks of a CompileRequest before anything is compiled, shared by ral-compile and
// libral_compiler.so: every option value reaches MLIR or LLVM only once it is one they accept
// (LLVM aborts the process on some it does not, e.g. an --mcpu that cannot run 64-bit code).
#ifndef RAL_COMPILER_PASSES_TOOLS_COMPILE_OPTIONS_H_
#define RAL_COMPILER_PASSES_TOOLS_COMPILE_OPTIONS_H_

#include <limits>
#include <string>
#include <vector>

#include "compiler_passes/tools/compile_driver.h"
#include "llvm/ADT/StringRef.h"

namespace ral {
namespace compiler {

// Empty when every option of `r` is acceptable; otherwise the first error, naming the option, the
// value given and what is accepted (a usage error: kCompileUsage).
std::string checkRequest(const CompileRequest& r);

// The host variant targets a request compiles (CompileRequest::host_variants resolved; the
// request checked first): empty for none.
std::vector<std::string> hostVariantTargets(const CompileRequest& r);

// The module name recorded without --name: the input file's stem, each character --name would
// refuse replaced by '_' ("module" for none).
std::string defaultModuleName(llvm::StringRef input_path);

// `text` in single quotes, each byte outside printable ASCII written as \xNN: option values in
// messages stay one readable line.
std::string quoted(llvm::StringRef text);
// The same without the quotes.
std::string escaped(llvm::StringRef text);

// The value of integer option `option` ("-O", "--constant-min-bytes"): decimal digits (a '-' for
// signed types) within T's range, so that nothing wraps ("-O=4294967299" was -O3). False with
// `error` naming the option, the value and the range.
template <typename T>
bool parseIntegerOption(llvm::StringRef option, llvm::StringRef text, T* out, std::string* error) {
  T value{};
  if (!text.empty() && text.front() != '+' && !text.getAsInteger(10, value)) {
    *out = value;
    return true;
  }
  *error = option.str() + "=" + quoted(text) + " is not a decimal integer from " +
           std::to_string(std::numeric_limits<T>::min()) + " to " +
           std::to_string(std::numeric_limits<T>::max());
  return false;
}

}  // namespace compiler
}  // namespace ral

#endif  // RAL_COMPILER_PASSES_TOOLS_COMPILE_OPTIONS_H_
