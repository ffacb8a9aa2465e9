// ral-inspect: prints what a module file holds. It never runs module code (the host library is
// not loaded); imports are checked against the functions registered for the standalone context.
// With --extract NAME --output FILE it writes the code of executable NAME instead (--target T
// picks the variant for architecture T when it has several), e.g. to run ptxas on a module's PTX.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "plugins/standalone/tool_main.h"
#include "ral/file_writer.h"
#include "ral/host_variant.h"
#include "ral/module.h"
#include "ral/registry.h"
#include "ral/standalone_context.h"

namespace {

// --extract: the bytes of one executable's variant, as stored. An executable or target the
// module does not have is a usage error (2), a file that cannot be written a failure (1).
int extractExecutable(const ral::Module& m, const std::string& name, const std::string& target,
                      const std::string& output) {
  const ral::ExecutableRef* e = m.findExecutable(name);
  if (e == nullptr) {
    std::fprintf(stderr, "ral-inspect: error: module '%s' has no executable '%s'\n",
                 m.name().c_str(), name.c_str());
    return 2;
  }
  if (output.empty()) {
    std::fprintf(stderr, "ral-inspect: error: --extract needs --output FILE\n");
    return 2;
  }
  const ral::ExecutableRef::Variant* chosen = nullptr;
  std::string targets;
  for (const ral::ExecutableRef::Variant& v : e->variants) {
    targets += (targets.empty() ? "" : ", ") + (v.target.empty() ? "(none)" : v.target);
    if (v.target == target || (target.empty() && e->variants.size() == 1)) chosen = &v;
  }
  if (chosen == nullptr) {
    std::fprintf(stderr,
                 "ral-inspect: error: executable '%s' has no variant for target '%s' "
                 "(its targets: %s)\n",
                 name.c_str(), target.c_str(), targets.c_str());
    return 2;
  }
  // A device, FIFO, directory or another user's file is refused as a usage error.
  const ral::Status writable = ral::checkOutputFile(output);
  if (!writable.ok()) {
    std::fprintf(stderr, "ral-inspect: error: --output %s\n", writable.toString().c_str());
    return 2;
  }
  const ral::Status written = ral::writeFileAtomically(output, chosen->data, chosen->size);
  if (!written.ok()) {
    std::fprintf(stderr, "ral-inspect: error: %s\n", written.toString().c_str());
    return 1;
  }
  return 0;
}

int runMain(int argc, char** argv) {
  CLI::App app{"Prints the contents of a RAL module file (.ralm)", "ral-inspect"};
  std::string path;
  app.add_option("module", path, "module file")->required();
  std::string extract, target, output;
  app.add_option("--extract", extract,
                 "write the code of this executable to --output instead of printing the module");
  app.add_option("--target", target,
                 "with --extract: the variant for this target architecture (e.g. sm_80, gfx90a)");
  app.add_option("--output,-o", output, "with --extract: the file to write");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "ral-inspect: error: %s (see --help)\n", e.what());
    return 2;
  }
  ral::LoadOptions options;
  options.load_host_library = false;
  auto loaded = ral::Module::load(path, options);
  if (!loaded.ok()) {
    std::fprintf(stderr, "ral-inspect: error: %s\n", loaded.status().toString().c_str());
    return 1;
  }
  const ral::Module& m = **loaded;
  if (!extract.empty()) return extractExecutable(m, extract, target, output);
  if (!target.empty() || !output.empty()) {
    std::fprintf(stderr, "ral-inspect: error: --target and --output go with --extract\n");
    return 2;
  }
  std::printf("module: %s\n", m.name().c_str());
  std::printf("file: %s (%zu bytes)\n", path.c_str(), m.fileSize());
  std::printf("abi version: %u\n", m.abiVersion());
  std::printf("entry: %s\n", m.entryName().c_str());
  std::printf("host library: %zu bytes\n", m.hostLibrarySize());
  // The variants for newer CPU levels, and the one a load here would pick (ral/host_variant.h).
  if (!m.hostVariants().empty()) {
    std::vector<std::string_view> targets;
    for (const ral::HostVariantRef& v : m.hostVariants()) targets.push_back(v.target);
    auto picked = ral::internal::pickHostVariant(targets, std::getenv("RAL_HOST_VARIANT"));
    for (size_t i = 0; i < m.hostVariants().size(); ++i) {
      const ral::HostVariantRef& v = m.hostVariants()[i];
      const bool runs = ral::internal::cpuRunsHostTarget(v.target);
      std::printf("  variant %s: %zu bytes%s\n", v.target.c_str(), v.size,
                  picked.ok() && *picked == static_cast<int>(i) ? "  [loaded on this CPU]"
                  : runs                                        ? ""
                                                                : "  [not for this CPU]");
    }
    if (picked.ok() && *picked < 0) std::printf("  (this CPU loads the baseline library)\n");
    if (!picked.ok()) std::printf("  (%s)\n", std::string(picked.status().message()).c_str());
  }
  auto printSignatures = [](const char* what, const std::vector<ral::TensorSignature>& sigs) {
    std::printf("%s (%zu):\n", what, sigs.size());
    // A strided layout is part of toString(); the identity layout is said in words.
    for (size_t i = 0; i < sigs.size(); ++i)
      std::printf("  %zu: %s%s%s%s\n", i, sigs[i].toString().c_str(),
                  sigs[i].name.empty() ? "" : "  ", sigs[i].name.c_str(),
                  sigs[i].hasIdentityLayout() && sigs[i].rank() > 1 ? "  (row-major)" : "");
  };
  printSignatures("inputs", m.inputs());
  printSignatures("outputs", m.outputs());
  std::printf("imports (%zu):\n", m.imports().size());
  size_t missing = 0;
  for (const std::string& name : m.imports()) {
    auto fn =
        ral::Registry::global().find(name, &ral::standalone::StandaloneExecutionContext::kType);
    missing += !fn.ok();
    std::printf("  %s%s\n", name.c_str(), fn.ok() ? "" : "  [not registered]");
  }
  std::printf("executables (%zu):\n", m.executables().size());
  for (const ral::ExecutableRef& e : m.executables()) {
    std::printf("  %s: %s, %zu bytes", e.name.c_str(),
                std::string(ral::executableFormatName(e.format)).c_str(), e.size);
    for (size_t i = 0; i < e.entries.size(); ++i) {
      const auto& w = e.entries[i].workgroup_size;
      std::printf("%s %s (%ux%ux%u)", i == 0 ? ", entries:" : ",", e.entries[i].name.c_str(), w.x,
                  w.y, w.z);
    }
    std::printf("\n");
    // Per-architecture code (ral-compile --gpu-arch); one untargeted variant is the data above.
    if (e.variants.size() > 1 || !e.variants[0].target.empty())
      for (const ral::ExecutableRef::Variant& v : e.variants)
        std::printf("    target %s: %zu bytes\n", v.target.c_str(), v.size);
  }
  std::printf("constants (%zu):\n", m.constants().size());
  for (const ral::ConstantRef& c : m.constants())
    std::printf("  %s: %s, %zu bytes\n", c.name.c_str(),
                ral::shapeString(c.dtype, c.shape.data(), static_cast<int>(c.shape.size())).c_str(),
                c.size);
  if (missing > 0)
    std::printf("warning: %zu import(s) are not registered in this RAL build\n", missing);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return ral::cli::runTool("ral-inspect", [&] { return runMain(argc, argv); });
}
