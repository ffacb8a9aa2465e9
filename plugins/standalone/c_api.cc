// The C API (ral/c_api.h) over Module and StandaloneContext. No exception or C++ type crosses it.
#include "ral/c_api.h"

#include <cstddef>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "ral/module.h"
#include "ral/standalone_context.h"

struct ral_module {
  std::shared_ptr<ral::Module> module;
};
struct ral_context {
  std::shared_ptr<ral::standalone::StandaloneContext> context;
};

namespace {

thread_local std::string last_error;

int report(const ral::Status& s) {
  if (s.ok()) return RAL_OK;
  last_error = s.toString();
  return static_cast<int>(s.code());
}

int nullArgument(const char* what) { return report(ral::invalidArgument(what, " is NULL")); }

int loaded(ral::StatusOr<std::shared_ptr<ral::Module>> m, ral_module** out) {
  if (!m.ok()) return report(m.status());
  auto* handle = new (std::nothrow) ral_module{std::move(*m)};
  if (handle == nullptr) return report(ral::outOfMemory("allocating a module handle"));
  *out = handle;
  return RAL_OK;
}

}  // namespace

extern "C" {

int ral_module_load(const char* path, ral_module** out) {
  if (out == nullptr) return nullArgument("out");
  *out = nullptr;
  if (path == nullptr) return nullArgument("path");
  return loaded(ral::Module::load(std::string(path)), out);
}

int ral_module_load_bytes(const void* data, size_t size, ral_module** out) {
  if (out == nullptr) return nullArgument("out");
  *out = nullptr;
  return loaded(ral::Module::load(data, size), out);
}

void ral_module_free(ral_module* module) { delete module; }

size_t ral_module_num_inputs(const ral_module* module) {
  return module ? module->module->inputs().size() : 0;
}
size_t ral_module_num_outputs(const ral_module* module) {
  return module ? module->module->outputs().size() : 0;
}
const char* ral_module_name(const ral_module* module) {
  return module ? module->module->name().c_str() : "";
}

int ral_context_create(ral_module* module, ral_context** out) {
  return ral_context_create_with_options(module, nullptr, out);
}

int ral_context_create_with_options(ral_module* module, const ral_context_options* options,
                                    ral_context** out) {
  if (out == nullptr) return nullArgument("out");
  *out = nullptr;
  if (module == nullptr) return nullArgument("module");
  ral::standalone::StandaloneContext::Options opts;
  if (options != nullptr) {
    // Only the fields the caller's version of the struct has are read.
    if (options->struct_size < offsetof(ral_context_options, strict_zero_copy) + sizeof(int))
      return report(ral::invalidArgument("ral_context_options.struct_size is ",
                                         options->struct_size,
                                         "; set it to "
                                         "sizeof(ral_context_options)"));
    opts.strict_zero_copy = options->strict_zero_copy != 0;
    // `device` was added later: read only when the caller's struct has it.
    if (options->struct_size >= offsetof(ral_context_options, device) + sizeof(const char*) &&
        options->device != nullptr)
      opts.device = options->device;
  }
  auto ctx = ral::standalone::StandaloneContext::create(module->module, std::move(opts));
  if (!ctx.ok()) return report(ctx.status());
  auto* handle = new (std::nothrow) ral_context{std::move(*ctx)};
  if (handle == nullptr) return report(ral::outOfMemory("allocating a context handle"));
  *out = handle;
  return RAL_OK;
}

void ral_context_free(ral_context* context) { delete context; }

int ral_context_run(ral_context* context, DLManagedTensor* const* inputs, size_t num_inputs,
                    DLManagedTensor** outputs, size_t num_outputs) {
  if (context == nullptr) return nullArgument("context");
  const ral::Module& m = context->context->module();
  if (outputs == nullptr && num_outputs > 0) return nullArgument("outputs");
  for (size_t i = 0; i < num_outputs; ++i) outputs[i] = nullptr;
  if (num_inputs != m.inputs().size())
    return report(ral::invalidArgument("module '", m.name(), "' takes ", m.inputs().size(),
                                       " input(s), got ", num_inputs));
  if (num_outputs != m.outputs().size())
    return report(ral::invalidArgument("module '", m.name(), "' returns ", m.outputs().size(),
                                       " output(s), room was given for ", num_outputs));
  if (inputs == nullptr && num_inputs > 0) return nullArgument("inputs");
  ral::standalone::Execution exec = context->context->newExecution();
  for (size_t i = 0; i < num_inputs; ++i) {
    if (inputs[i] == nullptr) return report(ral::invalidArgument("input ", i, " is NULL"));
    ral::Status s = exec.bindInput(i, inputs[i]->dl_tensor);
    if (!s.ok()) return report(s);
  }
  ral::Status s = exec.run();
  if (!s.ok()) return report(s);
  for (size_t i = 0; i < num_outputs; ++i) {
    auto t = exec.takeOutput(i);
    if (!t.ok()) {
      for (size_t j = 0; j < i; ++j) {
        outputs[j]->deleter(outputs[j]);
        outputs[j] = nullptr;
      }
      return report(t.status());
    }
    outputs[i] = *t;
  }
  return RAL_OK;
}

const char* ral_last_error(void) { return last_error.c_str(); }

}  // extern "C"
