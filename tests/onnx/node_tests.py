#!/usr/bin/python3
"""The ONNX backend test models (Debian's libonnx-testdata) through ral-compile and ral_torch.

Every test of the categories node, pytorch-converted, pytorch-operator and simple (`real` holds
large models and is left out) is compiled with the ral-compile CLI, in parallel, each into a
temporary directory, and classified:

- unsupported: ral-compile exits with 5 (an operator, attribute or type the importer does not
  handle; the op types it names are counted), or a graph input or output has a type neither
  torch nor ral-run's .npy files hold (strings, sequences, optionals, maps);
- supported: anything else. A module that compiled (exit 0) runs every test_data_set_N through
  ral_torch.load (through the ral-run CLI with .npy files when an input or output is
  uint16/32/64, which torch lacks) and each output is compared with the reference as ONNX's
  backend runner does
  (same shape and dtype; floating point at rtol=1e-3, atol=1e-7; other types exactly): passed or
  failed. Any other exit code of ral-compile fails the test (a supported model must compile).

Execution happens in worker processes, each running a chunk of tests and reporting them one by
one, so a test that crashes its process (or hangs) fails alone and the rest of its chunk runs in
a fresh worker.

known_gaps.txt (beside this file) is the one list of supported tests expected to fail, one
`test_name  # reason` (or `category/test_name  # reason`) per line. The exit status is 1 when a
test not listed there fails; a listed test that passes is reported so its line can be removed.

  /usr/bin/python3 tests/onnx/node_tests.py --ral-compile build/compiler_passes/ral-compile
      [--data /usr/share/libonnx-testdata/data] [--category node ...] [--filter REGEX]
      [--ral-run build/plugins/standalone/ral-run] [--jobs N] [--json out.json]

Needs numpy and onnx (python3-onnx), and ral_torch on PYTHONPATH (<build>/python).
"""

import argparse
import collections
import importlib.util
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor

CATEGORIES = ("node", "pytorch-converted", "pytorch-operator", "simple")
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
RTOL, ATOL = 1e-3, 1e-7
UNSUPPORTED_EXIT = 5
# Lines the worker prints for the runner start with this; anything else on its stdout (a
# library's own output) is passed over.
MARK = "@@node_tests@@ "
# ral-compile's "error: node 'Conv_3' (Conv): unsupported attribute auto_pad=SAME_UPPER".
NODE_LINE = re.compile(r"node '(?P<name>.*?)' \((?P<op>[^()]*)\):")
# ONNX element types torch has (TensorProto enum values -> torch dtype names).
TORCH_DTYPES = {1: "float32", 2: "uint8", 3: "int8", 5: "int16", 6: "int32", 7: "int64",
                9: "bool", 10: "float16", 11: "float64", 14: "complex64", 15: "complex128",
                16: "bfloat16"}
ONNX_TYPE_NAMES = {0: "undefined", 4: "uint16", 8: "string", 12: "uint32", 13: "uint64"}
# Element types torch lacks that ral-run reads and writes as .npy: such tests run through it.
RAL_RUN_TYPES = {4, 12, 13}
UINT16, BFLOAT16 = 4, 16


class Test:
    """One test directory and what became of it."""

    def __init__(self, category, name, path):
        self.category, self.name, self.path = category, name, path
        self.status = None  # "passed", "failed" or "unsupported"
        self.error = ""
        self.ops = []  # unsupported op types
        self.module = None  # the compiled .ralm
        self.types = ([], [])  # ONNX element types of the module's inputs and outputs
        self.known_gap = None  # the reason, when listed in known_gaps.txt

    @property
    def id(self):
        return f"{self.category}/{self.name}"

    def as_json(self):
        return {"category": self.category, "name": self.name, "status": self.status,
                "error": self.error, "unsupported_ops": self.ops, "known_gap": self.known_gap}


# The runner.


def discover(data, categories, pattern):
    tests = []
    for category in categories:
        base = os.path.join(data, category)
        if not os.path.isdir(base):
            sys.exit(f"node_tests: no test category directory {base}")
        for name in sorted(os.listdir(base)):
            path = os.path.join(base, name)
            if not os.path.isfile(os.path.join(path, "model.onnx")):
                continue
            if pattern and not (pattern.search(name) or pattern.search(f"{category}/{name}")):
                continue
            tests.append(Test(category, name, path))
    return tests


