// A program linked against libral_static.a: it names the components it uses through
// ral/registration.h, then runs a kernel and the host protocol's registrations are there.
// Without those calls the linker would drop the kernels' object files (nothing else names them).
#include <cstdio>
#include <string>

#include "ral/api_call.h"
#include "ral/context.h"
#include "ral/host_execution_context.h"
#include "ral/memref.h"
#include "ral/registration.h"
#include "ral/registry.h"

namespace {

int fail(const std::string& what) {
  std::fprintf(stderr, "static registration: %s\n", what.c_str());
  return 1;
}

}  // namespace

int main() {
  for (ral::Status (*component)() :
       {&ral::registerHostApi, &ral::registerCpuDriver, &ral::registerCpuKernels}) {
    ral::Status s = component();
    if (!s.ok()) return fail(s.toString());
  }
  // Idempotent, and registerAll() covers the same components.
  if (ral::Status s = ral::registerAll(); !s.ok()) return fail(s.toString());
  if (ral::Status s = ral::registerCpuKernels(); !s.ok()) return fail(s.toString());

  const ral::Registry& registry = ral::Registry::global();
  for (const char* name :
       {"ral_recv_input___cpu___pvoid_i64___m2df32", "ral_alloc___cpu___pvoid_i64___pvoid"})
    if (!registry.find(name, &ral::HostExecutionContext::kType).ok())
      return fail(std::string("missing ") + name);

  // C[2x2] = A[2x3] * B[3x2] through ral_api_call: the CPU kernel and driver were linked.
  float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 0, 1, 1, 1}, c[4] = {};
  const int64_t as[2] = {2, 3}, ast[2] = {3, 1}, bs[2] = {3, 2}, bst[2] = {2, 1}, cs[2] = {2, 2},
                cst[2] = {2, 1};
  auto ma = ral::viewMemRef<float, 2>(a, 0, as, ast);
  auto mb = ral::viewMemRef<float, 2>(b, 0, bs, bst);
  auto mc = ral::viewMemRef<float, 2>(c, 0, cs, cst);
  bool ta = false, tb = false;
  ral::Context context;
  auto exec = context.acquireExecution();
  const std::string name = ral::apiNameFor<ral::MemRef<float, 2>, ral::MemRef<float, 2>,
                                           ral::MemRef<float, 2>, bool, bool>("ral_gemm", "cpu");
  ral::callApi(exec->abi(), name.c_str(), ma, mb, mc, ta, tb);
  if (exec->failed()) return fail(exec->status().toString());
  const float expected[4] = {4, 5, 10, 11};
  for (int i = 0; i < 4; ++i)
    if (c[i] != expected[i]) return fail("wrong gemm result at " + std::to_string(i));
  std::printf("static registration: ok\n");
  return 0;
}
