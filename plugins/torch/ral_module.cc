#include "plugins/torch/ral_module.h"

#include <ATen/ops/empty.h>
#include <c10/util/Exception.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <utility>

#include "ral/module_spec.h"

namespace ral::torch_host {
namespace {

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  TORCH_CHECK(in.good(), "ral: cannot open module file '", path, "'");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  TORCH_CHECK(!in.bad(), "ral: cannot read module file '", path, "'");
  return bytes;
}

std::vector<std::string> describe(const std::vector<TensorSignature>& sigs) {
  std::vector<std::string> out;
  out.reserve(sigs.size());
  for (const TensorSignature& s : sigs)
    out.push_back(s.name.empty() ? s.toString() : s.name + ":" + s.toString());
  return out;
}

}  // namespace

RalModule::RalModule(const std::string& path) : RalModule(FromBytes(), readFile(path)) {}

RalModule::RalModule(FromBytes, std::string bytes) : bytes_(std::move(bytes)) {
  auto context = TorchContext::load(bytes_.data(), bytes_.size());
  TORCH_CHECK(context.ok(), context.status().toString());
  context_ = *std::move(context);
}

c10::intrusive_ptr<RalModule> RalModule::fromBytes(std::string bytes) {
  return c10::make_intrusive<RalModule>(RalModule(FromBytes(), std::move(bytes)));
}

c10::intrusive_ptr<RalModule> RalModule::fromState(const at::Tensor& state) {
  TORCH_CHECK(
      state.defined() && state.is_cpu() && state.scalar_type() == at::kByte && state.dim() == 1,
      "ral: a module's state is a 1-D uint8 CPU tensor");
  const at::Tensor bytes = state.contiguous();
  return fromBytes(
      std::string(static_cast<const char*>(bytes.data_ptr()), static_cast<size_t>(bytes.numel())));
}

std::vector<std::string> RalModule::inputSignature() const {
  return describe(context_->module().inputs());
}

std::vector<std::string> RalModule::outputSignature() const {
  return describe(context_->module().outputs());
}

at::Tensor RalModule::state() const {
  at::Tensor t = at::empty({static_cast<int64_t>(bytes_.size())}, at::kByte);
  if (!bytes_.empty()) std::memcpy(t.data_ptr(), bytes_.data(), bytes_.size());
  return t;
}

}  // namespace ral::torch_host
