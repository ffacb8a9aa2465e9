#!/usr/bin/env python3
"""ral-compile (and ral-opt) on hostile and unusual input: each case must end in a clean error
naming the problem, or compile to a module that runs correctly; never a crash or a hang.

    hostile_compiler_test.py <case> --ral-compile X --ral-opt Y --ral-run Z --work-dir D

Inputs are generated here (deep nesting, long functions); see CASES at the end. Compile time is
never asserted on: a case that became slow again shows up as a CTest timeout.
"""
import os
import resource
import subprocess
import sys
import time

from case_runner import CaseRunner, run_case

# compiler_passes/transforms/limits.h
MAX_NESTING = 256

ENTRY_OPEN = """func.func @main(%a: memref<?xf32>) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %a, %c0 : memref<?xf32>
  %v0 = memref.load %a[%c0] : memref<?xf32>
  %t = arith.cmpf ogt, %v0, %zero : f32
  %m = memref.alloc(%n) : memref<?xf32>
  memref.copy %a, %m : memref<?xf32> to memref<?xf32>
"""
ENTRY_CLOSE = """  return %m : memref<?xf32>
}
"""
# The innermost body: m[0] += m[0]. Its load's [ is one level below the innermost region.
BODY = """%v = memref.load %m[%c0] : memref<?xf32>
%w = arith.addf %v, %v : f32
memref.store %w, %m[%c0] : memref<?xf32>
"""


def nested_regions(kind, depth):
    """scf.if or scf.for regions nested so that the text's bracket depth is exactly `depth`: the
    function's { and the innermost load's [ add two levels to the nest. Conditions and trip counts
    come from the input (a positive first element, one element), so nothing folds away."""
    levels = depth - 2
    opening = ("scf.if %t {\n" if kind == "if" else
               "scf.for %i{0} = %c0 to %n step %c1 {{\n")
    text = ENTRY_OPEN
    for i in range(levels):
        text += opening.format(i) if kind == "for" else opening
    text += BODY + "}\n" * levels + ENTRY_CLOSE
    return text


SIMPLE_MAIN = """func.func @main(%a: memref<4xf32>) -> memref<4xf32> {ATTRS}{
  %m = memref.alloc() : memref<4xf32>
  memref.copy %a, %m : memref<4xf32> to memref<4xf32>
  return %m : memref<4xf32>
}
"""


def simple_main(attrs=""):
    return SIMPLE_MAIN.replace("{ATTRS}", attrs + " " if attrs else "")


def deep_syntax(kind, depth):
    """Nesting of types, attributes and affine expressions around a trivial entry."""
    if kind == "tuple":
        return ("func.func private @t(" + "tuple<" * depth + "f32" + ">" * depth + ")\n" +
                simple_main())
    if kind == "array":
        return simple_main("attributes {x = " + "[" * depth + "1" + "]" * depth + "}")
    if kind == "dict":
        return simple_main("attributes {x = " + "{x = " * depth + "1" + "}" * depth + "}")
    if kind == "affine_sum":  # no brackets: d0 + d0 + ... recurses once per operator
        return ("#map = affine_map<(d0) -> (" + " + ".join(["d0"] * depth) + ")>\n" +
                simple_main("attributes {x = #map}"))
    if kind == "affine_neg":  # - - - d0
        return ("#map = affine_map<(d0) -> (" + "- " * depth + "d0)>\n" +
                simple_main("attributes {x = #map}"))
    raise ValueError(kind)


def straight_line(ops):
    """`ops` scalar ops in one basic block: x = x + a[1] and x = x * a[1], alternately. With
    a = [0.5, 1, ...] the result is exact in f32: 0.5 + ops / 2."""
    lines = ["func.func @main(%a: memref<4xf32>) -> memref<4xf32> {",
             "  %c0 = arith.constant 0 : index", "  %c1 = arith.constant 1 : index",
             "  %x0 = memref.load %a[%c0] : memref<4xf32>",
             "  %y = memref.load %a[%c1] : memref<4xf32>"]
    for i in range(ops):
        op = "addf" if i % 2 == 0 else "mulf"
        lines.append("  %%x%d = arith.%s %%x%d, %%y : f32" % (i + 1, op, i))
    lines += ["  %m = memref.alloc() : memref<4xf32>",
              "  memref.copy %a, %m : memref<4xf32> to memref<4xf32>",
              "  memref.store %%x%d, %%m[%%c0] : memref<4xf32>" % ops,
              "  return %m : memref<4xf32>", "}"]
    return "\n".join(lines) + "\n"