def read_known_gaps(path):
    """{test name or category/name: reason} from known_gaps.txt."""
    gaps = {}
    if not os.path.exists(path):
        return gaps
    with open(path) as f:
        for number, line in enumerate(f, 1):
            text, _, reason = line.partition("#")
            text = text.strip()
            if not text:
                continue
            if len(text.split()) != 1:
                sys.exit(f"{path}:{number}: expected `test_name  # reason`, got {line.strip()!r}")
            gaps[text] = reason.strip() or "(no reason given)"
    return gaps


def type_problem(model):
    """Why the model's inputs or outputs cannot be torch tensors and the op type to count it
    under, or (None, None, (the ONNX element types of the inputs that are not initializers, those
    of the outputs))."""
    initializers = {t.name for t in model.graph.initializer}
    elem_types = {"input": [], "output": []}
    for kind, values in (("input", [v for v in model.graph.input if v.name not in initializers]),
                         ("output", model.graph.output)):
        for v in values:
            which = v.type.WhichOneof("value")
            if which != "tensor_type":
                what = (which or "untyped").replace("_type", "")
                return f"{kind} '{v.name}' is a {what}, not a tensor", f"<{what} {kind}>", []
            elem = v.type.tensor_type.elem_type
            if elem not in TORCH_DTYPES and elem not in RAL_RUN_TYPES:
                type_name = ONNX_TYPE_NAMES.get(elem, str(elem))
                return (f"{kind} '{v.name}' has element type {type_name}, which torch lacks",
                        f"<{type_name} {kind}>", [])
            elem_types[kind].append(elem)
    return None, None, (elem_types["input"], elem_types["output"])


def compile_test(test, ral_compile, work, timeout):
    """Classifies the test by its types and ral-compile's exit code (phase 1)."""
    import onnx

    try:
        model = onnx.load(os.path.join(test.path, "model.onnx"))
    except Exception as e:  # noqa: BLE001  (a protobuf error of any kind)
        test.status, test.error = "failed", f"onnx cannot read model.onnx: {e}"
        return
    problem, op, elem_types = type_problem(model)
    if problem:
        test.status, test.error, test.ops = "unsupported", problem, [op]
        return
    test.types = elem_types
    out_dir = os.path.join(work, test.category, test.name)
    os.makedirs(out_dir, exist_ok=True)
    module = os.path.join(out_dir, "model.ralm")
    command = [ral_compile, os.path.join(test.path, "model.onnx"), "-o", module, "--device=cpu"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, errors="replace",
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        test.status, test.error = "failed", f"ral-compile did not finish in {timeout} s"
        return
    diagnostics = (done.stderr + done.stdout).strip()
    if done.returncode == UNSUPPORTED_EXIT:
        ops = []
        for line in diagnostics.splitlines():
            m = NODE_LINE.search(line)
            if m and "unsupported" in line and m.group("op") not in ops:
                ops.append(m.group("op"))
        test.status, test.ops = "unsupported", ops or [unnamed_reason(diagnostics)]
        test.error = diagnostics
    elif done.returncode == 0:
        test.module = module
    else:
        what = (f"killed by signal {-done.returncode}" if done.returncode < 0
                else f"exit code {done.returncode}")
        test.status = "failed"
        test.error = f"ral-compile failed ({what}):\n{diagnostics}"


def unnamed_reason(diagnostics):
    """A label for an exit code 5 that names no node ('unsupported opset 6 ...'): its first
    'unsupported' line without the file's path and with quoted names elided."""
    for line in diagnostics.splitlines():
        if "unsupported" in line:
            line = re.sub(r"^.*?\.onnx: ", "", line)
            line = re.sub(r"'[^']*'", "'…'", line)
            return f"<{line.split(' (')[0][:70]}>"
    return "<no reason given>"


def run_chunk(chunk, timeout):
    """Runs the compiled tests of `chunk` in worker processes (phase 2); a worker that crashes or
    hangs fails the test it was running, and a fresh one takes the rest."""
    by_name = {t.id: t for t in chunk}
    pending = list(chunk)
    while pending:
        items = [{"id": t.id, "dir": t.path, "module": t.module, "types": t.types}
                 for t in pending]
        with tempfile.TemporaryFile(mode="w+", errors="replace") as stderr:
            proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker"],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
                                    text=True, errors="replace")
            lines = queue.Queue()
            reader = threading.Thread(target=_read_lines, args=(proc.stdout, lines), daemon=True)
            reader.start()
            proc.stdin.write(json.dumps(items))
            proc.stdin.close()
            current, finished = None, 0
            while True:
                try:
                    line = lines.get(timeout=timeout)
                except queue.Empty:
                    proc.kill()
                    proc.wait()
                    victim = by_name[current] if current else pending[finished]
                    victim.status = "failed"
                    victim.error = f"no result after {timeout} s (hung); the worker was killed"
                    break
                if line is None:
                    rc = proc.wait()
                    if current is None and finished == len(pending):
                        break
                    stderr.seek(0)
                    tail = "\n".join(stderr.read().strip().splitlines()[-8:])
                    how = (f"killed by {signal.Signals(-rc).name}" if rc < 0
                           else f"exited with code {rc}")
                    if current is None:
                        # Died before starting a test (cannot import ral_torch...): every test
                        # left would die the same way.
                        for t in pending[finished:]:
                            t.status, t.error = "failed", f"the test worker {how}:\n{tail}"
                        return
                    t = by_name[current]
                    t.status, t.error = "failed", f"crashed the test worker ({how}):\n{tail}"
                    break
                message = json.loads(line)
                if message["event"] == "start":
                    current = message["id"]
                else:
                    t = by_name[message["id"]]
                    t.status, t.error = message["status"], message["error"]
                    current = None
                    finished += 1
            reader.join(timeout=5)
        pending = [t for t in pending if t.status is None]


