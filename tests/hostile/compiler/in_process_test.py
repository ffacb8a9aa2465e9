#!/usr/bin/env python3
"""libral_compiler.so inside this process (as ral_torch.compile runs it in the user's Python), on
input that used to end the process: LLVM's fatal errors, LLVM error diagnostics (exit(1)), CPUs
LLVM aborts on, integers that wrapped, allocations that fail, outputs that are devices or links.
This process is the host: each case must come back as an error result, print nothing of LLVM's
own, and be followed by a compile that works. No subprocess compiles anything here.

    in_process_test.py <case> --library libral_compiler.so --ral-run X --work-dir D
"""
import contextlib
import ctypes
import os
import resource
import stat
import subprocess
import sys
import tempfile
import threading

from case_runner import CaseRunner, run_case

OK, FAILED, USAGE, INTERNAL = 0, 1, 2, 4

GOOD = """func.func @main(%a: memref<4xf32>) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %v = memref.load %a[%c0] : memref<4xf32>
  %w = arith.addf %v, %v : f32
  %m = memref.alloc() : memref<4xf32>
  memref.copy %a, %m : memref<4xf32> to memref<4xf32>
  memref.store %w, %m[%c0] : memref<4xf32>
  return %m : memref<4xf32>
}
"""

# An AVX2 intrinsic compiled for the SSE2-only generic CPU: LLVM's instruction selection gives up
# with report_fatal_error ("Do not know how to split the result of this operator!"), which used to
# abort the host. The operands come from the input, so nothing folds it away.
AVX2_ON_GENERIC = """func.func @main(%a: memref<16xi16>) -> memref<1xi32> {
  %c0 = arith.constant 0 : index
  %x = memref.load %a[%c0] : memref<16xi16>
  %i = llvm.mlir.constant(0 : i32) : i32
  %u = llvm.mlir.undef : vector<16xi16>
  %v = llvm.insertelement %x, %u[%i : i32] : vector<16xi16>
  %p = llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"(%v, %v) : (vector<16xi16>, vector<16xi16>) -> vector<8xi32>
  %e = llvm.extractelement %p[%i : i32] : vector<8xi32>
  %m = memref.alloc() : memref<1xi32>
  memref.store %e, %m[%c0] : memref<1xi32>
  return %m : memref<1xi32>
}
"""

# A call LLVM reports as an error diagnostic during code generation; without a handler on the
# LLVMContext, LLVM prints it and calls exit(1). The callee's volatile store keeps the call.
DONTCALL = """llvm.mlir.global internal @sink(0 : i32) : i32
llvm.func @forbidden() attributes {passthrough = ["noinline", ["dontcall-error", "do not call"]]} {
  %p = llvm.mlir.addressof @sink : !llvm.ptr
  %c = llvm.mlir.constant(1 : i32) : i32
  llvm.store volatile %c, %p : i32, !llvm.ptr
  llvm.return
}
""" + GOOD.replace("%c0 = arith.constant 0 : index",
                   "%c0 = arith.constant 0 : index\n  llvm.call @forbidden() : () -> ()")

INLINE_ASM = GOOD.replace("%c0 = arith.constant 0 : index",
                          "%c0 = arith.constant 0 : index\n  llvm.inline_asm has_side_effects \"nop\", \"\" : () -> ()")

# 100M f32 of one value: a splat stays in the code, 400 MB once LLVM materializes it.
BIG_CONSTANT = """memref.global "private" constant @g : memref<100000000xf32> = dense<1.5>
func.func @main(%a: memref<4xf32>) -> memref<4xf32> {
  %g = memref.get_global @g : memref<100000000xf32>
  %c0 = arith.constant 0 : index
  %v = memref.load %g[%c0] : memref<100000000xf32>
  %m = memref.alloc() : memref<4xf32>
  memref.copy %a, %m : memref<4xf32> to memref<4xf32>
  memref.store %v, %m[%c0] : memref<4xf32>
  return %m : memref<4xf32>
}
"""


