// Compiled kernels at run time: a module's host executable is resolved from its host library,
// ral_kernel_launch refuses every bad launch with an error on the execution (never a crash),
// a module whose executable is corrupt or names a missing kernel fails to load or to launch
// cleanly, and the next execution is correct.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "ral/standalone_context.h"
#include "ral/module_builder.h"
#include "tests/support/compiled_softmax.h"
#include "tests/support/test_cpu_driver.h"

namespace ral::standalone {
namespace {

using ral::testing::defaultTestOptions;

constexpr char kLaunch[] =
    "ral_kernel_launch___cpu___pvoid_i64_i64_i64_i64_i64_i64_i64_i64_i64_ppvoid_pi64_i64___void";

std::string modulePath(const std::string& name) {
  return std::string(RAL_TEST_MODULE_DIR) + "/" + name + ".ralm";
}

// Compiled test modules exist only in builds with the MLIR compiler (not the sanitizer builds).
#define SKIP_WITHOUT_COMPILED_MODULES()                      \
  if (!std::ifstream(modulePath("compiled_softmax")).good()) \
  GTEST_SKIP() << "built without the MLIR compiler: no compiled_softmax.ralm"

bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

void expectSoftmaxWorks(StandaloneContext& ctx, int64_t rows, int64_t cols) {
  ral::testing::expectSoftmaxWorks(ctx, rows, cols, cols);
}

TEST(ModuleKernelsTest, HostExecutableIsResolvedFromTheLibrary) {
  SKIP_WITHOUT_COMPILED_MODULES();
  auto module = Module::load(modulePath("compiled_softmax"));
  ASSERT_TRUE(module.ok()) << module.status();
  ASSERT_EQ((*module)->executables().size(), 1u);
  const ExecutableRef& exe = (*module)->executables()[0];
  EXPECT_EQ(exe.format, ExecutableFormat::kHostFunction);
  ASSERT_EQ(exe.host_functions.size(), exe.entries.size());
  for (void* fn : exe.host_functions) EXPECT_NE(fn, nullptr);
  auto ctx = StandaloneContext::create(*module, defaultTestOptions());
  ASSERT_TRUE(ctx.ok()) << ctx.status();
  expectSoftmaxWorks(**ctx, 5, 7);
  expectSoftmaxWorks(**ctx, 0, 7);  // an empty grid launches nothing
  expectSoftmaxWorks(**ctx, 300, 1);
}

Status launch(StandaloneContext& ctx, int64_t executable, int64_t entry, int64_t grid,
              int64_t block, void** args, int64_t* sizes, int64_t count) {
  return ral::testing::callKernelLaunch(ctx, kLaunch, executable, entry, grid, block, args, sizes,
                                        count);
}

TEST(ModuleKernelsTest, BadLaunchesAreErrorsAndTheNextRunIsCorrect) {
  SKIP_WITHOUT_COMPILED_MODULES();
  auto ctx = StandaloneContext::load(modulePath("compiled_softmax"), defaultTestOptions());
  ASSERT_TRUE(ctx.ok()) << ctx.status();
  StandaloneContext& c = **ctx;
  int64_t value = 0;
  void* args[] = {&value};
  int64_t sizes[] = {8};
  struct Case {
    int64_t executable, entry, grid, block;
    void** args;
    int64_t* sizes;
    int64_t count;
    const char* message;
  } cases[] = {
      {1, 0, 1, 1, args, sizes, 1, "has 1 executables, not #1"},
      {-1, 0, 1, 1, args, sizes, 1, "not #-1"},
      {0, 5, 1, 1, args, sizes, 1, "has 1 entries, not #5"},
      {0, 0, -3, 1, args, sizes, 1, "grid -3x1x1"},
      {0, 0, 1, 0, args, sizes, 1, "block 0x1x1"},
      {0, 0, int64_t{1} << 40, 1, args, sizes, 1, "each grid size must be in [0, 2^31)"},
      {0, 0, 1, 1, nullptr, nullptr, 2, "and no argument array"},
      {0, 0, 1, 1, args, sizes, -1, "launched with -1 arguments"},
  };
  for (const Case& k : cases) {
    Status s = launch(c, k.executable, k.entry, k.grid, k.block, k.args, k.sizes, k.count);
    EXPECT_FALSE(s.ok()) << k.message;
    EXPECT_TRUE(contains(s.message(), k.message)) << s;
    expectSoftmaxWorks(c, 3, 9);
  }
  // A zero grid is an empty tensor: no launch, no error.
  EXPECT_TRUE(launch(c, 0, 0, 0, 1, args, sizes, 1).ok());
}

// A copy of `module` with `edit` applied to its spec.
StatusOr<std::shared_ptr<Module>> rebuilt(const Module& module,
                                          const std::function<void(ModuleSpec&)>& edit) {
  ModuleSpec spec;
  spec.name = module.name();
  spec.entry = module.entryName();
  spec.inputs = module.inputs();
  spec.outputs = module.outputs();
  spec.imports = module.imports();
  spec.host_library.assign(module.hostLibraryData(),
                           module.hostLibraryData() + module.hostLibrarySize());
  for (const ExecutableRef& e : module.executables()) {
    ExecutableDef def;
    def.name = e.name;
    def.format = e.format;
    const auto* bytes = static_cast<const uint8_t*>(e.data);
    def.data.assign(bytes, bytes + e.size);
    def.entries = e.entries;
    spec.executables.push_back(std::move(def));
  }
  edit(spec);
  ModuleBuilder builder(std::move(spec));
  RAL_ASSIGN_OR_RETURN(std::vector<uint8_t> file, builder.build());
  return Module::load(file.data(), file.size());
}

TEST(ModuleKernelsTest, CorruptExecutablesAreCleanErrors) {
  SKIP_WITHOUT_COMPILED_MODULES();
  auto good = Module::load(modulePath("compiled_softmax"));
  ASSERT_TRUE(good.ok()) << good.status();
  // A round trip of the spec loads and runs.
  auto same = rebuilt(**good, [](ModuleSpec&) {});
  ASSERT_TRUE(same.ok()) << same.status();

  // An entry the host library does not define.
  auto missing = rebuilt(**good, [](ModuleSpec& s) {
    s.executables[0].entries[0].name = "ral_kernel_77";
    const std::string data = std::string("ral_kernel_77") + '\0';
    s.executables[0].data.assign(data.begin(), data.end());
  });
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(contains(missing.status().message(), "'ral_kernel_77' is not defined"))
      << missing.status();

  // Data that does not name the entries.
  auto garbled = rebuilt(**good, [](ModuleSpec& s) { s.executables[0].data[3] ^= 0x5a; });
  ASSERT_FALSE(garbled.ok());
  EXPECT_TRUE(contains(garbled.status().message(), "does not hold the symbol names"))
      << garbled.status();

  // An executable the CPU cannot run: the launch fails the execution, the process lives on.
  auto foreign = rebuilt(**good, [](ModuleSpec& s) {
    s.executables[0].format = ExecutableFormat::kSpirv;
    s.executables[0].data.assign(64, 0xee);
  });
  ASSERT_TRUE(foreign.ok()) << foreign.status();
  auto ctx = StandaloneContext::create(*foreign, defaultTestOptions());
  ASSERT_TRUE(ctx.ok()) << ctx.status();
  std::vector<float> x(6, 1.0f);
  const int64_t shape[] = {2, 3};
  Execution e = (*ctx)->newExecution();
  ASSERT_TRUE(e.bindInput(0, TensorRef{x.data(), DType::kF32, 2, shape, nullptr}).ok());
  Status run = e.run();
  ASSERT_FALSE(run.ok());
  EXPECT_TRUE(contains(run.message(), "the CPU driver runs only 'host'")) << run;

  auto fine = StandaloneContext::create(*good, defaultTestOptions());
  ASSERT_TRUE(fine.ok()) << fine.status();
  expectSoftmaxWorks(**fine, 4, 33);
}

}  // namespace
}  // namespace ral::standalone