def _read_lines(stream, lines):
    for line in stream:
        if line.startswith(MARK):
            lines.put(line[len(MARK):])
    lines.put(None)


def report(tests, known_gaps, out):
    print("\nONNX backend tests through ral-compile and ral_torch", file=out)
    groups = collections.OrderedDict()
    for t in tests:
        groups.setdefault(t.category, []).append(t)
    groups["total"] = tests
    for category, group in groups.items():
        counts = collections.Counter(t.status for t in group)
        supported = counts["passed"] + counts["failed"]
        known = sum(1 for t in group if t.status == "failed" and t.known_gap)
        gaps = f" ({known} known gaps)" if known else ""
        print(f"  {category:18s} supported: {supported:4d}, passed: {counts['passed']:4d}, "
              f"failed: {counts['failed']:4d}{gaps}, unsupported: {counts['unsupported']:4d}",
              file=out)

    failed = [t for t in tests if t.status == "failed" and not t.known_gap]
    known = [t for t in tests if t.status == "failed" and t.known_gap]
    fixed = [t for t in tests if t.status == "passed" and t.known_gap]
    if failed:
        print(f"\nFAILED ({len(failed)}):", file=out)
        for t in failed:
            print(f"  {t.id}: {_first_lines(t.error)}", file=out)
    if known:
        print(f"\nknown gaps that still fail ({len(known)}):", file=out)
        for t in known:
            print(f"  {t.id} ({t.known_gap}): {_first_lines(t.error, 1)}", file=out)
    if fixed:
        print(f"\nnow pass, remove from known_gaps.txt ({len(fixed)}):", file=out)
        for t in fixed:
            print(f"  {t.id}", file=out)
    ops = collections.Counter(op for t in tests if t.status == "unsupported" for op in t.ops)
    if ops:
        print(f"\nunsupported op types ({len(ops)}), by number of tests naming them:", file=out)
        for op, n in ops.most_common(40):
            print(f"  {n:4d}  {op}", file=out)
        if len(ops) > 40:
            print(f"  ... and {len(ops) - 40} more (--json lists every test)", file=out)
    return failed


