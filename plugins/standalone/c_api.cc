// The C API (ral/c_api.h) over Module and StandaloneContext. No exception or C++ type crosses it.
#include "ral/c_api.h"

#include <cstddef>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "plugins/standalone/c_handles.h"
#include "ral/module.h"
#include "ral/standalone_context.h"
#include "ral/submission.h"

struct ral_module {
  std::shared_ptr<ral::Module> module;
};
struct ral_context {
  std::shared_ptr<ral::standalone::StandaloneContext> context;
};
struct ral_semaphore {
  std::shared_ptr<ral::Semaphore> semaphore;
};
struct ral_submission {
  std::shared_ptr<ral::standalone::Submission> submission;
  size_t num_outputs = 0;
  std::string module_name;  // for errors
};

static_assert(RAL_DEADLINE_EXCEEDED == static_cast<int>(ral::StatusCode::kDeadlineExceeded));

namespace {
thread_local std::string last_error;
}  // namespace

namespace ral::c_api {

int report(const Status& s) {
  if (s.ok()) return RAL_OK;
  last_error = s.toString();
  return static_cast<int>(s.code());
}

int nullArgument(const char* what) { return report(invalidArgument(what, " is NULL")); }

}  // namespace ral::c_api

namespace {

using ral::c_api::nullArgument;
using ral::c_api::report;

int loaded(ral::StatusOr<std::shared_ptr<ral::Module>> m, ral_module** out) {
  if (!m.ok()) return report(m.status());
  auto* handle = new (std::nothrow) ral_module{std::move(*m)};
  if (handle == nullptr) return report(ral::outOfMemory("allocating a module handle"));
  *out = handle;
  return RAL_OK;
}

ral::Timeout timeoutOf(uint64_t ns) {
  if (ns == RAL_INFINITE_TIMEOUT || ns > static_cast<uint64_t>(ral::kInfiniteTimeout.count()))
    return ral::kInfiniteTimeout;
  return ral::Timeout(static_cast<int64_t>(ns));
}

// A caller's reference to a shared output: its own DLManagedTensor over the same DLTensor, whose
// deleter drops the reference.
struct OutputRef {
  DLManagedTensor managed;
  ral::standalone::SharedTensor tensor;
};

void deleteOutputRef(DLManagedTensor* m) { delete static_cast<OutputRef*>(m->manager_ctx); }

// A new reference to `tensor` for the caller, or null when out of memory.
DLManagedTensor* newOutputRef(ral::standalone::SharedTensor tensor) {
  auto* ref = new (std::nothrow) OutputRef{{}, std::move(tensor)};
  if (ref == nullptr) return nullptr;
  ref->managed.dl_tensor = ref->tensor->dl_tensor;
  ref->managed.manager_ctx = ref;
  ref->managed.deleter = &deleteOutputRef;
  return &ref->managed;
}

template <typename T>
ral::StatusOr<std::vector<ral::standalone::SemaphoreValue>> semaphoreValues(const T* values,
                                                                            size_t count,
                                                                            const char* what) {
  if (values == nullptr && count > 0) return ral::invalidArgument(what, " is NULL");
  std::vector<ral::standalone::SemaphoreValue> out;
  out.reserve(count);
  for (size_t k = 0; k < count; ++k) {
    if (values[k].semaphore == nullptr)
      return ral::invalidArgument(what, "[", k, "].semaphore is NULL");
    out.push_back({values[k].semaphore->semaphore, values[k].value});
  }
  return out;
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
    if (options->struct_size >=
            offsetof(ral_context_options, communicator) + sizeof(ral_communicator*) &&
        options->communicator != nullptr)
      opts.communicator = options->communicator->communicator;
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

int ral_semaphore_create(ral_context* context, uint64_t initial_value, ral_semaphore** out) {
  if (out == nullptr) return nullArgument("out");
  *out = nullptr;
  if (context == nullptr) return nullArgument("context");
  auto s = context->context->createSemaphore(initial_value);
  if (!s.ok()) return report(s.status());
  auto* handle = new (std::nothrow) ral_semaphore{std::move(*s)};
  if (handle == nullptr) return report(ral::outOfMemory("allocating a semaphore handle"));
  *out = handle;
  return RAL_OK;
}

void ral_semaphore_free(ral_semaphore* semaphore) { delete semaphore; }

int ral_semaphore_query(ral_semaphore* semaphore, uint64_t* value) {
  if (semaphore == nullptr) return nullArgument("semaphore");
  if (value == nullptr) return nullArgument("value");
  auto v = semaphore->semaphore->query();
  if (!v.ok()) return report(v.status());
  *value = *v;
  return RAL_OK;
}

int ral_semaphore_signal(ral_semaphore* semaphore, uint64_t value) {
  if (semaphore == nullptr) return nullArgument("semaphore");
  return report(semaphore->semaphore->signal(value));
}

int ral_semaphore_wait(ral_semaphore* semaphore, uint64_t value, uint64_t timeout_ns) {
  if (semaphore == nullptr) return nullArgument("semaphore");
  return report(semaphore->semaphore->wait(value, timeoutOf(timeout_ns)));
}

int ral_semaphore_fail(ral_semaphore* semaphore, const char* message) {
  if (semaphore == nullptr) return nullArgument("semaphore");
  semaphore->semaphore->fail(ral::aborted(message != nullptr ? message : "failed by the host"));
  return RAL_OK;
}

int ral_context_submit(ral_context* context, const ral_input* inputs, size_t num_inputs,
                       const ral_semaphore_value* waits, size_t num_waits,
                       const ral_semaphore_value* signals, size_t num_signals,
                       const ral_semaphore_value* output_signals, size_t num_output_signals,
                       ral_submission** out) {
  if (out == nullptr) return nullArgument("out");
  *out = nullptr;
  if (context == nullptr) return nullArgument("context");
  if (inputs == nullptr && num_inputs > 0) return nullArgument("inputs");
  std::vector<ral::standalone::SubmitInput> in;
  in.reserve(num_inputs);
  for (size_t i = 0; i < num_inputs; ++i) {
    if (inputs[i].tensor != nullptr && inputs[i].from != nullptr)
      return report(ral::invalidArgument("input ", i, " sets both `tensor` and `from`"));
    if (inputs[i].ready.semaphore != nullptr && inputs[i].tensor == nullptr)
      return report(ral::invalidArgument("input ", i, " sets `ready` without a `tensor`"));
    if (inputs[i].tensor != nullptr && inputs[i].ready.semaphore != nullptr)
      in.emplace_back(&inputs[i].tensor->dl_tensor,
                      ral::standalone::SemaphoreValue{inputs[i].ready.semaphore->semaphore,
                                                      inputs[i].ready.value});
    else if (inputs[i].tensor != nullptr)
      in.emplace_back(&inputs[i].tensor->dl_tensor);
    else if (inputs[i].from != nullptr)
      in.emplace_back(inputs[i].from->submission, inputs[i].output);
    else
      return report(ral::invalidArgument("input ", i, " is NULL (neither `tensor` nor `from`)"));
  }
  auto w = semaphoreValues(waits, num_waits, "waits");
  if (!w.ok()) return report(w.status());
  auto sig = semaphoreValues(signals, num_signals, "signals");
  if (!sig.ok()) return report(sig.status());
  if (output_signals == nullptr && num_output_signals > 0) return nullArgument("output_signals");
  std::vector<ral::standalone::SemaphoreValue> per_output(num_output_signals);
  for (size_t k = 0; k < num_output_signals; ++k)
    if (output_signals[k].semaphore != nullptr)
      per_output[k] = {output_signals[k].semaphore->semaphore, output_signals[k].value};
  auto* handle = new (std::nothrow) ral_submission();
  if (handle == nullptr) return report(ral::outOfMemory("allocating a submission handle"));
  auto sub = context->context->submit(std::move(in), std::move(*w), std::move(*sig),
                                      std::move(per_output));
  if (!sub.ok()) {
    delete handle;
    return report(sub.status());
  }
  handle->submission = std::move(*sub);
  handle->num_outputs = context->context->module().outputs().size();
  handle->module_name = context->context->module().name();
  *out = handle;
  return RAL_OK;
}

int ral_submission_wait(ral_submission* submission, uint64_t timeout_ns) {
  if (submission == nullptr) return nullArgument("submission");
  return report(submission->submission->wait(timeoutOf(timeout_ns)));
}

int ral_submission_outputs(ral_submission* submission, DLManagedTensor** outputs,
                           size_t num_outputs) {
  if (submission == nullptr) return nullArgument("submission");
  if (outputs == nullptr && num_outputs > 0) return nullArgument("outputs");
  for (size_t i = 0; i < num_outputs; ++i) outputs[i] = nullptr;
  if (num_outputs != submission->num_outputs)
    return report(ral::invalidArgument("module '", submission->module_name, "' returns ",
                                       submission->num_outputs, " output(s), room was given for ",
                                       num_outputs));
  auto shared = submission->submission->outputs();
  if (!shared.ok()) return report(shared.status());
  for (size_t i = 0; i < num_outputs; ++i) {
    outputs[i] = newOutputRef((*shared)[i]);
    if (outputs[i] == nullptr) {
      for (size_t j = 0; j < i; ++j) {
        outputs[j]->deleter(outputs[j]);
        outputs[j] = nullptr;
      }
      return report(ral::outOfMemory("allocating output references"));
    }
  }
  return RAL_OK;
}

int ral_submission_output(ral_submission* submission, size_t index, DLManagedTensor** output) {
  if (output == nullptr) return nullArgument("output");
  *output = nullptr;
  if (submission == nullptr) return nullArgument("submission");
  if (index >= submission->num_outputs)
    return report(ral::outOfRange("output ", index, " of module '", submission->module_name,
                                  "', which returns ", submission->num_outputs, " output(s)"));
  auto shared = submission->submission->output(index);
  if (!shared.ok()) return report(shared.status());
  *output = newOutputRef(std::move(*shared));
  if (*output == nullptr) return report(ral::outOfMemory("allocating an output reference"));
  return RAL_OK;
}

void ral_submission_free(ral_submission* submission) { delete submission; }

const char* ral_last_error(void) { return last_error.c_str(); }

}  // extern "C"