def many_buffers(ops):
    """Straight-line code with a RAL call every few ops (ops / 5 buffers allocated, written, read
    and freed): each call is followed by an error check, a block split in disc-ral-to-llvm.
    m[0] = a[0] + (ops / 5) * a[1]."""
    lines = ["func.func @main(%a: memref<4xf32>) -> memref<4xf32> {",
             "  %c0 = arith.constant 0 : index", "  %c1 = arith.constant 1 : index",
             "  %y = memref.load %a[%c1] : memref<4xf32>",
             "  %m = memref.alloc() : memref<4xf32>",
             "  memref.copy %a, %m : memref<4xf32> to memref<4xf32>"]
    for i in range(ops // 5):
        lines += ["  %%t%d = memref.alloc() : memref<4xf32>" % i,
                  "  %%l%d = memref.load %%m[%%c0] : memref<4xf32>" % i,
                  "  %%s%d = arith.addf %%l%d, %%y : f32" % (i, i),
                  "  memref.store %%s%d, %%t%d[%%c0] : memref<4xf32>" % (i, i),
                  "  %%r%d = memref.load %%t%d[%%c0] : memref<4xf32>" % (i, i),
                  "  memref.store %%r%d, %%m[%%c0] : memref<4xf32>" % i,
                  "  memref.dealloc %%t%d : memref<4xf32>" % i]
    lines += ["  return %m : memref<4xf32>", "}"]
    return "\n".join(lines) + "\n"


class Runner(CaseRunner):
    def run(self, argv, stack_kib=None, timeout=900):
        def limit_stack():
            if stack_kib:
                resource.setrlimit(resource.RLIMIT_STACK, (stack_kib * 1024, stack_kib * 1024))
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           errors="replace", timeout=timeout,
                           preexec_fn=limit_stack if stack_kib else None)
        return p.returncode, p.stdout + p.stderr

    def compile(self, source, *flags):
        module = source[:-len(".mlir")] + ".ralm"
        if os.path.exists(module):
            os.remove(module)
        rc, out = self.run([self.args.ral_compile, source, "-o", module] + list(flags))
        return rc, out, module

    def expect_compile_error(self, name, text, message, *flags):
        source = self.write(name, text)
        rc, out, module = self.compile(source, *flags)
        # 1: an error; a crash is a negative code (a signal) or 134/139 from a shell.
        self.check(rc == 1 and message in out and not os.path.exists(module),
                   "%s: ral-compile %s fails with '%s'" % (name, " ".join(flags), message), out)

    def expect_run(self, name, text, inputs, output, *flags):
        source = self.write(name, text)
        rc, out, module = self.compile(source, *flags)
        self.check(rc == 0, "%s: ral-compile %s succeeds" % (name, " ".join(flags)), out)
        if rc != 0:
            return
        rc, out = self.run([self.args.ral_run, module] + ["--input=" + i for i in inputs])
        self.check(rc == 0 and output in out, "%s: ral-run prints '%s'" % (name, output), out)

    def expect_run_error(self, name, text, inputs, message):
        source = self.write(name, text)
        rc, out, module = self.compile(source)
        self.check(rc == 0, "%s: ral-compile succeeds" % name, out)
        if rc != 0:
            return
        rc, out = self.run([self.args.ral_run, module] + ["--input=" + i for i in inputs])
        self.check(rc == 1 and message in out, "%s: ral-run fails with '%s'" % (name, message),
                   out)


def too_deep(depth):
    return "nesting depth %d exceeds the limit %d" % (depth, MAX_NESTING)