def _first_lines(text, n=3):
    lines = [line.rstrip() for line in (text or "").strip().splitlines() if line.strip()]
    shown = "\n      ".join(lines[:n])
    return shown + (" ..." if len(lines) > n else "")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ral-compile", default=os.path.join(ROOT, "build", "compiler_passes",
                                                         "ral-compile"))
    p.add_argument("--ral-run", help="ral-run, for the tests with uint16/32/64 tensors (default: "
                   "plugins/standalone/ral-run of ral-compile's build)")
    p.add_argument("--data", default="/usr/share/libonnx-testdata/data")
    p.add_argument("--category", action="append", choices=CATEGORIES,
                   help="a category to run (repeatable; default: all four)")
    p.add_argument("--filter", help="run the tests whose name or category/name matches REGEX")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--json", help="write every test's result to this file")
    p.add_argument("--known-gaps", default=os.path.join(HERE, "known_gaps.txt"))
    p.add_argument("--compile-timeout", type=int, default=300, help="seconds per ral-compile")
    p.add_argument("--run-timeout", type=int, default=180, help="seconds per test's execution")
    p.add_argument("--keep", action="store_true", help="keep the compiled modules (printed)")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        return worker()

    if importlib.util.find_spec("onnx") is None:  # compile_test's: fail here, once
        sys.exit(f"node_tests: {sys.executable} cannot import onnx (Debian: python3-onnx)")
    if not os.access(args.ral_compile, os.X_OK):
        sys.exit(f"node_tests: ral-compile not found at {args.ral_compile} (--ral-compile)")
    # The workers find ral-run here (inherited by their processes).
    os.environ["RAL_NODE_TESTS_RAL_RUN"] = os.path.abspath(args.ral_run or os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(args.ral_compile))), "plugins",
        "standalone", "ral-run"))
    pattern = re.compile(args.filter) if args.filter else None
    tests = discover(args.data, args.category or CATEGORIES, pattern)
    if not tests:
        sys.exit("node_tests: no test matches")
    known_gaps = read_known_gaps(args.known_gaps)
    for t in tests:
        t.known_gap = known_gaps.get(t.id) or known_gaps.get(t.name)
    names = {t.name for t in tests} | {t.id for t in tests}
    if not args.filter and not args.category:
        for entry in known_gaps:
            if entry not in names:
                print(f"node_tests: {args.known_gaps} lists {entry}, which is no test",
                      file=sys.stderr)
    jobs = max(1, args.jobs)

    work = tempfile.mkdtemp(prefix="ral-onnx-node-tests-")
    try:
        print(f"node_tests: compiling {len(tests)} models with {jobs} jobs ({args.ral_compile})",
              flush=True)
        with ThreadPoolExecutor(jobs) as pool:
            # Threads suffice: each compile is a process of its own.
            list(pool.map(lambda t: compile_test(t, args.ral_compile, work,
                                                 args.compile_timeout), tests))
        runnable = [t for t in tests if t.status is None]
        print(f"node_tests: running {len(runnable)} compiled models", flush=True)
        chunks = [runnable[i::jobs * 4] for i in range(jobs * 4)]
        with ThreadPoolExecutor(jobs) as pool:
            list(pool.map(lambda c: run_chunk(c, args.run_timeout), [c for c in chunks if c]))
        failed = report(tests, known_gaps, sys.stdout)
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"tests": [t.as_json() for t in tests]}, f, indent=1)
    finally:
        if args.keep:
            print(f"node_tests: compiled modules kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


# The worker: runs compiled modules on the test data (imports torch; stays out of the runner).


def worker():
    items = json.load(sys.stdin)
    import numpy as np
    import onnx
    from onnx import numpy_helper
    import torch
    import ral_torch

    dtypes = {code: getattr(torch, name) for code, name in TORCH_DTYPES.items()}

    def emit(**message):
        sys.stdout.write(MARK + json.dumps(message) + "\n")
        sys.stdout.flush()

    def read(path, elem):
        t = onnx.TensorProto()
        with open(path, "rb") as f:
            t.ParseFromString(f.read())
        array = np.array(numpy_helper.to_array(t))  # a writable copy
        if t.data_type == UINT16 and elem == BFLOAT16:
            # ONNX's test data stores bfloat16 tensors as their bits, in uint16 tensors.
            return torch.from_numpy(array.astype(np.int16)).view(torch.bfloat16)
        if t.data_type not in dtypes:
            raise TypeError(f"{os.path.basename(path)} has ONNX element type {t.data_type}, "
                            f"which torch lacks")
        dtype = dtypes[t.data_type]
        if dtype == torch.bfloat16:  # numpy has no bfloat16: onnx widens it to float32
            return torch.from_numpy(array.astype(np.float32)).to(torch.bfloat16)
        return torch.from_numpy(array).to(dtype)

    def numbered(directory, prefix):
        found = [f for f in os.listdir(directory) if re.fullmatch(prefix + r"_\d+\.pb", f)]
        found.sort(key=lambda f: int(f[len(prefix) + 1:-3]))
        return [os.path.join(directory, f) for f in found]

    def typed(types, i):
        return types[i] if i < len(types) else None

    def compare(i, got, want):
        if got.dtype != want.dtype:
            return f"output {i}: dtype {got.dtype}, expected {want.dtype}"
        if tuple(got.shape) != tuple(want.shape):
            return f"output {i}: shape {tuple(got.shape)}, expected {tuple(want.shape)}"
        if want.dtype == torch.bfloat16:
            # The reference holds the bits ONNX computed (by truncation in older test data):
            # compared exactly, as ONNX's runner compares their uint16 arrays.
            got, want = got.view(torch.int16), want.view(torch.int16)
        g, w = got.detach().cpu().numpy(), want.numpy()
        if want.is_floating_point() or want.is_complex():
            try:
                np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL)
            except AssertionError as e:
                detail = " ".join(x.strip() for x in str(e).splitlines()[2:6] if x.strip())
                return f"output {i}: values differ (rtol={RTOL}, atol={ATOL}): {detail}"
        elif not np.array_equal(g, w):
            wrong = int((g != w).sum())
            return f"output {i}: {wrong} of {w.size} elements differ (exact comparison)"
        return None

    def run_cli(item):
        # uint16/32/64 tensors: ral-run with .npy files, compared as numpy arrays.
        ral_run = os.environ.get("RAL_NODE_TESTS_RAL_RUN", "")
        if not os.access(ral_run, os.X_OK):
            return "failed", f"uint16/32/64 tensors need ral-run, not found at '{ral_run}'"
        sets = sorted((d for d in os.listdir(item["dir"]) if d.startswith("test_data_set_")),
                      key=lambda d: int(d.rsplit("_", 1)[1]))
        if not sets:
            return "failed", "the test has no test_data_set_N"

        def array(path):
            t = onnx.TensorProto()
            with open(path, "rb") as f:
                t.ParseFromString(f.read())
            return np.array(numpy_helper.to_array(t))

        for data_set in sets:
            directory = os.path.join(item["dir"], data_set)
            inputs = [array(f) for f in numbered(directory, "input")]
            expected = [array(f) for f in numbered(directory, "output")]
            with tempfile.TemporaryDirectory() as tmp:
                flags = []
                for i, a in enumerate(inputs):
                    np.save(os.path.join(tmp, f"in{i}.npy"), a)
                    flags.append(f"--input=@{os.path.join(tmp, f'in{i}.npy')}")
                outs = [os.path.join(tmp, f"out{i}.npy") for i in range(len(expected))]
                flags += [f"--output=@{o}" for o in outs]
                done = subprocess.run([ral_run, item["module"], *flags], capture_output=True,
                                      text=True)
                if done.returncode != 0:
                    return "failed", (f"{data_set}: ral-run exited with {done.returncode}: "
                                      f"{done.stderr.strip()[-300:]}")
                for i, (o, want) in enumerate(zip(outs, expected)):
                    got = np.load(o)
                    if got.dtype != want.dtype:
                        return "failed", f"{data_set}: output {i}: dtype {got.dtype}, expected {want.dtype}"
                    if got.shape != want.shape:
                        return "failed", f"{data_set}: output {i}: shape {got.shape}, expected {want.shape}"
                    if np.issubdtype(want.dtype, np.floating):
                        if not np.allclose(got, want, rtol=RTOL, atol=ATOL, equal_nan=True):
                            return "failed", f"{data_set}: output {i}: values differ"
                    elif not np.array_equal(got, want):
                        return "failed", (f"{data_set}: output {i}: {int((got != want).sum())} "
                                          f"of {want.size} elements differ (exact comparison)")
        return "passed", ""

    def run(item):
        if any(e in RAL_RUN_TYPES for e in item["types"][0] + item["types"][1]):
            return run_cli(item)
        module = ral_torch.load(item["module"])
        n_in = len(module.input_signature())
        sets = sorted((d for d in os.listdir(item["dir"]) if d.startswith("test_data_set_")),
                      key=lambda d: int(d.rsplit("_", 1)[1]))
        if not sets:
            return "failed", "the test has no test_data_set_N"
        for data_set in sets:
            directory = os.path.join(item["dir"], data_set)
            input_types, output_types = item["types"]
            inputs = [read(f, typed(input_types, i))
                      for i, f in enumerate(numbered(directory, "input"))]
            expected = [read(f, typed(output_types, i))
                        for i, f in enumerate(numbered(directory, "output"))]
            if len(inputs) != n_in:
                return "failed", (f"the module takes {n_in} inputs "
                                  f"({', '.join(module.input_signature())}), {data_set} has "
                                  f"{len(inputs)}")
            with torch.no_grad():
                out = module(*inputs)
            outputs = (out,) if isinstance(out, torch.Tensor) else tuple(out)
            if len(outputs) != len(expected):
                return "failed", (f"{data_set}: {len(outputs)} outputs, expected "
                                  f"{len(expected)}")
            for i, (got, want) in enumerate(zip(outputs, expected)):
                problem = compare(i, got, want)
                if problem:
                    return "failed", f"{data_set}: {problem}"
        return "passed", ""

    for item in items:
        emit(event="start", id=item["id"])
        try:
            status, error = run(item)
        except Exception as e:  # noqa: BLE001  (a test's failure, whatever it raises)
            status, error = "failed", f"{type(e).__name__}: {e}"
        emit(event="done", id=item["id"], status=status, error=error)
    return 0


if __name__ == "__main__":
    sys.exit(main())
