#!/usr/bin/python3
"""The compiled MLP (examples/mlp.mlir, via ral-compile) against PyTorch eager on the CPU, in one
process: same weights, same inputs, same thread count. RAL runs through its C API (ral/c_api.h)
with numpy arrays passed as DLPack tensors; PyTorch runs nn.Sequential(Linear, ReLU, Linear)
under inference_mode. Prints the latency of each and the ratio torch / RAL.

  /usr/bin/python3 benchmarks/mlp_vs_torch.py [--build build] [--threads 1] [--batches 1 64]
                                              [--model examples/mlp_tensor.mlir]
"""
import argparse
import ctypes
import os
import subprocess
import sys
import tempfile
import time

import numpy as np


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


DLManagedTensor._fields_ = [
    ("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
    ("deleter", ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor)))]

_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


class RalModel:
    """A module loaded with the C API; inputs are bound once, as DLPack views of numpy arrays."""

    def __init__(self, lib_path, module_path):
        lib = ctypes.CDLL(lib_path)
        lib.ral_module_load.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
        lib.ral_context_create.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
        lib.ral_context_run.argtypes = [
            ctypes.c_void_p, ctypes.POINTER(ctypes.POINTER(DLManagedTensor)), ctypes.c_size_t,
            ctypes.POINTER(ctypes.POINTER(DLManagedTensor)), ctypes.c_size_t]
        lib.ral_last_error.restype = ctypes.c_char_p
        self.lib = lib
        self.module = ctypes.c_void_p()
        self.context = ctypes.c_void_p()
        self._check(lib.ral_module_load(module_path.encode(), ctypes.byref(self.module)))
        self._check(lib.ral_context_create(self.module, ctypes.byref(self.context)))
        self.outputs = (ctypes.POINTER(DLManagedTensor) * 1)()

    def _check(self, rc):
        if rc != 0:
            sys.exit("RAL error: " + self.lib.ral_last_error().decode())

    def bind(self, arrays):
        self.arrays = arrays  # keeps the data and capsules alive
        self.capsules = [a.__dlpack__() for a in arrays]
        ptrs = [_capsule_pointer(c, b"dltensor") for c in self.capsules]
        self.inputs = (ctypes.POINTER(DLManagedTensor) * len(ptrs))(
            *[ctypes.cast(p, ctypes.POINTER(DLManagedTensor)) for p in ptrs])

    def run(self):
        """One execution; returns the output (copied) when asked, else releases it."""
        self._check(self.lib.ral_context_run(self.context, self.inputs, len(self.arrays),
                                             self.outputs, 1))
        self.outputs[0].contents.deleter(self.outputs[0])

    def run_copy(self):
        self._check(self.lib.ral_context_run(self.context, self.inputs, len(self.arrays),
                                             self.outputs, 1))
        t = self.outputs[0].contents.dl_tensor
        shape = tuple(t.shape[i] for i in range(t.ndim))
        n = int(np.prod(shape))
        data = ctypes.cast(t.data + t.byte_offset, ctypes.POINTER(ctypes.c_float))
        out = np.ctypeslib.as_array(data, shape=(n,)).reshape(shape).copy()
        self.outputs[0].contents.deleter(self.outputs[0])
        return out


def per_call_us(fns, iterations, repeats):
    """Per-call time of each function in microseconds: the best over `repeats` blocks of
    `iterations` calls. The functions take turns block by block, so a busy machine slows both
    alike instead of whichever happened to run during the disturbance."""
    for fn in fns:
        for _ in range(max(10, iterations // 10)):
            fn()
    best = [float("inf")] * len(fns)
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            start = time.perf_counter()
            for _ in range(iterations):
                fn()
            best[i] = min(best[i], (time.perf_counter() - start) / iterations * 1e6)
    return best


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=os.path.join(root, "build"))
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--batches", type=int, nargs="+", default=[1, 64])
    p.add_argument("--iterations", type=int, default=2000)
    p.add_argument("--repeats", type=int, default=15)
    # mlp_tensor.mlir and mlp_tosa.mlir compute the same MLP from tensor-level programs.
    p.add_argument("--model", default=os.path.join(root, "examples", "mlp.mlir"))
    args = p.parse_args()

    # Both sides get the same number of threads (RAL reads this when its CPU driver starts).
    os.environ["RAL_CPU_THREADS"] = str(args.threads)
    import torch
    torch.set_num_threads(args.threads)

    work = tempfile.mkdtemp(prefix="ral-bench-")
    module = os.path.join(work, "mlp.ralm")
    subprocess.run([os.path.join(args.build, "compiler_passes", "ral-compile"),
                    args.model, "-o", module], check=True)
    ral = RalModel(os.path.join(args.build, "libral.so"), module)

    rng = np.random.default_rng(0)
    w1 = (rng.standard_normal((128, 256)) / np.sqrt(128)).astype(np.float32)
    b1 = rng.standard_normal(256).astype(np.float32)
    w2 = (rng.standard_normal((256, 10)) / np.sqrt(256)).astype(np.float32)
    b2 = rng.standard_normal(10).astype(np.float32)
    model = torch.nn.Sequential(torch.nn.Linear(128, 256), torch.nn.ReLU(),
                                torch.nn.Linear(256, 10)).eval()
    with torch.no_grad():
        model[0].weight.copy_(torch.from_numpy(w1.T.copy()))
        model[0].bias.copy_(torch.from_numpy(b1))
        model[2].weight.copy_(torch.from_numpy(w2.T.copy()))
        model[2].bias.copy_(torch.from_numpy(b2))

    print("MLP 128-256-10 (%s), %d thread(s), torch %s" %
          (os.path.relpath(args.model, root), args.threads, torch.__version__))
    print("%6s %14s %14s %16s" % ("batch", "RAL (us)", "torch (us)", "torch / RAL"))
    for batch in args.batches:
        x = rng.standard_normal((batch, 128)).astype(np.float32)
        xt = torch.from_numpy(x)
        ral.bind([x, w1, b1, w2, b2])
        with torch.inference_mode():
            want = model(xt).numpy()
            got = ral.run_copy()
            if not np.allclose(got, want, rtol=1e-4, atol=1e-4):
                sys.exit("batch %d: RAL and torch disagree (max abs diff %g)" %
                         (batch, np.abs(got - want).max()))
            iterations = max(50, args.iterations // max(1, batch // 8))
            t_ral, t_torch = per_call_us([ral.run, lambda: model(xt)], iterations, args.repeats)
        print("%6d %14.2f %14.2f %15.2fx" % (batch, t_ral, t_torch, t_torch / t_ral))


if __name__ == "__main__":
    main()