class Compiler:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        self.lib.ral_compiler_compile.argtypes = [ctypes.c_char_p, ctypes.c_char_p,
                                                  ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
        self.lib.ral_compiler_compile.restype = ctypes.c_int
        self.lib.ral_compiler_free.argtypes = [ctypes.c_void_p]

    def compile(self, source, output, options=""):
        diagnostics = ctypes.c_void_p()
        if isinstance(options, str):
            options = options.encode()
        rc = self.lib.ral_compiler_compile(os.fsencode(source), os.fsencode(output), options,
                                           ctypes.byref(diagnostics))
        text = ""
        if diagnostics.value:
            text = ctypes.string_at(diagnostics.value).decode("utf-8", "replace")
            self.lib.ral_compiler_free(diagnostics.value)
        return rc, text


@contextlib.contextmanager
def stderr_captured():
    """What this process writes to file descriptor 2 meanwhile (LLVM writes there directly)."""
    saved = os.dup(2)
    with tempfile.TemporaryFile() as f:
        os.dup2(f.fileno(), 2)
        captured = []
        try:
            yield captured
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            f.seek(0)
            captured.append(f.read().decode("utf-8", "replace"))


class Runner(CaseRunner):
    def __init__(self, args):
        super().__init__(args)
        self.compiler = Compiler(args.library)

    def expect(self, name, text, code, message, options="", output=None):
        """Compiles `text` in process; the exit code and message must match, LLVM must print
        nothing of its own, and a failed compile must leave no output."""
        source = self.write(name, text)
        output = output or self.path(name + ".ralm")
        if os.path.lexists(output) and not os.path.islink(output) and os.path.isfile(output):
            os.remove(output)
        with stderr_captured() as err:
            rc, out = self.compiler.compile(source, output, options)
        printed = err[0]
        self.check(rc == code and message in out,
                   "%s %s: exit %d with '%s'" % (name, options, code, message),
                   "exit %d: %s" % (rc, out))
        self.check("LLVM ERROR" not in printed and "recognized processor" not in printed,
                   "%s %s: nothing printed by LLVM itself" % (name, options), printed)
        if code != OK:
            self.check(not os.path.exists(output) or not os.path.isfile(output)
                       or os.path.islink(output),
                       "%s %s: no output written" % (name, options))
        return out

    def expect_good(self, what, options=""):
        """The next compile works, and its module runs (ral-run only runs it)."""
        source = self.write("good.mlir", GOOD)
        module = self.path("good.ralm")
        if os.path.exists(module):
            os.remove(module)
        rc, out = self.compiler.compile(source, module, options)
        self.check(rc == OK, "after %s: the next compile succeeds" % what, out)
        if rc != OK:
            return
        p = subprocess.run([self.args.ral_run, module, "--input=4xf32=1,2,3,4"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.check(p.returncode == 0 and "4xf32=2,2,3,4" in p.stdout,
                   "after %s: the module compiled next runs correctly" % what, p.stdout)


def case_llvm_errors(r):
    """LLVM's fatal error, its error diagnostics and inline assembly: error results, then the
    process compiles on, also on another thread while one thread hits the fatal error."""
    for attempt in range(3):
        r.expect("avx2_generic.mlir", AVX2_ON_GENERIC, INTERNAL,
                 "LLVM could not compile this module: Do not know how to split", "-O0")
        r.expect_good("LLVM's fatal error #%d" % (attempt + 1))
    r.expect("avx2_generic_O3.mlir", AVX2_ON_GENERIC, INTERNAL, "LLVM could not compile", "-O3")
    for level in ("-O0", "-O3"):
        r.expect("dontcall.mlir", DONTCALL, FAILED,
                 "LLVM: call to forbidden marked \"dontcall-error\": do not call", level)
    r.expect_good("an LLVM error diagnostic")
    r.expect("inline_asm.mlir", INLINE_ASM, FAILED, "inline assembly is not supported")
    r.expect_good("inline assembly")

    # One thread hits the fatal error over and over while another compiles: the handler throws
    # only on the thread whose compile it is.
    bad = r.write("avx2_threads.mlir", AVX2_ON_GENERIC)
    good = r.write("good_threads.mlir", GOOD)
    results = {"bad": [], "good": []}

    def loop(kind, source):
        for i in range(4):
            results[kind].append(r.compiler.compile(source, r.path("%s_%d.ralm" % (kind, i)),
                                                    "-O0")[0])

    threads = [threading.Thread(target=loop, args=("bad", bad)),
               threading.Thread(target=loop, args=("good", good))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    r.check(results["bad"] == [INTERNAL] * 4 and results["good"] == [OK] * 4,
            "concurrent compiles: the fatal ones fail, the others succeed", str(results))


def case_options(r):
    """Option values LLVM would abort on, and integers that used to wrap, are usage errors naming
    the option; nothing is compiled or written."""
    cases = [
        ("-O=4294967299", "-O='4294967299' is not a decimal integer from -2147483648 to "
                          "2147483647"),
        ("-O=-1", "-O must be 0..3, got -1"),
        ("-O9", "-O must be 0..3, got 9"),
        ("-O=3x", "-O='3x' is not a decimal integer"),
        ("--constant-min-bytes=-1", "--constant-min-bytes must be 0 or more"),
        ("--constant-min-bytes=99999999999999999999",
         "--constant-min-bytes='99999999999999999999' is not a decimal integer"),
        ("--max-optimized-loop-depth=4294967296",
         "--max-optimized-loop-depth='4294967296' is not a decimal integer from 0 to 4294967295"),
        ("--max-optimized-loop-depth=-1", "--max-optimized-loop-depth='-1' is not a decimal"),
        ("--max-optimized-function-size=-5", "is not a decimal integer from 0 to "
                                             "18446744073709551615"),
        ("--max-optimized-function-size=0x10", "--max-optimized-function-size='0x10' is not"),
        ("--max-optimized-function-size=+7", "--max-optimized-function-size='+7' is not"),
        ("--mcpu=bogus", "--mcpu='bogus' is not a CPU that LLVM knows for"),
        ("--mcpu=i386", "--mcpu='i386' cannot run the 64-bit code of"),
        ("--mcpu=pentium4", "cannot run the 64-bit code"),
        ("--mcpu=skylake,+avx2", "is not a CPU that LLVM knows"),
        ("--mcpu=", "--mcpu='' is not a CPU"),
        ("--inline-f32-math=exp,sin", "--inline-f32-math: unknown op 'sin'"),
        ("--inline-f32-math=,", "names no op"),
        ("--entry=ma\x01in", "--entry='ma\\x01in' is not a function name"),
        ("--name=mod\x1bule", "--name='mod\\x1bule' is not a module name"),
        (b"--name=\xff\xfe", "--name='\\xff\\xfe' is not a module name"),
        ("--gpu-arch=sm_80", "--gpu-arch goes with --device=cuda or --device=hsa"),
        ("--device=cuda --gpu-arch=sm_1", "unknown cuda architecture 'sm_1'"),
        ("--device=tp\x07u", "--device=tp\\x07u is not supported"),
        ("--max-memory=12Q", "--max-memory: '12Q' is not a size in bytes"),
        ("--max-memory=99999999999T", "too large"),
        ("--emit=ll", "--emit must be ralm, mlir, llvm or import"),
        ("--by-name=maybe", "bad value 'maybe' for --by-name"),
    ]
    for options, message in cases:
        r.expect("options.mlir", GOOD, USAGE, message, options)
    # The accepted forms of the same options.
    for options in ("-O0", "-O=2", "--mcpu=x86-64-v2", "--mcpu=native", "--max-memory=8G",
                    "--max-optimized-function-size=18446744073709551615",
                    "--inline-f32-math=exp.f64,tanh", "--name=m\u00e9"):
        r.expect("accepted.mlir", GOOD, OK, "", options)
    r.expect_good("refused options")


def case_memory(r):
    """--max-memory: a compile over the budget stops with an error naming the step; constants
    larger than the budget are refused before they are materialized."""
    out = r.expect("tiny_budget.mlir", GOOD, FAILED,
                   "the compile exceeded its memory limit of 1 MiB", "--max-memory=1K")
    r.check(" after " in out or " while " in out, "the excess names the step", out)
    r.expect("big_constant.mlir", BIG_CONSTANT, FAILED,
             "the module's constants take 382 MiB, more than --max-memory (64 MiB); the "
             "largest is @g",
             "--max-memory=64M")
    r.expect_good("a compile over its memory limit", "--max-memory=4G")


def case_memory_onnx(r):
    """The budget reaches the ONNX importer (asked between nodes) and the passes after it. The
    first compile of this process: memory an earlier one freed would be reused without growth."""
    try:
        import onnx
        from onnx import TensorProto, helper
    except ImportError:
        print("onnx (python3-onnx) missing: the ONNX budget check is skipped")
        return
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])
    nodes = [helper.make_node("Relu", ["x" if i == 0 else "t%d" % (i - 1)],
                              ["t%d" % i if i < 199 else "y"], name="relu_%d" % i)
             for i in range(200)]
    model = helper.make_model(helper.make_graph(nodes, "chain", [x], [y]))
    source = r.path("chain.onnx")
    onnx.save(model, source)
    rc, out = r.compiler.compile(source, r.path("chain.ralm"), "--max-memory=1K")
    r.check(rc == FAILED and "exceeded its memory limit of 1 MiB" in out,
            "an ONNX model over its memory limit fails", out)
    rc, out = r.compiler.compile(source, r.path("chain.ralm"), "--max-memory=4G")
    r.check(rc == OK, "the same ONNX model compiles within a sufficient limit", out)


def vm_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def case_out_of_memory(r):
    """Allocations that fail inside a compile (this process's address space limited, as a host
    under memory pressure): "out of memory", then the process compiles on once memory is back."""
    if os.environ.get("RAL_TEST_SANITIZED"):
        print("skipped under a sanitizer: an address-space limit stops the sanitizer itself")
        return
    # 1.5 GB of constants against 1 GiB of room (the compile thread's 256 MiB stack apart).
    source = r.write("oom.mlir", BIG_CONSTANT.replace("100000000", "400000000"))
    saved = resource.getrlimit(resource.RLIMIT_AS)
    limit = vm_bytes() + (256 << 20) + (1 << 30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, saved[1]))
    try:
        with stderr_captured() as err:
            rc, out = r.compiler.compile(source, r.path("oom.ralm"))
    finally:
        resource.setrlimit(resource.RLIMIT_AS, saved)
    r.check(rc == FAILED and "out of memory" in out, "a compile out of memory fails", out)
    r.check("LLVM ERROR" not in err[0], "nothing printed by LLVM itself", err[0])
    r.check(not os.path.exists(r.path("oom.ralm")), "no output written")
    r.expect_good("running out of memory")


def case_outputs(r):
    """Outputs that are not regular files are refused before compiling (exit 2), for every
    --emit; the files stay as they were and nothing is left beside them. Everything is made in
    the work directory; device nodes and other users' files only as root."""
    d = r.path("outputs")
    os.makedirs(d, exist_ok=True)
    for name in os.listdir(d):
        p = os.path.join(d, name)
        if os.path.isdir(p) and not os.path.islink(p):
            os.rmdir(p)
        else:
            os.remove(p)
    targets = {}
    os.mkfifo(os.path.join(d, "fifo"))
    targets["fifo"] = "is a FIFO"
    os.mkdir(os.path.join(d, "dir"))
    targets["dir"] = "is a directory"
    os.symlink("missing", os.path.join(d, "dangling"))
    targets["dangling"] = "is a symbolic link to a missing file"
    os.symlink("fifo", os.path.join(d, "link-to-fifo"))
    targets["link-to-fifo"] = "which is a FIFO"
    null = os.stat("/dev/null")
    if os.geteuid() == 0:
        try:
            os.mknod(os.path.join(d, "null"), 0o666 | stat.S_IFCHR, null.st_rdev)
            targets["null"] = "is a character device"
        except PermissionError as e:
            print("mknod refused here (%s): the device node case is skipped" % e)
        theirs = os.path.join(d, "theirs")
        with open(theirs, "w") as f:
            f.write("precious")
        os.chown(theirs, 65534, 65534)
        os.symlink(theirs, os.path.join(d, "planted"))
        targets["planted"] = "belongs to user 65534"
    else:
        print("not root: the device node and other-user cases are skipped (mknod, chown)")
    before = sorted(os.listdir(d))
    for name, reason in targets.items():
        for emit in ("ralm", "mlir", "llvm", "import"):
            r.expect("out.mlir", GOOD, USAGE, reason, "--emit=" + emit,
                     output=os.path.join(d, name))
    r.check(sorted(os.listdir(d)) == before, "nothing left beside the outputs",
            str(sorted(os.listdir(d))))
    r.check(stat.S_ISFIFO(os.lstat(os.path.join(d, "fifo")).st_mode), "the FIFO is a FIFO")
    if "null" in targets:
        st = os.lstat(os.path.join(d, "null"))
        r.check(stat.S_ISCHR(st.st_mode) and st.st_rdev == null.st_rdev,
                "the device node is still the device")
    if "planted" in targets:
        with open(os.path.join(d, "theirs")) as f:
            r.check(f.read() == "precious", "the other user's file is untouched")
    # A link to one's own file is written through; the link stays.
    mine = os.path.join(d, "mine")
    with open(mine, "w") as f:
        f.write("old")
    link = os.path.join(d, "mylink")
    os.symlink("mine", link)
    r.expect("out.mlir", GOOD, OK, "", "--emit=llvm", output=link)
    with open(mine) as f:
        r.check(os.path.islink(link) and "define" in f.read(),
                "a link to one's own file is written through")
    r.expect_good("refused outputs")


CASES = {
    "llvm_errors": case_llvm_errors,
    "options": case_options,
    "memory": case_memory,
    "memory_onnx": case_memory_onnx,
    "out_of_memory": case_out_of_memory,
    "outputs": case_outputs,
}


if __name__ == "__main__":
    sys.exit(run_case(__doc__, CASES, Runner, ["--library", "--ral-run"], "in_process_"))