def case_nesting(r, kind):
    """scf.if / scf.for nests: at the limit they compile (at -O3, loops 254 deep included) and
    run; one level more, and 5000 levels (which overflowed the parser's stack), are refused."""
    r.expect_run(kind + "_at_limit.mlir", nested_regions(kind, MAX_NESTING), ["1xf32=1"],
                 "output 0: 1xf32=2")
    for depth in (MAX_NESTING + 1, 5000):
        name = "%s_%d.mlir" % (kind, depth)
        r.expect_compile_error(name, nested_regions(kind, depth), too_deep(depth))
        rc, out = r.run([r.args.ral_opt, r.path(name)])
        r.check(rc == 1 and too_deep(depth) in out, name + ": ral-opt fails too", out)


def case_nesting_stack(r):
    """At the limit, the whole pipeline needs well under the main thread's 8 MiB of stack: it
    passes in 2 MiB (ral-opt runs it on the main thread; ral-compile on a 256 MiB one)."""
    for kind in ("if", "for"):
        name = r.write(kind + "_stack.mlir", nested_regions(kind, MAX_NESTING))
        rc, out = r.run([r.args.ral_opt, name, "--ral-compile-pipeline", "-o", os.devnull],
                        stack_kib=2048)
        r.check(rc == 0, "%s at depth %d: ral-opt --ral-compile-pipeline in a 2 MiB stack" %
                (kind, MAX_NESTING), out)
    for kind in ("tuple", "array", "dict", "affine_neg"):
        name = r.write(kind + "_stack.mlir", deep_syntax(kind, MAX_NESTING - 4))
        rc, out = r.run([r.args.ral_opt, name, "-o", os.devnull], stack_kib=2048)
        r.check(rc == 0, "%s at depth %d: ral-opt parses it in a 2 MiB stack" %
                (kind, MAX_NESTING - 4), out)


def case_nesting_syntax(r):
    """Types, attributes and affine expressions nest too: 5000 levels are refused before the
    parser recurses (the affine ones have no brackets: each operator is a level)."""
    for kind in ("tuple", "array", "dict", "affine_sum", "affine_neg"):
        text = deep_syntax(kind, 5000)
        r.expect_compile_error(kind + "_5000.mlir", text, "exceeds the limit %d" % MAX_NESTING)
        rc, out = r.run([r.args.ral_opt, r.path(kind + "_5000.mlir")])
        r.check(rc == 1 and "exceeds the limit" in out, kind + "_5000.mlir: ral-opt fails too",
                out)
    # Within the limit, the same kinds compile (the types and attributes are unused).
    for kind in ("array", "dict", "affine_sum", "affine_neg"):
        r.expect_run(kind + "_ok.mlir", deep_syntax(kind, 100), ["4xf32=1,2,3,4"],
                     "output 0: 4xf32=1,2,3,4")


def case_long_function(r):
    """20k ops in one basic block compile at -O3 (a 100k-op one took 13 minutes before: LLVM's
    two-address pass is quadratic in a function's size) and give the exact result."""
    r.expect_run("straight_20k.mlir", straight_line(20000), ["4xf32=0.5,1,3,4"],
                 "output 0: 4xf32=10000.5,1,3,4", "-O3")
    r.expect_run("straight_20k_O0.mlir", straight_line(20000), ["4xf32=0.5,1,3,4"],
                 "output 0: 4xf32=10000.5,1,3,4", "-O0")
    # 4000 RAL calls, each followed by an error check (quadratic block splitting before).
    r.expect_run("buffers_20k.mlir", many_buffers(20000), ["4xf32=0.5,1,3,4"],
                 "output 0: 4xf32=4000.5,1,3,4", "-O3")


