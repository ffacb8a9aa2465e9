// ral_torch._fast: the eager fast path of ral_torch.RalModule.__call__, a CPython extension.
//
//   run(handle, *tensors) -> Tensor (one output) or tuple of Tensors
//
// `handle` is torch.classes.ral.Module.handle(), the address of the C++ RalModule; the caller
// (ral_torch.RalModule) keeps the ScriptObject, and so the RalModule, alive. The tensors are
// borrowed without copies, the module runs with the GIL released (many threads may call one
// module), and its outputs are wrapped as Python tensors. Errors are RuntimeErrors with the
// message the TorchScript method gives; a non-tensor argument is a TypeError.
//
// Plain CPython API: the TorchScript method call this replaces costs several microseconds of
// argument conversion, more than a small module's whole execution.
//
//   set_collectives(handler)
//
// installs the communicator of torch contexts' collectives (python_communicator.h).
// Python.h goes first (in python_tensor.h): it sets feature macros the standard headers read.
// clang-format off
#include "plugins/torch/python_tensor.h"
// clang-format on

#include <ATen/core/Tensor.h>
#include <c10/util/Exception.h>

#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "plugins/torch/python_communicator.h"
#include "plugins/torch/ral_module.h"

namespace ral::torch_host {
namespace {

bool isTensor(PyObject* obj) {
  // Exact types first: PyObject_IsInstance costs more than the rest of the checks together.
  if (Py_TYPE(obj) == reinterpret_cast<PyTypeObject*>(THPVariableClass) ||
      Py_TYPE(obj) == reinterpret_cast<PyTypeObject*>(ParameterClass)) {
    return true;
  }
  return THPVariableClass != nullptr && PyObject_IsInstance(obj, THPVariableClass) == 1;
}

PyObject* run(PyObject* /*self*/, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs < 1 || !PyLong_Check(args[0])) {
    PyErr_SetString(PyExc_TypeError,
                    "ral_torch._fast.run(handle, *tensors): handle must be an int");
    return nullptr;
  }
  auto* module = static_cast<const RalModule*>(PyLong_AsVoidPtr(args[0]));
  if (module == nullptr) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "ral_torch._fast.run: null handle");
    return nullptr;
  }
  std::vector<at::Tensor> inputs;
  inputs.reserve(static_cast<size_t>(nargs - 1));
  for (Py_ssize_t i = 1; i < nargs; ++i) {
    if (!isTensor(args[i])) {
      if (PyErr_Occurred()) return nullptr;
      PyErr_Format(PyExc_TypeError, "ral_torch: input %zd must be a torch.Tensor, not %.200s",
                   i - 1, Py_TYPE(args[i])->tp_name);
      return nullptr;
    }
    inputs.push_back(THPVariable_Unpack(args[i]));
  }

  std::vector<at::Tensor> outputs;
  std::string error;
  bool failed = false;
  Py_BEGIN_ALLOW_THREADS;
  try {
    outputs = module->forward(inputs);
  } catch (const c10::Error& e) {
    failed = true;
    error = e.what_without_backtrace();
  } catch (const std::exception& e) {
    failed = true;
    error = e.what();
  } catch (...) {
    failed = true;
    error = "ral_torch: unknown C++ exception";
  }
  // Input and output tensors never drop their last reference here: the Python objects hold them.
  Py_END_ALLOW_THREADS;
  if (failed) {
    PyErr_SetString(PyExc_RuntimeError, error.c_str());
    return nullptr;
  }

  if (outputs.size() == 1) return THPVariable_Wrap(std::move(outputs[0]));
  PyObject* tuple = PyTuple_New(static_cast<Py_ssize_t>(outputs.size()));
  if (tuple == nullptr) return nullptr;
  for (size_t i = 0; i < outputs.size(); ++i) {
    PyObject* t = THPVariable_Wrap(std::move(outputs[i]));
    if (t == nullptr) {
      Py_DECREF(tuple);
      return nullptr;
    }
    PyTuple_SET_ITEM(tuple, static_cast<Py_ssize_t>(i), t);
  }
  return tuple;
}

PyMethodDef kMethods[] = {
    {"run", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&run)), METH_FASTCALL,
     "run(handle, *tensors): runs the RalModule at `handle` (torch.classes.ral.Module.handle())\n"
     "once; returns one tensor, or a tuple for several outputs."},
    {"set_collectives", &setCollectives, METH_O,
     "set_collectives(handler): torch contexts' collectives call handler(kind, a, b, arg, tag)\n"
     "(ral_torch._collectives)."},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef kModule = {PyModuleDef_HEAD_INIT,
                       "ral_torch._fast",
                       "The eager fast path of ral_torch modules (see ral_torch._module).",
                       -1,
                       kMethods,
                       nullptr,
                       nullptr,
                       nullptr,
                       nullptr};

}  // namespace
}  // namespace ral::torch_host

PyMODINIT_FUNC PyInit__fast() { return PyModule_Create(&ral::torch_host::kModule); }
