#include "plugins/torch/python_communicator.h"

#include <ATen/ops/from_blob.h>

#include <memory>
#include <mutex>
#include <string>

#include "contexts/torch/torch_context.h"
#include "contexts/torch/torch_dtype.h"
#include "ral/communicator.h"

namespace ral::torch_host {
namespace {

// The pending Python exception as a Status (ValueError: INVALID_ARGUMENT), cleared.
Status takePythonError(const char* kind) {
  PyObject *type = nullptr, *value = nullptr, *trace = nullptr;
  PyErr_Fetch(&type, &value, &trace);
  PyErr_NormalizeException(&type, &value, &trace);
  std::string message = "unknown error";
  if (value != nullptr) {
    if (PyObject* text = PyObject_Str(value)) {
      if (const char* utf8 = PyUnicode_AsUTF8(text)) message = utf8;
      Py_DECREF(text);
    }
  }
  const bool invalid = type != nullptr && PyErr_GivenExceptionMatches(type, PyExc_ValueError);
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(trace);
  PyErr_Clear();
  return Status(invalid ? StatusCode::kInvalidArgument : StatusCode::kUnavailable,
                internal::strCat("torch.distributed ", kind, ": ", message));
}

class PythonCommunicator final : public Communicator {
 public:
  // `handler`: a new reference, owned from here.
  explicit PythonCommunicator(PyObject* handler) : handler_(handler) {}
  ~PythonCommunicator() override {
    if (!Py_IsInitialized()) return;  // at exit: the interpreter is gone
    PyGILState_STATE gil = PyGILState_Ensure();
    Py_DECREF(handler_);
    PyGILState_Release(gil);
  }

  int rank() const override { return info("rank"); }
  int size() const override { return info("size"); }
  std::string describe() const override {
    const int n = size();
    if (n < 1) return "torch.distributed, unavailable: " + lastInfoError();
    return internal::strCat("torch.distributed, rank ", rank(), " of ", n);
  }

  Status allReduce(const void* in, void* out, int64_t count, DType dtype, ReduceOp op) override {
    return call("all_reduce", in, count, out, count, dtype, static_cast<int>(op), 0);
  }
  Status allGather(const void* in, void* out, int64_t count, DType dtype) override {
    return call("all_gather", in, count, out, count * size(), dtype, 0, 0);
  }
  Status reduceScatter(const void* in, void* out, int64_t count, DType dtype,
                       ReduceOp op) override {
    return call("reduce_scatter", in, count * size(), out, count, dtype, static_cast<int>(op), 0);
  }
  Status broadcast(void* data, int64_t count, DType dtype, int root) override {
    return call("broadcast", nullptr, 0, data, count, dtype, root, 0);
  }
  Status allToAll(const void* in, void* out, int64_t count, DType dtype) override {
    return call("all_to_all", in, count * size(), out, count * size(), dtype, 0, 0);
  }
  Status send(const void* data, int64_t count, DType dtype, int peer, int tag) override {
    return call("send", data, count, nullptr, 0, dtype, peer, tag);
  }
  Status recv(void* data, int64_t count, DType dtype, int peer, int tag) override {
    return call("recv", nullptr, 0, data, count, dtype, peer, tag);
  }

 private:
  // rank() or size() from the handler; -1 when torch.distributed cannot say (the collective
  // that follows then fails with the handler's error).
  int info(const char* kind) const {
    PyGILState_STATE gil = PyGILState_Ensure();
    PyObject* result = PyObject_CallFunction(handler_, "sOOii", kind, Py_None, Py_None, 0, 0);
    long value = -1;
    if (result != nullptr) {
      value = PyLong_AsLong(result);
      Py_DECREF(result);
    }
    if (PyErr_Occurred()) {
      const Status error = takePythonError(kind);
      std::lock_guard<std::mutex> lock(mutex_);
      last_info_error_ = std::string(error.message());
    }
    PyGILState_Release(gil);
    return static_cast<int>(value);
  }
  std::string lastInfoError() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return last_info_error_;
  }

  // handler(kind, a, b, arg, tag) with `a` and `b` the buffers as CPU tensors (None when null).
  Status call(const char* kind, const void* a, int64_t a_count, void* b, int64_t b_count,
              DType dtype, int arg, int tag) {
    if (!isCollectiveDType(dtype))
      return unsupported("collectives carry f16, bf16, f32, f64, i32 and i64, not ",
                         dtypeName(dtype));
    RAL_ASSIGN_OR_RETURN(c10::ScalarType type, toScalarType(dtype));
    if (a_count < 0 || b_count < 0)
      return invalidArgument("torch.distributed ", kind, ": no process group (world size ", size(),
                             ")");
    auto options = at::TensorOptions().dtype(type).device(c10::kCPU);
    PyGILState_STATE gil = PyGILState_Ensure();
    auto wrap = [&](const void* data, int64_t count) -> PyObject* {
      if (data == nullptr) {
        Py_INCREF(Py_None);
        return Py_None;
      }
      return THPVariable_Wrap(at::from_blob(const_cast<void*>(data), {count}, options));
    };
    PyObject* ta = wrap(a, a_count);
    PyObject* tb = wrap(b, b_count);
    PyObject* result = nullptr;
    if (ta != nullptr && tb != nullptr)
      result = PyObject_CallFunction(handler_, "sOOii", kind, ta, tb, arg, tag);
    Py_XDECREF(ta);
    Py_XDECREF(tb);
    Status status;
    if (result == nullptr) {
      status = takePythonError(kind);
    } else {
      Py_DECREF(result);
    }
    PyGILState_Release(gil);
    return status;
  }

  PyObject* handler_;
  mutable std::mutex mutex_;
  mutable std::string last_info_error_;  // why rank() or size() last failed
};

}  // namespace

PyObject* setCollectives(PyObject* /*self*/, PyObject* handler) {
  if (!PyCallable_Check(handler)) {
    PyErr_SetString(PyExc_TypeError, "ral_torch._fast.set_collectives(handler): not callable");
    return nullptr;
  }
  Py_INCREF(handler);
  // One communicator for every torch context of the process, as torch's process group is one.
  auto shared = std::shared_ptr<Communicator>(new PythonCommunicator(handler));
  setTorchCommunicatorProvider(
      [shared]() -> StatusOr<std::shared_ptr<Communicator>> { return shared; });
  Py_RETURN_NONE;
}

}  // namespace ral::torch_host
