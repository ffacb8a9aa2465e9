#!/usr/bin/python3
"""ral-run --trace and RAL_TRACE: the Chrome/Perfetto trace-event JSON they write (include/ral/trace.h).

  trace_test.py <ral-run> <test module dir> <work dir>

Checks that the file parses; that it has one "execution" span per execution, named after the
module, and inside each the RAL calls the module makes, all on the execution's thread and nested
(no span crosses another's boundary), each kernel launch holding a span named after its kernel;
that a module compiled for Vulkan also has the device time of each kernel on the device queue's
named track, inside its execution, the queue's spans one after another; that RAL_TRACE records
the same without the flag; that a failing execution is still recorded and the file still
written; and that an unwritable path is a usage error before anything runs.
"""
import json
import os
import subprocess
import sys

RAL_RUN, MODULES, WORK = sys.argv[1:4]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(args, env=None):
    full_env = dict(os.environ)
    full_env.pop("RAL_TRACE", None)
    full_env.update(env or {})
    return subprocess.run([RAL_RUN] + args, capture_output=True, text=True, env=full_env)


def load(path):
    """The spans of a trace file; its metadata events (track names) are checked here."""
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    for e in events:
        if e["ph"] == "M":
            check(e["name"] == "thread_name" and e["args"].get("name"), f"a named track: {e}")
    return events


def within(inner, outer):
    # ts/dur are microseconds printed with 3 decimals: allow one rounding step.
    eps = 0.002
    return (inner["ts"] >= outer["ts"] - eps and
            inner["ts"] + inner["dur"] <= outer["ts"] + outer["dur"] + eps)


