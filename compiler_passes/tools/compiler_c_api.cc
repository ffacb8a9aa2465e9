// libral_compiler.so's C API: parses the option string into a CompileRequest and runs
// compileModel on a large-stack thread, behind an exception barrier, capturing the diagnostics.
#include "compiler_passes/tools/compiler_c_api.h"

#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include "compiler_passes/tools/compile_driver.h"
#include "compiler_passes/tools/compile_options.h"
#include "compiler_passes/tools/memory_budget.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

namespace {

using ral::compiler::CompileRequest;

bool parseBool(llvm::StringRef value, bool* out) {
  if (value.empty() || value == "true" || value == "1") return *out = true, true;
  if (value == "false" || value == "0") return *out = false, true;
  return false;
}

// Applies one --name[=value] flag; false with `error` set for an unknown flag or a bad value.
bool applyFlag(llvm::StringRef flag, CompileRequest* r, std::string* error) {
  if (!flag.consume_front("--") && !flag.consume_front("-")) {
    *error = "option '" + flag.str() + "' does not start with --";
    return false;
  }
  auto [name, value] = flag.split('=');
  bool ok = true;
  // Decimal, within the field's range: "-O=4294967299" is an error, not -O3.
  auto integer = [&](auto* field) {
    return ral::compiler::parseIntegerOption((name.size() == 1 ? "-" : "--") + name.str(), value,
                                             field, error);
  };
  if (name == "device")
    r->device = value.str();
  else if (name == "gpu-arch")
    r->gpu_arch = value.str();
  else if (name == "by-name")
    ok = parseBool(value, &r->by_name);
  else if (name == "inline-f32-math")
    r->inline_f32_math = value.str();
  else if (name == "kernels")
    ok = parseBool(value, &r->kernels);
  else if (name == "library-conv")
    ok = parseBool(value, &r->library_conv);
  else if (name == "conv-blocks")
    ok = parseBool(value, &r->conv_blocks);
  else if (name == "conv-scales")
    ok = parseBool(value, &r->conv_scales);
  else if (name == "constant-min-bytes")
    return integer(&r->constant_min_bytes);
  else if (name == "entry")
    r->entry = value.str();
  else if (name == "name")
    r->module_name = value.str();
  else if (name == "emit")
    r->emit = value.str();
  else if (name == "input-format")
    r->input_format = value.str();
  else if (name == "O")
    return integer(&r->opt_level);
  else if (name.starts_with("O") && name.size() == 2)
    return ral::compiler::parseIntegerOption("-O", name.drop_front(), &r->opt_level, error);
  else if (name == "max-optimized-loop-depth")
    return integer(&r->max_optimized_loop_depth);
  else if (name == "max-optimized-function-size")
    return integer(&r->max_optimized_function_size);
  else if (name == "mcpu")
    r->mcpu = value.str();
  else if (name == "host-variants")
    r->host_variants = value.str();
  else if (name == "max-memory") {
    std::string size_error;
    if (!ral::compiler::parseByteSize(value.str(), &r->max_memory, &size_error)) {
      *error = "--max-memory: " + size_error;
      return false;
    }
  } else {
    *error = "unknown option '--" + name.str() + "'";
    return false;
  }
  if (!ok)
    *error = "bad value " + ral::compiler::quoted(value) + " for --" + name.str() +
             " (see ral-compile --help)";
  return ok;
}

char* copyOut(const std::string& text) {
  if (text.empty()) return nullptr;
  char* p = static_cast<char*>(std::malloc(text.size() + 1));
  if (p) std::memcpy(p, text.c_str(), text.size() + 1);
  return p;
}

}  // namespace

extern "C" int ral_compiler_compile(const char* input_path, const char* output_path,
                                    const char* options, char** diagnostics) {
  if (diagnostics) *diagnostics = nullptr;
  std::string text;
  int rc = ral::compiler::kCompileInternal;
  try {
    llvm::raw_string_ostream os(text);
    CompileRequest request;
    if (!input_path || !*input_path) {
      os << "ral-compile: error: no input path\n";
      rc = ral::compiler::kCompileUsage;
    } else {
      request.input_path = input_path;
      if (output_path) request.output_path = output_path;
      rc = ral::compiler::kCompileOk;
      llvm::SmallVector<llvm::StringRef> flags;
      llvm::StringRef(options ? options : "").split(flags, ' ', -1, /*KeepEmpty=*/false);
      for (llvm::StringRef flag : flags) {
        std::string error;
        if (!applyFlag(flag, &request, &error)) {
          os << "ral-compile: error: " << error << "\n";
          rc = ral::compiler::kCompileUsage;
          break;
        }
      }
    }
    if (rc == ral::compiler::kCompileOk) {
      std::string thread_error;
      const bool started = ral::compiler::runOnCompileThread(
          [&] {
            try {
              rc = ral::compiler::compileModel(request, os);
            } catch (const std::bad_alloc&) {
              os << "ral-compile: error: out of memory\n";
              rc = ral::compiler::kCompileFailed;
            } catch (const std::exception& e) {
              os << "ral-compile: error: internal error (please report): " << e.what() << "\n";
              rc = ral::compiler::kCompileInternal;
            } catch (...) {
              os << "ral-compile: error: internal error (please report): unknown exception\n";
              rc = ral::compiler::kCompileInternal;
            }
          },
          &thread_error);
      if (!started) {
        os << "ral-compile: error: " << thread_error << "\n";
        rc = ral::compiler::kCompileFailed;
      }
    }
    os.flush();
  } catch (...) {
    rc = ral::compiler::kCompileInternal;
    text += "ral-compile: error: internal error (please report)\n";
  }
  if (diagnostics) *diagnostics = copyOut(text);
  return rc;
}

extern "C" void ral_compiler_free(char* p) { std::free(p); }

extern "C" const char* ral_compiler_version(void) { return "RAL " RAL_VERSION ", MLIR 19"; }
