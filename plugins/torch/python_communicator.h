// The communicator of torch contexts' collectives: torch.distributed, reached through a Python
// handler (ral_torch._collectives._handle) that ral_torch installs at import with
// ral_torch._fast.set_collectives(handler). Each collective takes the GIL, wraps the buffers as
// CPU tensors without copies and calls handler(kind, a, b, arg, tag); the handler checks that the
// ranks agree, runs the torch.distributed call on the process group ral_torch uses, and raises on
// failure (ValueError: ranks that disagree or bad arguments).
#ifndef RAL_PLUGINS_TORCH_PYTHON_COMMUNICATOR_H_
#define RAL_PLUGINS_TORCH_PYTHON_COMMUNICATOR_H_

#include "plugins/torch/python_tensor.h"

namespace ral::torch_host {

// ral_torch._fast.set_collectives(handler): installs the provider of every torch context's
// communicator (setTorchCommunicatorProvider). Called with the GIL held.
PyObject* setCollectives(PyObject* self, PyObject* handler);

}  // namespace ral::torch_host

#endif  // RAL_PLUGINS_TORCH_PYTHON_COMMUNICATOR_H_
