// RalModule: the TorchScript custom class torch.classes.ral.Module (registered in
// ral_module_registration.cc) over a TorchContext.
//
//   m = torch.classes.ral.Module("model.ralm")           # or .from_bytes(data)
//   outputs = m.forward([x, y])                          # List[Tensor] -> List[Tensor]
//   m.input_signature(), m.output_signature()            # ["?x8xf32", ...]
//   m.set_strict_zero_copy(True)                         # refuse inputs in another layout
//   m.handle()                                           # this object's address, as an int
//
// handle() is for ral_torch._fast (fast_call.cc), the eager fast path, which cannot unwrap a
// ScriptObject without pybind11; it stays valid while the ScriptObject lives.
//
// The module file's bytes are kept, so a scripted model holding a RalModule pickles it
// (torch.jit.save) as a uint8 tensor and loads it in another process without the file.
// forward() may be called from many threads at once.
#ifndef RAL_PLUGINS_TORCH_RAL_MODULE_H_
#define RAL_PLUGINS_TORCH_RAL_MODULE_H_

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "contexts/torch/torch_context.h"

namespace ral::torch_host {

class RalModule : public torch::CustomClassHolder {
 public:
  // Loads a .ralm file; throws c10::Error with RAL's message.
  explicit RalModule(const std::string& path);
  // Loads a module from its file's bytes (the pickled state, or Python bytes).
  static c10::intrusive_ptr<RalModule> fromBytes(std::string bytes);
  // A uint8 tensor as returned by state().
  static c10::intrusive_ptr<RalModule> fromState(const at::Tensor& state);

  std::vector<at::Tensor> forward(const std::vector<at::Tensor>& inputs) const {
    return context_->forward(inputs);
  }
  // One "name:2x?xf32"-style string per input / output (the name part only when the module
  // names it; "@cuda" for CUDA tensors).
  std::vector<std::string> inputSignature() const;
  std::vector<std::string> outputSignature() const;
  std::string name() const { return escapeInvalidUtf8(context_->module().name()); }
  // TorchContext::setStrictZeroCopy: refuse, rather than copy, inputs in another layout.
  void setStrictZeroCopy(bool strict) const { context_->setStrictZeroCopy(strict); }
  // Context::selectDevice(uri), throwing c10::Error (a Python RuntimeError) with RAL's message.
  void selectDevice(const std::string& uri) const;
  bool strictZeroCopy() const { return context_->strictZeroCopy(); }
  // The module file as a 1-D uint8 CPU tensor.
  at::Tensor state() const;

  const TorchContext& context() const { return *context_; }

 private:
  struct FromBytes {};
  RalModule(FromBytes, std::string bytes);
  // Loads bytes_; errors name `source` when it is not empty.
  void init(const std::string& source);

  std::string bytes_;
  std::shared_ptr<TorchContext> context_;
};

}  // namespace ral::torch_host

#endif  // RAL_PLUGINS_TORCH_RAL_MODULE_H_