def case_sizes(r):
    """A static size that wraps is a compile-time error naming the op and the type; a dynamic one
    fails the execution with an error naming the allocation (it used to run on a tiny buffer)."""
    r.expect_compile_error("static_overflow.mlir", """func.func @main(%a: memref<4xf32>) -> memref<4xf32> {
  %0 = memref.alloc() : memref<4611686018427387904x4xf32>
  return %a : memref<4xf32>
}
""", "'memref.alloc' op result #0 has type 'memref<4611686018427387904x4xf32>', which has more "
         "elements than int64 can count")
    dynamic = """func.func @main(%a: memref<4xf32>, %s: memref<1xi64>) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %n = memref.load %s[%c0] : memref<1xi64>
  %d = arith.index_cast %n : i64 to index
  %t = memref.alloc(%d) : memref<4x?xf32>
  %v = memref.load %a[%c0] : memref<4xf32>
  memref.store %v, %t[%c0, %c0] : memref<4x?xf32>
  %m = memref.alloc() : memref<4xf32>
  memref.copy %a, %m : memref<4xf32> to memref<4xf32>
  memref.dealloc %t : memref<4x?xf32>
  return %m : memref<4xf32>
}
"""
    message = "memref.alloc of memref<4x?xf32> at line 5, column 8: a size is negative"
    r.expect_run("dynamic_ok.mlir", dynamic, ["4xf32=1,2,3,4", "1xi64=3"], "output 0: 4xf32=1,2,3,4")
    r.expect_run_error("dynamic_wraps.mlir", dynamic, ["4xf32=1,2,3,4", "1xi64=4611686018427387904"],
                       message)
    r.expect_run_error("dynamic_negative.mlir", dynamic, ["4xf32=1,2,3,4", "1xi64=-2"], message)


def case_unusual(r):
    """Empty input, no entry, entries RAL cannot bind, recursion, huge constants: errors naming
    the problem. 0-d memrefs work."""
    r.expect_compile_error("empty.mlir", "", "no entry function @main in the module")
    r.expect_compile_error("empty_module.mlir", "module {}\n", "no entry function @main")
    r.expect_compile_error("no_entry.mlir", simple_main().replace("@main", "@other"),
                           "no entry function @main")
    r.expect_compile_error("declared_entry.mlir", "func.func private @main(memref<4xf32>)\n",
                           "entry function @main has no body")
    for i, t in enumerate(("f32", "tensor<*xf32>", "memref<4xcomplex<f32>>", "memref<4xf32, 1>",
                           "memref<1x1x1x1x1x1x1x1x1xf32>", "!llvm.ptr")):
        r.expect_compile_error("entry_%d.mlir" % i,
                               "func.func @main(%%a: %s) { return }\n" % t,
                               "argument #0 of entry function @main has type")
    r.expect_run("zero_d.mlir", """func.func @main(%a: memref<f32>) -> memref<f32> {
  %v = memref.load %a[] : memref<f32>
  %w = arith.addf %v, %v : f32
  %m = memref.alloc() : memref<f32>
  memref.store %w, %m[] : memref<f32>
  return %m : memref<f32>
}
""", ["f32=3"], "output 0: f32=6")
    r.expect_compile_error("recursion.mlir", """func.func @f(%a: memref<4xf32>) {
  func.call @f(%a) : (memref<4xf32>) -> ()
  return
}
func.func @main(%a: memref<4xf32>) -> memref<4xf32> {
  func.call @f(%a) : (memref<4xf32>) -> ()
  return %a : memref<4xf32>
}
""", "@f calls itself: recursion is not supported")
    # 3 GiB of splats: LLVM would materialize them; the module file holds 2 GiB.
    r.expect_compile_error("huge_constants.mlir", """memref.global "private" constant @g : memref<805306368xf32> = dense<1.0>
""" + simple_main(), "brings the module's constants to 3221225472 bytes")
    r.expect_compile_error("huge_stack.mlir", """func.func @main(%a: memref<4xf32>) -> memref<4xf32> {
  %s = memref.alloca() : memref<1048576xf32>
  return %a : memref<4xf32>
}
""", "'memref.alloca' op allocates 'memref<1048576xf32>' on the stack, more than 65536 bytes")


