// ral-pack: packs a hand-written (or externally compiled) module shared object into a .ralm file
// with the builder API. The import list is read from the library's ral_imports table.
//
//   ral-pack --host-library=add.so --name=add --input=a:?xf32 --input=b:?xf32 --output=?xf32
//            [--constant=scale=4xf32=1,2,3,4] [--executable=kernels:spirv:@k.spv:main=64x1x1]
//            -o add.ralm
#include <dlfcn.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "plugins/standalone/host_tensor.h"
#include "plugins/standalone/npy.h"
#include "plugins/standalone/tool_main.h"
#include "ral/file_reader.h"
#include "ral/file_writer.h"
#include "ral/host_library.h"
#include "ral/module_builder.h"

namespace {

using ral::Status;
using ral::StatusOr;

// Everything before writing checks what the user gave (exit 2); writing can fail on its own (1).
int fail(const Status& s, int code = ral::cli::kExitUsage) {
  return ral::cli::toolError("ral-pack", code, s.toString());
}

// Reads ral_imports from the library and checks that `entry` is a function it defines (as the
// loader will). Loading runs the library's constructors: only pack code you trust.
StatusOr<std::vector<std::string>> importsOf(const std::string& path, const std::string& entry) {
  void* h = dlopen(path.c_str(), RTLD_LAZY | RTLD_LOCAL);
  if (h == nullptr) return ral::failedPrecondition("cannot open '", path, "': ", dlerror());
  auto entry_fn = ral::internal::findSymbol(h, entry.c_str(), ral::internal::SymbolKind::kFunction,
                                            "the entry function (--entry)");
  if (!entry_fn.ok()) {
    dlclose(h);
    return entry_fn.status().withContext(ral::internal::strCat("'", path, "'"));
  }
  std::vector<std::string> names;
  auto* count = static_cast<const uint32_t*>(dlsym(h, "ral_import_count"));
  auto* table = static_cast<const ral_import*>(dlsym(h, "ral_imports"));
  const uint32_t n = count ? *count : 0;
  if (n > 0 && table == nullptr) {
    dlclose(h);
    return ral::invalidArgument("'", path, "' has ral_import_count = ", n, " but no ral_imports");
  }
  for (uint32_t i = 0; i < n; ++i) names.push_back(table[i].name ? table[i].name : "");
  dlclose(h);
  return names;
}

StatusOr<ral::ExecutableFormat> formatFromName(const std::string& name) {
  for (int f = 0; f <= static_cast<int>(ral::ExecutableFormat::kHsaco); ++f)
    if (ral::executableFormatName(static_cast<ral::ExecutableFormat>(f)) == name)
      return static_cast<ral::ExecutableFormat>(f);
  return ral::invalidArgument("unknown executable format '", name,
                              "' (host, ptx, cubin, fatbin, spirv, hsaco)");
}

// NAME:FORMAT:@FILE[:ENTRY[=XxYxZ],...]
StatusOr<ral::ExecutableDef> parseExecutable(const std::string& text) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t c; (c = text.find(':', start)) != std::string::npos; start = c + 1)
    parts.push_back(text.substr(start, c - start));
  parts.push_back(text.substr(start));
  if (parts.size() < 3 || parts[2].empty() || parts[2][0] != '@')
    return ral::invalidArgument("bad --executable '", text,
                                "': expected NAME:FORMAT:@FILE[:ENTRY=XxYxZ,...]");
  ral::ExecutableDef e;
  e.name = parts[0];
  RAL_ASSIGN_OR_RETURN(e.format, formatFromName(parts[1]));
  RAL_ASSIGN_OR_RETURN(e.data, ral::readRegularFile(parts[2].substr(1)));
  if (parts.size() > 3) {
    std::string list = parts[3];
    for (size_t s = 0, c;; s = c + 1) {
      c = list.find(',', s);
      std::string item = list.substr(s, c == std::string::npos ? c : c - s);
      ral::EntryPoint ep;
      const size_t eq = item.find('=');
      ep.name = item.substr(0, eq);
      if (eq != std::string::npos) {
        unsigned x = 0, y = 0, z = 0;
        char tail;
        if (std::sscanf(item.c_str() + eq + 1, "%ux%ux%u%c", &x, &y, &z, &tail) != 3)
          return ral::invalidArgument("bad workgroup size in '", item, "' (use XxYxZ)");
        ep.workgroup_size = ral::Dim3{x, y, z};
      }
      e.entries.push_back(std::move(ep));
      if (c == std::string::npos) break;
    }
  }
  return e;
}

int runMain(int argc, char** argv) {
  CLI::App app{"Packs a module shared object into a RAL module file (.ralm)", "ral-pack"};
  std::string library, name, entry = "ral_entry", out;
  std::vector<std::string> inputs, outputs, constants, executables;
  uint32_t abi = RAL_ABI_VERSION;
  app.add_option("--host-library", library, "the module's shared object (ral/abi.h)")->required();
  app.add_option("--name", name, "module name")->required();
  app.add_option("--entry", entry, "entry symbol (default ral_entry)");
  app.add_option("--input", inputs, "input signature, e.g. a:?x3xf32 (repeat, in order)")
      ->allow_extra_args(false);
  app.add_option("--output", outputs, "output signature (repeat, in order)")
      ->allow_extra_args(false);
  app.add_option("--constant", constants, "NAME=TYPE=VALUES or NAME=@file.npy")
      ->allow_extra_args(false);
  app.add_option("--executable", executables, "NAME:FORMAT:@FILE[:ENTRY=XxYxZ,...]")
      ->allow_extra_args(false);
  app.add_option("--abi-version", abi, "override the ABI version (to test loaders)");
  app.add_option("-o,--out", out, "module file to write")->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "ral-pack: error: %s (see --help)\n", e.what());
    return 2;
  }

  // Before any input is read: a device, FIFO, directory or another user's file is not an output.
  Status writable = ral::checkOutputFile(out);
  if (!writable.ok()) return fail(writable);

  ral::ModuleBuilder b(name);
  b.setEntry(entry).setAbiVersion(abi);
  for (const auto& s : inputs) {
    auto sig = ral::parseTensorSignature(s);
    if (!sig.ok()) return fail(sig.status());
    b.addInput(*sig);
  }
  for (const auto& s : outputs) {
    auto sig = ral::parseTensorSignature(s);
    if (!sig.ok()) return fail(sig.status());
    b.addOutput(*sig);
  }
  auto bytes = ral::readRegularFile(library);
  if (!bytes.ok()) return fail(bytes.status());
  b.setHostLibrary(std::move(*bytes));
  auto imports = importsOf(library, entry);
  if (!imports.ok()) return fail(imports.status());
  for (auto& i : *imports) b.addImport(i);
  for (const auto& c : constants) {
    const size_t eq = c.find('=');
    if (eq == std::string::npos)
      return fail(ral::invalidArgument("bad --constant '", c, "': expected NAME=TYPE=VALUES"));
    auto t = ral::cli::tensorFromArgument(c.substr(eq + 1));
    if (!t.ok()) return fail(t.status());
    if (!t->strides.empty()) return fail(ral::invalidArgument("constant '", c, "' is not dense"));
    b.addConstant(ral::ConstantDef{c.substr(0, eq), t->dtype, t->shape, t->bytes});
  }
  for (const auto& e : executables) {
    auto def = parseExecutable(e);
    if (!def.ok()) return fail(def.status());
    b.addExecutable(std::move(*def));
  }
  Status written = b.writeFile(out);
  if (!written.ok()) return fail(written, ral::cli::kExitFailed);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return ral::cli::runTool("ral-pack", [&] { return runMain(argc, argv); });
}
