#!/usr/bin/python3
"""Triage and reduction of the ONNX importer fuzzers' findings.

    onnx_reduce.py triage <fuzzer binary> <input>...   one line per distinct failure: its
                                                       signature, how many inputs, the smallest
    onnx_reduce.py reduce <fuzzer binary> <input> <output>
        Removes nodes, outputs, inputs, initializers, attributes and names from the model while the
        fuzzer still fails the same way (same sanitizer report or broken rule at the same
        importer line), writes the result and prints it. libFuzzer's -minimize_crash works on bytes,
        which rarely shrinks a protobuf; this works on the model.

The signature is the failure's kind (a sanitizer's SUMMARY, "malloc limit", "timeout", the broken
importer contract) and the first stack frame in compiler_passes/onnx/.
"""
import collections
import os
import re
import subprocess
import sys
import tempfile

import onnx

ENV = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=1",
           UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
FRAME = re.compile(r"#\d+ 0x[0-9a-f]+ in (.+?) \S*compiler_passes/onnx/([\w./]+:\d+)")


def signature(binary, path):
    """The failure of `binary` on the input at `path`; None when it passes."""
    try:
        run = subprocess.run([binary, path, "-timeout=10", "-rss_limit_mb=2048",
                              "-malloc_limit_mb=2048"], env=ENV, capture_output=True, text=True,
                             errors="replace", timeout=120)
    except subprocess.TimeoutExpired:
        return "hang (no answer in 120 s)"
    if run.returncode == 0:
        return None
    out = run.stderr + run.stdout
    kind = "crash"
    if m := re.search(r"ONNX importer contract broken: (.*)", out):
        kind = "contract: " + m.group(1)
        # Which op failed to verify (the importer's message names it, or MLIR's diagnostic),
        # numbers left out.
        d = (re.search(r"please report\): node '.*?' (.*)", out) or
             re.search(r"diagnostic: (.*?) \(at ", out))
        if d:
            kind += " [" + re.sub(r"\d+", "N", d.group(1))[:120] + "]"
    elif m := re.search(r"terminate called after throwing an instance of '(.*)'\n\s*what\(\): *(.*)", out):
        kind = f"uncaught {m.group(1)} ({m.group(2)})"
    elif "out-of-memory (malloc(" in out:
        kind = "malloc limit"
    elif m := re.search(r"Assertion `(.*)' failed", out):
        kind = "assertion " + m.group(1)[:120]
    elif "ERROR: libFuzzer: timeout" in out:
        kind = "timeout"
    elif "ERROR: libFuzzer: out-of-memory (used" in out:
        kind = "rss limit"
    elif m := re.search(r"SUMMARY: (\w+Sanitizer: [\w-]+)", out):
        kind = m.group(1)
    elif "LLVM ERROR" in out:
        kind = "LLVM ERROR: " + re.search(r"LLVM ERROR: (.*)", out).group(1)[:100]
    frame = FRAME.search(out)
    function = re.sub(r"\(.*", "", frame.group(1).replace("(anonymous namespace)::", "")) if frame else ""
    where = f"{frame.group(2)} ({function.replace('mlir::disc_ral::onnx::', '')})" if frame else "-"
    return f"{kind} at {where}"


def triage(binary, paths):
    groups = collections.defaultdict(list)
    for p in paths:
        groups[signature(binary, p)].append(p)
    for sig, files in sorted(groups.items(), key=lambda kv: str(kv[0])):
        smallest = min(files, key=os.path.getsize)
        print(f"{len(files):5d}  {sig}\n       smallest: {smallest} ({os.path.getsize(smallest)} bytes)")


def candidates(m):
    """Smaller variants of model `m`, one change each."""
    g = m.graph

    def variant(edit):
        c = onnx.ModelProto()
        c.CopyFrom(m)
        edit(c)
        return c

    for field in ["node", "output", "initializer", "input", "value_info"]:
        for i in reversed(range(len(getattr(g, field)))):
            yield variant(lambda c, f=field, i=i: getattr(c.graph, f).__delitem__(i))
    for n in range(len(g.node)):
        for a in reversed(range(len(g.node[n].attribute))):
            yield variant(lambda c, n=n, a=a: c.graph.node[n].attribute.__delitem__(a))
        if g.node[n].input:
            yield variant(lambda c, n=n: c.graph.node[n].input.pop())

    def short_names(c):
        names = {}
        def short(s):
            return "" if not s else names.setdefault(s, f"v{len(names)}")
        cg = c.graph
        for v in list(cg.input) + list(cg.output) + list(cg.value_info) + list(cg.initializer):
            v.name = short(v.name)
        for node in cg.node:
            node.input[:] = [short(s) for s in node.input]
            node.output[:] = [short(s) for s in node.output]
            node.ClearField("name")
            node.ClearField("doc_string")
        for field in ["doc_string", "producer_name", "producer_version"]:
            c.ClearField(field)
        cg.ClearField("name")
        cg.ClearField("doc_string")
    yield variant(short_names)


def reduce(binary, src, dst):
    with open(src, "rb") as f:
        data = f.read()
    want = signature(binary, src)
    print(f"signature: {want}")
    if want is None:
        sys.exit(f"{src} does not fail")
    try:
        model = onnx.load_from_string(data)
    except Exception:  # not a ModelProto: nothing to reduce structurally
        model = None
    with tempfile.TemporaryDirectory() as tmp:
        probe = os.path.join(tmp, "probe.onnx")
        changed = model is not None
        while changed:
            changed = False
            for c in candidates(model):
                blob = c.SerializeToString()
                if len(blob) >= len(data):
                    continue
                with open(probe, "wb") as f:
                    f.write(blob)
                if signature(binary, probe) == want:
                    model, data, changed = c, blob, True
                    break
    with open(dst, "wb") as f:
        f.write(data)
    print(f"{dst}: {len(data)} bytes")
    if model is not None:
        print(model)


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "triage":
        triage(sys.argv[2], sys.argv[3:])
    elif len(sys.argv) == 5 and sys.argv[1] == "reduce":
        reduce(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