def check_trace(events, module, executions, calls, device_track=None):
    tracks = {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M"}
    events = [e for e in events if e["ph"] != "M"]
    execs = [e for e in events if e["cat"] == "execution"]
    check(len(execs) == executions, f"{len(execs)} execution spans, expected {executions}")
    check(all(e["name"] == module for e in execs), "every execution span is named after the module")
    ral = [e for e in events if e["cat"] == "ral"]
    for e in events:
        check(e["ph"] == "X" and e["dur"] >= 0 and isinstance(e["args"], dict),
              f"well-formed complete event: {e}")
    for call in ral:
        owners = [x for x in execs if x["tid"] == call["tid"] and within(call, x)]
        check(len(owners) == 1, f"{call['name']} at {call['ts']} lies inside one execution")
        check("api" in call["args"] and call["args"]["api"].startswith(call["name"] + "___"),
              f"{call['name']} names its API: {call['args']}")
    # Spans of one thread nest: any two are disjoint or one holds the other.
    by_tid = {}
    for e in events:
        by_tid.setdefault(e["tid"], []).append(e)
    for spans in by_tid.values():
        for a in spans:
            for b in spans:
                if a is b:
                    continue
                disjoint = (a["ts"] + a["dur"] <= b["ts"] + 0.002 or
                            b["ts"] + b["dur"] <= a["ts"] + 0.002)
                check(disjoint or within(a, b) or within(b, a),
                      f"{a['name']} and {b['name']} overlap without nesting")
    names = {e["name"] for e in ral}
    for call in calls:
        check(call in names, f"{call} is recorded")
    # Each kernel a launch ran: a "kernel" span named after its entry, inside the launch's span.
    kernels = [e for e in events if e["cat"] == "kernel"]
    launches = [e for e in ral if e["name"] == "ral_kernel_launch"]
    check(len(kernels) == len(launches), f"{len(kernels)} kernel spans for {len(launches)} launches")
    for k in kernels:
        check(k["name"].startswith("ral_kernel_"), f"kernel span named after its entry: {k['name']}")
        check(any(l["tid"] == k["tid"] and within(k, l) for l in launches),
              f"kernel span {k['name']} lies inside a ral_kernel_launch span")
    # The device time of each kernel (a device that measures it): on the queue's track, named
    # after the kernel, inside an execution (run() waits for the device), one after another (the
    # nesting check above: a queue's spans are disjoint).
    device = [e for e in events if e["cat"] == "device"]
    if device_track is not None:
        on_queue = [e for e in device if device_track in tracks.get(e["tid"], "")]
        check(len(on_queue) == len(launches) and len(device) == len(on_queue),
              f"{len(on_queue)} kernel spans on a '{device_track}' track for {len(launches)} "
              f"launches ({len(device)} device spans): tracks {tracks}")
        for d in on_queue:
            check(d["name"].startswith("ral_kernel_"), f"device span named after its kernel: {d}")
            check("grid" in d["args"] and "executable" in d["args"], f"device span args: {d}")
            check(any(within(d, x) for x in execs), f"device span {d} lies inside an execution")
    for x in execs:
        inside = [c["name"] for c in ral if c["tid"] == x["tid"] and within(c, x)]
        check(inside[:1] == ["ral_recv_input"] or "ral_recv_input" in inside,
              "each execution receives its input")


# A packed module (every build has it) and, where the compiler is built, a compiled one whose
# loops run as ral_kernel_launch.
cases = [(os.path.join(MODULES, "add_r1.ralm"), ["--input=3xf32=1,2,3", "--input=3xf32=4,5,6"],
          "add_r1", ["ral_recv_input", "ral_alloc", "ral_send_output"], None)]
softmax_calls = ["ral_recv_input", "ral_alloc", "ral_kernel_launch", "ral_send_output"]
softmax = os.path.join(MODULES, "compiled_softmax.ralm")
if os.path.exists(softmax):
    cases.append((softmax, ["--input=2x3xf32=1,2,3,4,5,6"], "compiled_softmax", softmax_calls,
                  None))
# On Vulkan (Mesa's software device here; timestamps calibrated to the host's clock), where a
# Vulkan device is present.
softmax_vulkan = os.path.join(MODULES, "compiled_softmax_vulkan.ralm")
devices = run(["--list-devices"]).stdout
if os.path.exists(softmax_vulkan) and "vulkan:0" in devices:
    cases.append((softmax_vulkan, ["--input=2x3xf32=1,2,3,4,5,6"], "compiled_softmax_vulkan",
                  softmax_calls, "vulkan:0 queue"))

for module, inputs, name, calls, device_track in cases:
    # --trace: one execution, then with --benchmark (1 + warm-up + 3 timed executions).
    path = os.path.join(WORK, f"trace_flag_{name}.json")
    r = run([module] + inputs + [f"--trace={path}"])
    check(r.returncode == 0, f"ral-run --trace exits 0: {r.stderr}")
    if r.returncode == 0:
        check_trace(load(path), name, 1, calls, device_track)
    r = run([module] + inputs + ["--benchmark", "3", f"--trace={path}"])
    check(r.returncode == 0, f"ral-run --trace --benchmark exits 0: {r.stderr}")
    if r.returncode == 0:
        events = load(path)
        executions = len([e for e in events if e.get("cat") == "execution"])
        check_trace(events, name, executions, calls, device_track)
        check(executions >= 4, "every benchmark run is recorded")
        # One benchmark thread is the thread that warmed up (a second one would start a second
        # OpenMP team competing with the first).
        tids = {e["tid"] for e in events if e.get("cat") == "execution"}
        check(len(tids) == 1, f"--benchmark with one thread runs on one thread, got {tids}")

    # RAL_TRACE, no flag.
    path = os.path.join(WORK, f"trace_env_{name}.json")
    r = run([module] + inputs, env={"RAL_TRACE": path})
    check(r.returncode == 0, f"RAL_TRACE run exits 0: {r.stderr}")
    check(os.path.exists(path), "RAL_TRACE writes its file at exit")
    if os.path.exists(path):
        check_trace(load(path), name, 1, calls, device_track)

# A failing execution is recorded and the file written.
path = os.path.join(WORK, "trace_error.json")
r = run([os.path.join(MODULES, "error.ralm"), "--input=i64=-1", f"--trace={path}"])
check(r.returncode != 0, "the error module fails")
check(os.path.exists(path), "the trace is written after a failing execution")
if os.path.exists(path):
    events = load(path)
    check(len([e for e in events if e.get("cat") == "execution"]) == 1,
          "the failing execution is recorded")

# An unwritable path: a usage error, nothing run.
r = run([cases[0][0]] + cases[0][1] + ["--trace=/nonexistent-dir/t.json"])
check(r.returncode == 2 and "--trace" in r.stderr, f"unwritable --trace is exit 2: {r.stderr}")

print("trace_test:", "FAILED" if failures else "ok", f"({len(failures)} failures)")
sys.exit(1 if failures else 0)
