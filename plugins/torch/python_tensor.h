// The Python side of torch tensors for ral_torch's CPython extension: Python.h, then torch's
// THPVariable_Wrap / THPVariable_Unpack. Include it first (Python.h sets feature macros the
// standard headers read).
#ifndef RAL_PLUGINS_TORCH_PYTHON_TENSOR_H_
#define RAL_PLUGINS_TORCH_PYTHON_TENSOR_H_

// clang-format off
#include <Python.h>
// clang-format on

#include <ATen/core/Tensor.h>
#include <torch/version.h>

#if __has_include(<pybind11/pybind11.h>)
#include <torch/csrc/autograd/python_variable.h>
#else
// torch's python_variable.h includes pybind11, which Debian's libtorch-dev (torch 1.13) does not
// ship: declare the three symbols used here as torch 1.x defines them in libtorch_python.
#include <c10/util/MaybeOwned.h>
static_assert(TORCH_VERSION_MAJOR == 1, "building ral_torch._fast needs pybind11's headers");
struct THPVariable {
  PyObject_HEAD c10::MaybeOwned<at::Tensor> cdata;
  PyObject* backward_hooks;
};
extern PyObject* THPVariableClass;
extern PyObject* ParameterClass;
PyObject* THPVariable_Wrap(at::TensorBase var);
inline const at::Tensor& THPVariable_Unpack(PyObject* obj) {
  return *reinterpret_cast<THPVariable*>(obj)->cdata;
}
#endif

#endif  // RAL_PLUGINS_TORCH_PYTHON_TENSOR_H_
