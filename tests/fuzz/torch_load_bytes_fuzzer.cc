// libFuzzer target for the native path of ral_torch.load_bytes: the bytes of a module file become
// a torch.classes.ral.Module (RalModule::fromBytes: Module::load, TorchContext::create with its
// signature checks, linking), and ral_torch builds its generated class from what that object
// reports (name, input and output signature strings, state for pickling). Any input must give a
// module or an error with a message, never a crash, a sanitizer report or a hang.
//
// As in module_load_fuzzer.cc, module code is native code: the full load (dlopen, linking) runs
// only when the host library is one of the test modules' own (RAL_TEST_MODULE_DIR). Every input
// goes through the loader without its library and through TorchContext::create's signature
// checks. As there, each input is also tried with its manifest checksum recomputed, so the
// checks behind the checksum are fuzzed too.
#include <c10/util/Exception.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "contexts/torch/torch_context.h"
#include "plugins/torch/ral_module.h"
#include "ral/module.h"
#include "ral/module_spec.h"
#include "tests/fuzz/module_fuzz_support.h"

namespace {

// Whether Python's strict UTF-8 decoder accepts `s`: what the strings ral_torch reads (names,
// signatures, error messages) must be. Decodes code points, independently of the escaping code.
bool validUtf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    uint32_t cp = n == 1 ? c : c & (0x7F >> n);
    for (size_t k = 1; k < n; ++k) {
      const auto t = static_cast<unsigned char>(s[i + k]);
      if ((t >> 6) != 2) return false;
      cp = (cp << 6) | (t & 0x3F);
    }
    static constexpr uint32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kSmallest[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += n;
  }
  return true;
}

void checkError(const c10::Error& e) {
  const std::string message = e.what_without_backtrace();
  if (message.empty() || !validUtf8(message)) __builtin_trap();
}

// What ral_torch reads from the custom class to generate its nn.Module, each string in full: one
// signature string per input and output, Python-readable, the name before the first ':'.
void touch(const ral::torch_host::RalModule& m, const std::string& bytes) {
  const ral::Module& module = m.context().module();
  const std::vector<std::string> in = m.inputSignature(), out = m.outputSignature();
  if (in.size() != module.inputs().size() || out.size() != module.outputs().size())
    __builtin_trap();
  if (!validUtf8(m.name())) __builtin_trap();
  for (const auto* list : {&in, &out})
    for (size_t i = 0; i < list->size(); ++i) {
      const std::string& s = (*list)[i];
      const ral::TensorSignature& sig = (list == &in ? module.inputs() : module.outputs())[i];
      const std::string type = sig.toString();
      if (!validUtf8(s) || s.size() < type.size() ||
          s.compare(s.size() - type.size(), type.size(), type) != 0)
        __builtin_trap();
    }
  const at::Tensor state = m.state();
  if (state.numel() != static_cast<int64_t>(bytes.size())) __builtin_trap();
}

void loadOne(const uint8_t* data, size_t size) {
  ral::LoadOptions inspect;
  inspect.load_host_library = false;
  auto m = ral::Module::load(data, size, inspect);
  if (!m.ok()) {
    ral::fuzz::checkError(m.status());
    return;
  }
  // The torch context's own checks (element types and devices it can represent), then its refusal
  // of a module without code.
  auto inspected = ral::torch_host::TorchContext::create(*m);
  if (inspected.ok()) __builtin_trap();
  ral::fuzz::checkError(inspected.status());
  if (ral::fuzz::trustedLibraries().count((*m)->hostLibraryChecksum()) == 0) return;

  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    auto module = ral::torch_host::RalModule::fromBytes(bytes);
    touch(*module, bytes);
    // A pickled module comes back through its state; a call without its inputs is refused
    // before any module code runs (fuzzed signatures do not match the code's).
    auto restored = ral::torch_host::RalModule::fromState(module->state());
    touch(*restored, bytes);
    if (!module->context().module().inputs().empty()) {
      try {
        (void)module->forward({});
        __builtin_trap();
      } catch (const c10::Error& e) {
        checkError(e);
      }
    }
  } catch (const c10::Error& e) {
    checkError(e);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ral::fuzz::asGivenAndResealed(data, size, loadOne);
  return 0;
}
