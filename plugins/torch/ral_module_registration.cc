// Registers torch.classes.ral.Module (see ral_module.h) and the trace controls
// torch.ops.ral.trace_start / trace_stop (<ral/trace.h>) when libral_torch.so is loaded
// (torch.ops.load_library, or linking it into a C++ program).
#include <torch/custom_class.h>
#include <torch/library.h>

#include <cstdint>
#include <string>
#include <vector>

#include "plugins/torch/ral_module.h"
#include "ral/trace.h"

namespace ral::torch_host {
namespace {

using Self = c10::intrusive_ptr<RalModule>;

TORCH_LIBRARY(ral, m) {
  m.def("trace_start(str path) -> ()", [](const std::string& path) {
    const Status s = trace::start(path);
    TORCH_CHECK(s.ok(), "ral: ", s.toString());
  });
  m.def("trace_stop() -> ()", [] {
    const Status s = trace::stop();
    TORCH_CHECK(s.ok(), "ral: ", s.toString());
  });
  m.class_<RalModule>("Module")
      .def(torch::init<std::string>(), "Loads a .ralm module file from a path.")
      .def_static(
          "from_bytes", [](std::string bytes) { return RalModule::fromBytes(std::move(bytes)); },
          "Loads a module from the bytes of a .ralm file.")
      .def(
          "forward",
          [](const Self& self, std::vector<at::Tensor> inputs) { return self->forward(inputs); },
          "Runs the module once: one tensor per input, one per output.")
      .def(
          "input_signature", [](const Self& self) { return self->inputSignature(); },
          "One 'name:2x?xf32'-style string per input.")
      .def(
          "output_signature", [](const Self& self) { return self->outputSignature(); },
          "One 'name:2x?xf32'-style string per output.")
      .def(
          "name", [](const Self& self) { return self->name(); }, "The module's name.")
      .def(
          "set_strict_zero_copy",
          [](const Self& self, bool strict) { self->setStrictZeroCopy(strict); },
          "True: inputs whose strides the module's compiled layout does not accept are errors "
          "instead of being copied into that layout.")
      .def(
          "strict_zero_copy", [](const Self& self) { return self->strictZeroCopy(); },
          "Whether strict zero-copy is on.")
      .def(
          "select_device",
          [](const Self& self, const std::string& uri) { self->selectDevice(uri); },
          "Runs the module on the device a device URI names ('vulkan:1', 'hsa://GPU-<uuid>', "
          "'cuda://name=H100'), of the kind it was compiled for; before its first run.")
      .def(
          "state", [](const Self& self) { return self->state(); },
          "The module file as a uint8 tensor.")
      // For ral_torch._fast (fast_call.cc), which cannot unwrap a ScriptObject without pybind11:
      // valid while this object lives, which ral_torch.RalModule ensures by holding it.
      .def(
          "handle", [](const Self& self) { return reinterpret_cast<int64_t>(self.get()); },
          "The address of the C++ RalModule, for ral_torch._fast.run.")
      .def_pickle([](const Self& self) -> at::Tensor { return self->state(); },
                  [](at::Tensor state) -> Self { return RalModule::fromState(state); });
}

}  // namespace
}  // namespace ral::torch_host