def case_options(r):
    """ral-compile's own command line: option values LLVM aborted on and integers that wrapped
    are usage errors (exit 2, one line); --max-memory bounds the compile, and also limits the
    address space of the process (RLIMIT_AS). The same checks in process: in_process_test.py."""
    source = r.write("options.mlir", simple_main())
    module = r.path("options.ralm")
    for flags, message in [
            (["-O=4294967299"], "-O='4294967299' is not a decimal integer"),
            (["-O5"], "-O must be 0..3, got 5"),
            (["--max-optimized-loop-depth=-1"], "--max-optimized-loop-depth='-1' is not"),
            (["--max-optimized-function-size=99999999999999999999"], "is not a decimal integer"),
            (["--constant-min-bytes=-7"], "--constant-min-bytes must be 0 or more"),
            (["--mcpu=bogus"], "--mcpu='bogus' is not a CPU that LLVM knows"),
            (["--mcpu=i686"], "--mcpu='i686' cannot run the 64-bit code"),
            (["--max-memory=lots"], "--max-memory: 'lots' is not a size in bytes"),
            (["--entry=a b"], "--entry='a b' is not a function name"),
            (["--inline-f32-math=exp,sqrt"], "unknown op 'sqrt'"),
            (["--no-such-flag"], "Unknown command line argument '--no-such-flag'"),
            # LLVM's own options: --stop-after=<unknown pass> was a report_fatal_error.
            (["--stop-after=no-such-pass"], "--stop-after is one of LLVM's own options"),
            (["--print-after-all"], "--print-after-all is one of LLVM's own options")]:
        if os.path.exists(module):
            os.remove(module)
        rc, out = r.run([r.args.ral_compile, source, "-o", module] + flags)
        lines = [l for l in out.splitlines() if l.strip()]
        r.check(rc == 2 and message in out and len(lines) == 1 and
                lines[0].startswith("ral-compile: error: ") and "LLVM ERROR" not in out and
                not os.path.exists(module),
                "ral-compile %s: exit 2, one line with '%s'" % (" ".join(flags), message), out)
    r.expect_compile_error("options_budget.mlir", simple_main(),
                           "the compile exceeded its memory limit of 1 MiB", "--max-memory=1K")
    r.expect_compile_error("options_splat.mlir", """memref.global "private" constant @w : memref<100000000xf32> = dense<2.0>
func.func @main(%a: memref<4xf32>) -> memref<4xf32> {
  %g = memref.get_global @w : memref<100000000xf32>
  %c0 = arith.constant 0 : index
  %v = memref.load %g[%c0] : memref<100000000xf32>
  %m = memref.alloc() : memref<4xf32>
  memref.copy %a, %m : memref<4xf32> to memref<4xf32>
  memref.store %v, %m[%c0] : memref<4xf32>
  return %m : memref<4xf32>
}
""", "the module's constants take 382 MiB, more than --max-memory (64 MiB); the largest is @w",
                           "--max-memory=64M")
    r.expect_run("options_ok.mlir", simple_main(), ["4xf32=1,2,3,4"], "output 0: 4xf32=1,2,3,4",
                 "--max-memory=2G", "--mcpu=x86-64-v2", "-O=2")
    # The hard bound: read from /proc while a long compile runs.
    source = r.write("options_long.mlir", straight_line(20000))
    p = subprocess.Popen([r.args.ral_compile, source, "-o", r.path("options_long.ralm"),
                          "--max-memory=2G"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    limit = None
    while p.poll() is None and limit is None:
        try:
            with open("/proc/%d/limits" % p.pid) as f:
                for line in f:
                    if line.startswith("Max address space"):
                        soft = line.split()[3]
                        if soft != "unlimited" and int(soft) > (2 << 30):
                            limit = int(soft)
        except (OSError, ValueError):
            pass
        time.sleep(0.01)
    err = p.communicate()[1].decode(errors="replace")
    r.check(p.returncode == 0, "a compile within --max-memory=2G succeeds", err)
    r.check(limit is not None and limit < (8 << 30),
            "--max-memory=2G limits ral-compile's address space (%s bytes)" % limit)


CASES = {
    "nesting_if": lambda r: case_nesting(r, "if"),
    "nesting_for": lambda r: case_nesting(r, "for"),
    "nesting_stack": case_nesting_stack,
    "nesting_syntax": case_nesting_syntax,
    "long_function": case_long_function,
    "sizes": case_sizes,
    "unusual": case_unusual,
    "options": case_options,
}


if __name__ == "__main__":
    sys.exit(run_case(__doc__, CASES, Runner, ["--ral-compile", "--ral-opt", "--ral-run"]))
