#!/usr/bin/env python3
"""Executes the GPU library kernels' device code on the host: the MLIR that
kernels/gpu/device_kernels.py writes (one gpu.module of `gpu.func ... kernel` functions) is
translated into Python and run work-item by work-item, so tests can check what the device code
computes although no GPU is at hand.

Each gpu.func is translated once into the source of a Python generator function that runs one
work-item and yields at every gpu.barrier; a launch runs each workgroup's work-items round-robin
from barrier to barrier and reports work-items that disagree on barriers, data races on
workgroup or global memory (unordered accesses to one address, one of them a write),
out-of-bounds accesses and undefined arithmetic (shift amounts >= the width, division by zero,
out-of-range float-to-int conversions), naming the kernel, the work-item and the MLIR line.

Values: an integer of any width (index: 64 bits) is a Python int in [0, 2**width) (i1 may be a
bool); f32 and f16 are numpy.float32 / numpy.float16 scalars, so every operation rounds to its
type; f64 is a Python float. A global pointer (!llvm.ptr<1>) is a (Buffer, byte offset) pair;
workgroup and private memrefs are Shared arrays.

Only the subset of MLIR the generator writes is supported, one operation per line; anything else
raises TranslationError naming the operation and line. Usage:

    module = Module(open("device_kernels.mlir").read())
    module.run("ral_strided_fill_4", [dst_array, count, ...], grid=(1, 1, 1), block=(256, 1, 1))

Pointer arguments are numpy arrays or bytearrays (the launch writes them in place), or
pointer(array, byte_offset); the others are ints (i64 bit patterns for f64 fields).
"""
import math
import re
import struct
from fractions import Fraction

import numpy as np


class TranslationError(Exception):
    """The MLIR is outside the supported subset (or malformed)."""


class KernelError(Exception):
    """A launch did something undefined: out-of-bounds access, data race, barrier mismatch..."""


# ---- types ---------------------------------------------------------------------------------

INT_WIDTHS = {"i1": 1, "i8": 8, "i16": 16, "i32": 32, "i64": 64, "index": 64}
FLOAT_WIDTHS = {"f16": 16, "f32": 32, "f64": 64}
PTR_TYPE = re.compile(r"!llvm\.ptr(?:<\d+>)?$")
VALUE = r"%[\w$.\-]+(?:#\d+)?"
MEMREF_TYPE = re.compile(r"memref<((?:\d+x)*)(\w+)(?:,\s*#gpu\.address_space<(\w+)>)?>$")


def int_info(ty):
    """(width, mask, sign bit) of an integer type; raises for anything else."""
    if ty not in INT_WIDTHS:
        raise TranslationError(f"expected an integer type, got {ty}")
    w = INT_WIDTHS[ty]
    return w, (1 << w) - 1, 1 << (w - 1)


def float_width(ty):
    if ty not in FLOAT_WIDTHS:
        raise TranslationError(f"expected a float type (f16, f32, f64), got {ty}")
    return FLOAT_WIDTHS[ty]


def memref_type(text):
    """(shape, element type, address space) of a static memref type."""
    m = MEMREF_TYPE.match(text.strip())
    if not m:
        raise TranslationError(f"unsupported memref type {text}")
    shape = tuple(int(d) for d in m.group(1).split("x") if d)
    if m.group(2) not in INT_WIDTHS and m.group(2) not in FLOAT_WIDTHS:
        raise TranslationError(f"unsupported memref element type {m.group(2)}")
    return shape, m.group(2), m.group(3) or ""


# ---- runtime: numbers ----------------------------------------------------------------------

_SCRATCH = {ty: np.zeros(1, np.dtype(f"u{FLOAT_WIDTHS[ty] // 8}")) for ty in FLOAT_WIDTHS}
_SCRATCH_F = {ty: a.view(np.dtype(f"f{FLOAT_WIDTHS[ty] // 8}")) for ty, a in _SCRATCH.items()}
NP_FLOAT = {"f16": np.float16, "f32": np.float32, "f64": float}


def _bits_to_float(ty):
    bits, value = _SCRATCH[ty], _SCRATCH_F[ty]
    convert = float if ty == "f64" else (lambda v: v)

    def cast(v):
        bits[0] = v
        return convert(value[0])
    return cast


def _float_to_bits(ty):
    bits, value = _SCRATCH[ty], _SCRATCH_F[ty]

    def cast(x):
        value[0] = x
        return int(bits[0])
    return cast


def _signed(v, w):
    return v - (1 << w) if v >> (w - 1) else v


def _signed_operands(a, b, w):
    x, y = _signed(a, w), _signed(b, w)
    if y == 0:
        raise ZeroDivisionError("integer division by zero")
    if x == -(1 << (w - 1)) and y == -1:
        raise ArithmeticError("signed division overflow")
    return x, y


def _divs(a, b, w):
    x, y = _signed_operands(a, b, w)
    q = abs(x) // abs(y)
    return (-q if (x < 0) != (y < 0) else q) & ((1 << w) - 1)


def _rems(a, b, w):
    x, y = _signed(a, w), _signed(b, w)
    if y == 0:
        raise ZeroDivisionError("integer remainder by zero")
    r = abs(x) % abs(y)
    return (-r if x < 0 else r) & ((1 << w) - 1)


def _floordivs(a, b, w):
    x, y = _signed_operands(a, b, w)
    return (x // y) & ((1 << w) - 1)


def _ceildivs(a, b, w):
    x, y = _signed_operands(a, b, w)
    return (-((-x) // y)) & ((1 << w) - 1)


def _ceildivu(a, b):
    if b == 0:
        raise ZeroDivisionError("integer division by zero")
    return -((-a) // b)


def _bad_shift(amount, w):
    raise ArithmeticError(f"shift amount {amount} >= bit width {w} (poison)")


def _bad_step(step):
    raise ArithmeticError(f"scf.for step {step} is not positive")


def _int_to_float(v, ty):
    """Integer -> float rounded once to nearest even. Python's int -> float is correctly
    rounded; for f32/f16 a wide integer is first rounded to odd at 53 bits, so that rounding
    the double again gives the correctly rounded result (no double-rounding error)."""
    if ty == "f64" or abs(v) < 1 << 53:
        return NP_FLOAT[ty](float(v))
    shift = abs(v).bit_length() - 53
    t = abs(v) >> shift
    if abs(v) & ((1 << shift) - 1):
        t |= 1
    d = math.ldexp(float(t), shift)
    return NP_FLOAT[ty](-d if v < 0 else d)


def _float_to_int(x, w, signed):
    if not math.isfinite(x):
        raise ArithmeticError(f"float-to-int conversion of {x} (poison)")
    t = int(x)
    lo, hi = (-(1 << (w - 1)), 1 << (w - 1)) if signed else (0, 1 << w)
    if not lo <= t < hi:
        raise ArithmeticError(f"float-to-int conversion of {x} out of range (poison)")
    return t & ((1 << w) - 1)


def _fdiv(a, b):
    """f64 division with IEEE results for a zero divisor (Python raises instead)."""
    try:
        return a / b
    except ZeroDivisionError:
        return float(np.float64(a) / np.float64(b))


def _frem(a, b):
    return float(np.fmod(a, b)) if isinstance(a, float) else np.fmod(a, b)


def _negative(x):
    return math.copysign(1.0, float(x)) < 0


def _maximumf(a, b):
    if a != a or b != b:
        return a if a != a else b
    if a == b:
        return b if _negative(a) else a
    return a if a > b else b


def _minimumf(a, b):
    if a != a or b != b:
        return a if a != a else b
    if a == b:
        return a if _negative(a) else b
    return a if a < b else b


def _maxnumf(a, b):
    return b if a != a else a if b != b else _maximumf(a, b)


def _minnumf(a, b):
    return b if a != a else a if b != b else _minimumf(a, b)


# ---- runtime: memory -----------------------------------------------------------------------

class Buffer:
    """The bytes of one global allocation (a numpy array or bytearray, written in place);
    `base` is their address, so that views of one array alias in the race check."""

    __slots__ = ("mem", "size", "name", "base")

    def __init__(self, data, name):
        if isinstance(data, np.ndarray) and not data.flags.c_contiguous:
            raise ValueError(f"{name}: the array must be C-contiguous")
        self.mem = memoryview(data).cast("B") if data is not None else memoryview(b"")
        self.size = len(self.mem)
        self.name = name
        self.base = np.frombuffer(self.mem, np.uint8).ctypes.data if self.size else 0


def pointer(data, byte_offset=0, name="buffer"):
    """A global pointer argument: `byte_offset` bytes into the array or bytearray `data`."""
    return (Buffer(data, name), byte_offset)


MANY = "several"


class Tracker:
    """The last write and the reads of each global address during a launch, to report data
    races: a write and another access of the same address by work-items of different
    workgroups (never ordered within a launch) or of one workgroup with no gpu.barrier between
    them. Addresses are accesses' first bytes. The scheduler sets group, phase and me."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.cells, self.group, self.phase, self.me = {}, None, 0, 0

    def conflict(self, group, phase, me):
        return group is not None and (group != self.group or phase == self.phase and me != self.me)

    def race(self, p, action, cell, past):
        group, _, me = cell
        if group == MANY:
            other = "work-items of several workgroups"
        else:
            other = f"{'several work-items' if me == MANY else f'work-item {me}'} of workgroup " \
                f"{group}"
        why = "workgroups are not ordered" if group != self.group else "no gpu.barrier between"
        raise KernelError(f"data race on {p[0].name} byte {p[1]}: work-item {self.me} of "
                          f"workgroup {self.group} {action} what {other} {past} ({why})")

    def read(self, p):
        cell = self.cells.get(p[0].base + p[1])
        if cell is None:
            self.cells[p[0].base + p[1]] = [None, 0, 0, self.group, self.phase, self.me]
            return
        if self.conflict(*cell[:3]):
            self.race(p, "reads", cell[:3], "wrote")
        if cell[3] is None:
            cell[3:] = [self.group, self.phase, self.me]
        elif cell[3] != self.group:
            cell[3] = cell[5] = MANY
        elif cell[4] != self.phase:
            cell[4:] = [self.phase, self.me]
        elif cell[5] != self.me:
            cell[5] = MANY

    def write(self, p):
        cell = self.cells.get(p[0].base + p[1])
        if cell is None:
            self.cells[p[0].base + p[1]] = [self.group, self.phase, self.me, None, 0, 0]
            return
        if self.conflict(*cell[:3]):
            self.race(p, "writes", cell[:3], "wrote")
        if cell[3] == MANY or self.conflict(*cell[3:]):
            self.race(p, "writes", cell[3:], "read")
        cell[:3] = [self.group, self.phase, self.me]


TRACKER = Tracker()


def _out_of_bounds(what, ty, p):
    raise KernelError(f"out-of-bounds {ty} {what} at byte offset {p[1]} of {p[0].name} "
                      f"({p[0].size} bytes)")


def _global_access(ty):
    """load(p) and store(p, v) of a scalar type in global memory, bounds- and race-checked."""
    size = max((INT_WIDTHS.get(ty) or FLOAT_WIDTHS[ty]) // 8, 1)
    read, write = TRACKER.read, TRACKER.write
    if ty in FLOAT_WIDTHS:
        dtype = np.dtype(f"<f{size}")
        decode = float if ty == "f64" else None

        def load(p):
            buf, off = p
            if off < 0 or off + size > buf.size:
                _out_of_bounds("load", ty, p)
            read(p)
            v = np.frombuffer(buf.mem, dtype, 1, off)[0]
            return decode(v) if decode else v

        def store(p, v):
            buf, off = p
            if off < 0 or off + size > buf.size:
                _out_of_bounds("store", ty, p)
            write(p)
            np.frombuffer(buf.mem, dtype, 1, off)[0] = v
        return load, store
    codec = struct.Struct("<" + {1: "B", 2: "H", 4: "I", 8: "Q"}[size])
    mask = (1 << INT_WIDTHS[ty]) - 1

    def load_int(p):
        buf, off = p
        if off < 0 or off + size > buf.size:
            _out_of_bounds("load", ty, p)
        read(p)
        return codec.unpack_from(buf.mem, off)[0] & mask

    def store_int(p, v):
        buf, off = p
        if off < 0 or off + size > buf.size:
            _out_of_bounds("store", ty, p)
        write(p)
        codec.pack_into(buf.mem, off, v)
    return load_int, store_int


def garbage(ty):
    """What uninitialized workgroup/private memory reads as: NaN or a 0xA5... pattern, so a
    result that depends on it is wrong rather than accidentally zero."""
    if ty in FLOAT_WIDTHS:
        return NP_FLOAT[ty](math.nan)
    return 0xA5A5A5A5A5A5A5A5 & int_info(ty)[1]


class Shared:
    """A memref in workgroup memory (one per workgroup) or private memory (one per work-item).
    Between two barriers, an element written by one work-item and read or written by another
    is a data race: the order of the two is unspecified on the device, so it raises."""

    __slots__ = ("name", "vals", "n", "writer", "reader", "check")

    def __init__(self, name, shape, ty, check=True):
        self.name = name
        self.n = math.prod(shape)
        self.vals = [garbage(ty)] * self.n
        self.check = check
        self.new_phase()

    def new_phase(self):
        self.writer = [-1] * self.n
        self.reader = [-1] * self.n

    def out_of_bounds(self, k):
        raise KernelError(f"out-of-bounds index {k} of {self.name} ({self.n} elements)")

    def race(self, k, me, action, other, past):
        who = "several work-items" if other == -2 else f"work-item {other}"
        raise KernelError(f"data race on {self.name}[{k}]: work-item {me} {action} what {who} "
                          f"{past} since the last gpu.barrier")

    def load(self, me, k):
        if k >= self.n:
            self.out_of_bounds(k)
        if self.check:
            w = self.writer[k]
            if w != -1 and w != me:
                self.race(k, me, "reads", w, "wrote")
            r = self.reader[k]
            self.reader[k] = me if r == -1 or r == me else -2
        return self.vals[k]

    def store(self, me, k, v):
        if k >= self.n:
            self.out_of_bounds(k)
        if self.check:
            w, r = self.writer[k], self.reader[k]
            if w != -1 and w != me:
                self.race(k, me, "writes", w, "wrote")
            if r != -1 and r != me:
                self.race(k, me, "writes", r, "read")
            self.writer[k] = me
        self.vals[k] = v


def _flat(indices, shape):
    """Row-major offset of a multi-dimensional memref index, each index bounds-checked."""
    k = 0
    for i, d in zip(indices, shape):
        if i >= d:
            raise KernelError(f"memref index {tuple(indices)} out of bounds of {shape}")
        k = k * d + i
    return k


RUNTIME = {
    "_F32": np.float32, "_F16": np.float16, "_Shared": Shared, "_flat": _flat,
    "_divs": _divs, "_rems": _rems, "_floordivs": _floordivs, "_ceildivs": _ceildivs,
    "_ceildivu": _ceildivu, "_bad_shift": _bad_shift, "_bad_step": _bad_step,
    "_int_to_float": _int_to_float, "_float_to_int": _float_to_int, "_fdiv": _fdiv,
    "_frem": _frem, "_maximumf": _maximumf, "_minimumf": _minimumf, "_maxnumf": _maxnumf,
    "_minnumf": _minnumf,
}
for _ty in FLOAT_WIDTHS:
    RUNTIME[f"_bits_to_{_ty}"] = _bits_to_float(_ty)
    RUNTIME[f"_{_ty}_to_bits"] = _float_to_bits(_ty)
for _ty in ("i1", "i8", "i16", "i32", "i64", "f16", "f32", "f64"):
    RUNTIME[f"_load_{_ty}"], RUNTIME[f"_store_{_ty}"] = _global_access(_ty)


# ---- parsing -------------------------------------------------------------------------------

def split_top(text, sep=","):
    """Splits at `sep` outside (), [], {} and <>."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>" and not (ch == ">" and text[i - 1] == "-"):
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def balanced(text, start):
    """Index just past the bracket that closes the one at text[start]."""
    pairs = {"(": ")", "{": "}", "[": "]"}
    depth = 0
    for i in range(start, len(text)):
        if text[i] == text[start]:
            depth += 1
        elif text[i] == pairs[text[start]]:
            depth -= 1
            if depth == 0:
                return i + 1
    raise TranslationError(f"unbalanced {text[start]} in: {text}")


class Func:
    """One gpu.func: its parameters, memory attributions and body lines (number, text)."""

    def __init__(self, name, line, params, workgroup, private):
        self.name, self.line = name, line
        self.params, self.workgroup, self.private = params, workgroup, private
        self.body = []


def _typed_names(text, line):
    """`%a: t1, %b : t2 {attrs}` -> [(name, type)] (argument attributes are hints: dropped)."""
    out = []
    for part in split_top(text):
        m = re.match(r"(%[\w$.\-]+)\s*:\s*(.+?)(\s*\{.*\})?$", part)
        if not m:
            raise TranslationError(f"line {line}: cannot parse argument '{part}'")
        out.append((m.group(1), m.group(2).strip()))
    return out


def parse_header(text, line):
    """The Func of a `gpu.func @name(args) [workgroup(..)] [private(..)] kernel {` line."""
    m = re.match(r"gpu\.func\s+@([\w$.]+)\s*\(", text)
    if not m:
        raise TranslationError(f"line {line}: cannot parse gpu.func header: {text}")
    end = balanced(text, m.end() - 1)
    params = _typed_names(text[m.end():end - 1], line)
    clauses, rest, kernel = {"workgroup": [], "private": []}, text[end:].strip(), False
    while rest != "{":
        c = re.match(r"(workgroup|private)\s*\(", rest)
        if c:
            close = balanced(rest, c.end() - 1)
            clauses[c.group(1)] = _typed_names(rest[c.end():close - 1], line)
            rest = rest[close:].strip()
        elif rest.startswith("kernel"):
            kernel, rest = True, rest[len("kernel"):].strip()
        elif rest.startswith("attributes") and "{" in rest:
            rest = rest[balanced(rest, rest.index("{")):].strip()
        else:
            raise TranslationError(f"line {line}: unsupported gpu.func syntax: {rest}")
    if not kernel:
        raise TranslationError(f"line {line}: @{m.group(1)} is not a kernel (device functions "
                               f"are not supported)")
    return Func(m.group(1), line, params, clauses["workgroup"], clauses["private"])


def _lines(text):
    """(number, stripped text) of the non-blank lines, without // comments."""
    for number, raw in enumerate(text.splitlines(), 1):
        s = raw.split("//", 1)[0].strip() if "//" in raw and '"' not in raw else raw.strip()
        if s:
            yield number, s


def parse_module(text):
    """{name: Func} of every gpu.func; anything else but the module wrappers is rejected. A
    gpu.func header may span lines (up to its `{`); every other operation takes one line."""
    funcs, func, depth, header = {}, None, 0, None
    for number, s in _lines(text):
        if header is not None:
            header = (header[0], header[1] + " " + s)
            if s.endswith("{"):
                func, depth, header = parse_header(header[1], header[0]), 1, None
        elif func is not None:
            depth += s.endswith("{") - s.startswith("}")
            if depth == 0:
                if s != "}":
                    raise TranslationError(f"line {number}: unexpected '{s}' closing "
                                           f"@{func.name}")
                funcs[func.name], func = func, None
            else:
                func.body.append((number, s))
        elif s.startswith("gpu.func"):
            if s.endswith("{"):
                func, depth = parse_header(s, number), 1
            else:
                header = (number, s)
        elif not (s == "}" or re.match(r"(module|gpu\.module)\b.*\{$", s)):
            raise TranslationError(f"line {number}: unsupported module-level operation: {s}")
    if func is not None or header is not None:
        raise TranslationError("a gpu.func is not closed")
    return funcs


# ---- translation ---------------------------------------------------------------------------

OP_LINE = re.compile(r"(?:(%[\w$.\-]+)(?::(\d+))?\s*=\s*)?([a-z_]\w*\.[\w.]+)\s*(.*)$")
ATTRS = r"(?:\s+(?:overflow|fastmath)<[\w,\s]*>)?"

INT_BINARY = {
    "arith.addi": "({a} + {b}) & {M}",
    "arith.subi": "({a} - {b}) & {M}",
    "arith.muli": "({a} * {b}) & {M}",
    "arith.andi": "{a} & {b}",
    "arith.ori": "{a} | {b}",
    "arith.xori": "{a} ^ {b}",
    "arith.divui": "{a} // {b}",
    "arith.remui": "{a} % {b}",
    "arith.ceildivui": "_ceildivu({a}, {b})",
    "arith.divsi": "_divs({a}, {b}, {W})",
    "arith.remsi": "_rems({a}, {b}, {W})",
    "arith.floordivsi": "_floordivs({a}, {b}, {W})",
    "arith.ceildivsi": "_ceildivs({a}, {b}, {W})",
    "arith.shli": "(({a} << {b}) & {M}) if {b} < {W} else _bad_shift({b}, {W})",
    "arith.shrui": "({a} >> {b}) if {b} < {W} else _bad_shift({b}, {W})",
    "arith.shrsi": "((({a} ^ {S}) - {S}) >> {b}) & {M} if {b} < {W} else _bad_shift({b}, {W})",
    "arith.maxui": "max({a}, {b})",
    "arith.minui": "min({a}, {b})",
    "arith.maxsi": "{a} if ({a} ^ {S}) >= ({b} ^ {S}) else {b}",
    "arith.minsi": "{a} if ({a} ^ {S}) <= ({b} ^ {S}) else {b}",
}

FLOAT_BINARY = {
    "arith.addf": "{a} + {b}",
    "arith.subf": "{a} - {b}",
    "arith.mulf": "{a} * {b}",
    "arith.divf": "{a} / {b}",  # f64: _fdiv
    "arith.remf": "_frem({a}, {b})",
    "arith.maximumf": "_maximumf({a}, {b})",
    "arith.minimumf": "_minimumf({a}, {b})",
    "arith.maxnumf": "_maxnumf({a}, {b})",
    "arith.minnumf": "_minnumf({a}, {b})",
}

CMPI = {
    "eq": "{a} == {b}", "ne": "{a} != {b}",
    "ult": "{a} < {b}", "ule": "{a} <= {b}", "ugt": "{a} > {b}", "uge": "{a} >= {b}",
    "slt": "({a} ^ {S}) < ({b} ^ {S})", "sle": "({a} ^ {S}) <= ({b} ^ {S})",
    "sgt": "({a} ^ {S}) > ({b} ^ {S})", "sge": "({a} ^ {S}) >= ({b} ^ {S})",
}

CMPF = {  # Python comparisons are false on NaN, like the ordered predicates
    "false": "False", "true": "True",
    "oeq": "{a} == {b}", "ogt": "{a} > {b}", "oge": "{a} >= {b}", "olt": "{a} < {b}",
    "ole": "{a} <= {b}", "one": "({a} < {b} or {a} > {b})", "ord": "({a} == {a} and {b} == {b})",
    "ueq": "not ({a} < {b} or {a} > {b})", "ugt": "not ({a} <= {b})", "uge": "not ({a} < {b})",
    "ult": "not ({a} >= {b})", "ule": "not ({a} > {b})", "une": "{a} != {b}",
    "uno": "({a} != {a} or {b} != {b})",
}

GPU_IDS = {"gpu.thread_id": "_tid", "gpu.block_id": "_bid", "gpu.block_dim": "_bdim",
           "gpu.grid_dim": "_gdim"}


class Region:
    """An open scf.for / scf.if body: where its scf.yield goes and what follows its `}`."""

    def __init__(self, kind, targets, after=()):
        self.kind, self.targets, self.after = kind, targets, list(after)
        self.has_else = False
        self.yields = 0  # scf.yield ops with values: one per block when there are results


class Translator:
    """Python source of one gpu.func: `def kernel(_args, _tid, _bid, _bdim, _gdim, _shared,
    _me)`, a generator over one work-item; `origin[i]` is the MLIR line of Python line i + 1."""

    def __init__(self, func):
        self.func = func
        self.lines, self.origin = [], []
        self.names, self.memrefs = {}, {}
        self.namespace = dict(RUNTIME)
        self.indent, self.regions, self.counter = 1, [], 0
        self.line = func.line

    # -- helpers --
    def fail(self, message):
        error = TranslationError(f"@{self.func.name}: line {self.line}: {message}")
        error.located = True
        raise error

    def emit(self, text):
        self.lines.append("    " * self.indent + text)
        self.origin.append(self.line)

    def define(self, ssa):
        if ssa not in self.names:
            base = re.sub(r"\W", "_", ssa[1:])
            self.names[ssa] = f"v{len(self.names)}_{base}"
        return self.names[ssa]

    def use(self, ssa):
        if ssa not in self.names:
            self.fail(f"use of undefined value {ssa}")
        return self.names[ssa]

    def fresh(self):
        self.counter += 1
        return f"_t{self.counter}"

    def constant(self, value):
        name = f"_K{len(self.namespace)}"
        self.namespace[name] = value
        return name

    def match(self, pattern, rest, op):
        m = re.match(pattern + r"$", rest.strip())
        if not m:
            self.fail(f"cannot parse {op} {rest}")
        return m

    def no_result(self, results, op):
        if results:
            self.fail(f"{op} has no results")

    def one_result(self, results, op):
        if len(results) != 1:
            self.fail(f"{op} takes exactly one result")
        return self.define(results[0])

    # -- driver --
    def translate(self):
        """(source, namespace, origin) of the work-item generator."""
        f = self.func
        self.lines.append("def kernel(_args, _tid, _bid, _bdim, _gdim, _shared, _me):")
        self.origin.append(f.line)
        if f.params:
            self.emit(", ".join(self.define(n) for n, _ in f.params) + ", = _args")
        for name, ty in f.workgroup:
            if memref_type(ty)[2] != "workgroup":
                self.fail(f"{name}: workgroup attribution of type {ty}")
            self.memrefs[name] = ty
        if f.workgroup:
            self.emit(", ".join(self.define(n) for n, _ in f.workgroup) + ", = _shared")
        for name, ty in f.private:
            shape, elem, _ = memref_type(ty)
            self.memrefs[name] = ty
            self.emit(f"{self.define(name)} = _Shared({name!r}, {shape!r}, {elem!r}, False)")
        self.emit("if False:")
        self.emit("    yield")
        for number, text in f.body:
            self.line = number
            try:
                self.statement(text)
            except TranslationError as e:
                if getattr(e, "located", False):
                    raise
                self.fail(f"{e}: {text}")
        if self.indent != 1:
            self.fail("unclosed region")
        return "\n".join(self.lines) + "\n", self.namespace, self.origin

    def statement(self, text):
        if text == "}":
            return self.close_region()
        if text == "} else {":
            return self.else_region()
        m = OP_LINE.match(text)
        if not m:
            self.fail(f"unsupported syntax: {text}")
        name, count, op, rest = m.groups()
        results = [] if name is None else (
            [name] if count is None else [f"{name}#{i}" for i in range(int(count))])
        if op not in OPS:
            self.fail(f"unsupported operation {op}: {text}")
        OPS[op](self, results, rest, op)

    # -- regions --
    def open_region(self, kind, targets, after=()):
        self.regions.append(Region(kind, targets, after))
        self.indent += 1
        self.emit("pass")

    def close_region(self):
        if not self.regions:
            self.fail("unexpected }")
        region = self.regions.pop()
        self.indent -= 1
        if region.kind == "if" and region.targets and not region.has_else:
            self.fail("scf.if with results needs an else region")
        if region.targets and region.yields != 1 + region.has_else:
            self.fail(f"scf.{region.kind} with results needs an scf.yield in each block")
        for line in region.after:
            self.emit(line)

    def else_region(self):
        if not self.regions or self.regions[-1].kind != "if" or self.regions[-1].has_else:
            self.fail("unexpected } else {")
        self.regions[-1].has_else = True
        self.indent -= 1
        self.emit("else:")
        self.indent += 1
        self.emit("pass")


def _op(name):
    """Registers a Translator method as the handler of operation `name`."""
    def register(fn):
        OPS[name] = fn
        return fn
    return register


OPS = {}


def _int_binary(self, results, rest, op):
    m = self.match(rf"({VALUE})\s*,\s*({VALUE}){ATTRS}\s*:\s*(\S+)", rest, op)
    w, mask, sign = int_info(m.group(3))
    expr = INT_BINARY[op].format(a=self.use(m.group(1)), b=self.use(m.group(2)), W=w,
                                 M=hex(mask), S=hex(sign))
    self.emit(f"{self.one_result(results, op)} = {expr}")


def _float_binary(self, results, rest, op):
    m = self.match(rf"({VALUE})\s*,\s*({VALUE}){ATTRS}\s*:\s*(\S+)", rest, op)
    float_width(m.group(3))
    template = "_fdiv({a}, {b})" if op == "arith.divf" and m.group(3) == "f64" else \
        FLOAT_BINARY[op]
    expr = template.format(a=self.use(m.group(1)), b=self.use(m.group(2)))
    self.emit(f"{self.one_result(results, op)} = {expr}")


OPS.update({op: _int_binary for op in INT_BINARY})
OPS.update({op: _float_binary for op in FLOAT_BINARY})


def _nearest_float(exact, ty, negative_zero):
    """The `ty` value nearest to the rational `exact`, ties to even (as MLIR parses it)."""
    if ty == "f64":
        value = float(exact)  # int / int true division is correctly rounded
        return -0.0 if negative_zero else value
    t = NP_FLOAT[ty]
    c = t(float(exact))
    if negative_zero:
        return t(-0.0)
    if not np.isfinite(c):
        return c
    best = None
    for cand in (np.nextafter(c, t(-np.inf)), c, np.nextafter(c, t(np.inf))):
        if np.isfinite(cand):
            key = (abs(Fraction(float(cand)) - exact), _float_to_bits(ty)(cand) & 1)
            if best is None or key < best[0]:
                best = (key, cand)
    return best[1]


@_op("arith.constant")
def _constant(self, results, rest, op):
    m = self.match(r"(\S+)(?:\s*:\s*(\S+))?", rest, op)
    text, ty = m.group(1), m.group(2)
    if ty is None:
        if text not in ("true", "false"):
            self.fail(f"arith.constant {text} without a type")
        ty = "i1"
    name = self.one_result(results, op)
    if ty in INT_WIDTHS:
        value = {"true": 1, "false": 0}.get(text)
        if value is None:
            try:
                value = int(text, 0)
            except ValueError:
                self.fail(f"bad integer constant {text}")
        self.emit(f"{name} = {hex(value & int_info(ty)[1])}")
        return
    float_width(ty)
    if re.match(r"0x[0-9a-fA-F]+$", text):
        value = RUNTIME[f"_bits_to_{ty}"](int(text, 16))
    else:
        try:
            exact = Fraction(text)
        except ValueError:
            self.fail(f"bad float constant {text}")
        value = _nearest_float(exact, ty, exact == 0 and text.startswith("-"))
    self.emit(f"{name} = {self.constant(value)}")


@_op("arith.cmpi")
def _cmpi(self, results, rest, op):
    m = self.match(rf"(\w+)\s*,\s*({VALUE})\s*,\s*({VALUE})\s*:\s*(\S+)", rest, op)
    if m.group(1) not in CMPI:
        self.fail(f"unknown arith.cmpi predicate {m.group(1)}")
    _, _, sign = int_info(m.group(4))
    expr = CMPI[m.group(1)].format(a=self.use(m.group(2)), b=self.use(m.group(3)), S=hex(sign))
    self.emit(f"{self.one_result(results, op)} = {expr}")


@_op("arith.cmpf")
def _cmpf(self, results, rest, op):
    m = self.match(rf"(\w+)\s*,\s*({VALUE})\s*,\s*({VALUE}){ATTRS}\s*:\s*(\S+)", rest, op)
    if m.group(1) not in CMPF:
        self.fail(f"unknown arith.cmpf predicate {m.group(1)}")
    float_width(m.group(4))
    expr = CMPF[m.group(1)].format(a=self.use(m.group(2)), b=self.use(m.group(3)))
    if m.group(4) != "f64":
        expr = f"bool({expr})"  # numpy comparisons give numpy.bool_, kept out of integers
    self.emit(f"{self.one_result(results, op)} = {expr}")


@_op("arith.select")
def _select(self, results, rest, op):
    m = self.match(rf"({VALUE})\s*,\s*({VALUE})\s*,\s*({VALUE})\s*:\s*(?:i1\s*,\s*)?(\S+)",
                   rest, op)
    c, t, f = (self.use(m.group(i)) for i in (1, 2, 3))
    self.emit(f"{self.one_result(results, op)} = {t} if {c} else {f}")


@_op("arith.negf")
def _negf(self, results, rest, op):
    m = self.match(rf"({VALUE}){ATTRS}\s*:\s*(\S+)", rest, op)
    float_width(m.group(2))
    self.emit(f"{self.one_result(results, op)} = -{self.use(m.group(1))}")


def _mul_extended(signed):
    def handler(self, results, rest, op):
        m = self.match(rf"({VALUE})\s*,\s*({VALUE})\s*:\s*(\S+)", rest, op)
        w, mask, sign = int_info(m.group(3))
        if len(results) != 2:
            self.fail(f"{op} has two results (%x:2)")
        a, b = self.use(m.group(1)), self.use(m.group(2))
        if signed:
            a, b = f"(({a} ^ {hex(sign)}) - {hex(sign)})", f"(({b} ^ {hex(sign)}) - {hex(sign)})"
        t = self.fresh()
        self.emit(f"{t} = {a} * {b}")
        lo, hi = self.define(results[0]), self.define(results[1])
        self.emit(f"{lo}, {hi} = {t} & {hex(mask)}, ({t} >> {w}) & {hex(mask)}")
    return handler


OPS["arith.mului_extended"] = _mul_extended(False)
OPS["arith.mulsi_extended"] = _mul_extended(True)


# -- casts: (translator, operand, source type, destination type) -> expression --

def _sext(a, src, dst):
    _, _, sign = int_info(src)
    return f"(({a} ^ {hex(sign)}) - {hex(sign)}) & {hex(int_info(dst)[1])}"


def _int_resize(kind):
    def cast(self, a, src, dst):
        ws, wd = int_info(src)[0], int_info(dst)[0]
        if kind == "trunc" and ws <= wd or kind in ("zext", "sext") and ws >= wd:
            self.fail(f"{src} to {dst} is not a {kind}")
        if wd < ws:
            return f"{a} & {hex(int_info(dst)[1])}"
        if wd == ws:
            return a
        return _sext(a, src, dst) if kind in ("sext", "index_cast") else a
    return cast


def _to_float(signed):
    def cast(self, a, src, dst):
        w, _, sign = int_info(src)
        float_width(dst)
        if signed:
            a = f"(({a} ^ {hex(sign)}) - {hex(sign)})"
        if w > 53:
            return f"_int_to_float({a}, {dst!r})"
        return f"float({a})" if dst == "f64" else f"_F{dst[1:]}(float({a}))"
    return cast


def _to_int(signed):
    def cast(self, a, src, dst):
        float_width(src)
        return f"_float_to_int({a}, {int_info(dst)[0]}, {signed})"
    return cast


def _float_resize(wider):
    def cast(self, a, src, dst):
        if (float_width(dst) > float_width(src)) != wider:
            self.fail(f"{src} to {dst} is not an {'extension' if wider else 'truncation'}")
        return f"float({a})" if dst == "f64" else f"_F{dst[1:]}({a})"
    return cast


def _bitcast(self, a, src, dst):
    ws = INT_WIDTHS.get(src) or FLOAT_WIDTHS.get(src)
    wd = INT_WIDTHS.get(dst) or FLOAT_WIDTHS.get(dst)
    if ws is None or ws != wd or src == "index" or dst == "index":
        self.fail(f"arith.bitcast {src} to {dst}: types of different widths")
    if (src in FLOAT_WIDTHS) == (dst in FLOAT_WIDTHS):
        return a
    return f"_{src}_to_bits({a})" if src in FLOAT_WIDTHS else f"_bits_to_{dst}({a})"


CASTS = {
    "arith.trunci": _int_resize("trunc"), "arith.extui": _int_resize("zext"),
    "arith.extsi": _int_resize("sext"), "arith.index_cast": _int_resize("index_cast"),
    "arith.index_castui": _int_resize("index_castui"),
    "arith.uitofp": _to_float(False), "arith.sitofp": _to_float(True),
    "arith.fptoui": _to_int(False), "arith.fptosi": _to_int(True),
    "arith.extf": _float_resize(True), "arith.truncf": _float_resize(False),
    "arith.bitcast": _bitcast,
}


def _cast(self, results, rest, op):
    m = self.match(rf"({VALUE})\s*:\s*(\S+)\s+to\s+(\S+)", rest, op)
    expr = CASTS[op](self, self.use(m.group(1)), m.group(2), m.group(3))
    self.emit(f"{self.one_result(results, op)} = {expr}")


OPS.update({op: _cast for op in CASTS})


# -- scf --

@_op("scf.for")
def _for(self, results, rest, op):
    m = self.match(rf"(unsigned\s+)?({VALUE})\s*=\s*({VALUE})\s+to\s+({VALUE})\s+step\s+"
                   rf"({VALUE})(?:\s+iter_args\((.*)\)\s*->\s*\((.*)\))?\s*(?::\s*(\S+))?\s*\{{",
                   rest, op)
    unsigned, iv, lb, ub, step, inits, types, ty = m.groups()
    _, mask, sign = int_info(ty or "index")
    pairs = [self.match(rf"({VALUE})\s*=\s*({VALUE})", p, op).groups()
             for p in split_top(inits or "")]
    if len(split_top(types or "")) != len(pairs) or len(results) != len(pairs):
        self.fail("scf.for: iter_args, result types and results do not match")
    n = self.fresh()
    bounds = [self.use(v) for v in (lb, ub, step)]
    if not unsigned:
        bounds = [f"(({b} ^ {hex(sign)}) - {hex(sign)})" for b in bounds]
    self.emit(f"{n}_lb, {n}_ub, {n}_step = {', '.join(bounds)}")
    self.emit(f"if {n}_step <= 0:")
    self.emit(f"    _bad_step({n}_step)")
    carried = [self.define(a) for a, _ in pairs]
    if pairs:
        self.emit(f"{', '.join(carried)}, = {', '.join(self.use(v) for _, v in pairs)},")
    self.emit(f"for {n} in range({n}_lb, {n}_ub, {n}_step):")
    after = [f"{', '.join(self.define(r) for r in results)}, = {', '.join(carried)},"] \
        if results else []
    self.open_region("for", carried, after)
    self.emit(f"{self.define(iv)} = {n} & {hex(mask)}")


@_op("scf.if")
def _if(self, results, rest, op):
    m = self.match(rf"({VALUE})\s*(?:->\s*\((.*)\))?\s*\{{", rest, op)
    if len(split_top(m.group(2) or "")) != len(results):
        self.fail("scf.if: result types and results do not match")
    self.emit(f"if {self.use(m.group(1))}:")
    self.open_region("if", [self.define(r) for r in results])


@_op("scf.yield")
def _yield(self, results, rest, op):
    m = self.match(r"(.*?)(?:\s*:\s*(.*))?", rest, op)
    values = [self.use(v) for v in split_top(m.group(1))]
    self.no_result(results, op)
    if not self.regions or len(values) != len(self.regions[-1].targets):
        self.fail("scf.yield does not match its region's results")
    if values:
        self.regions[-1].yields += 1
        self.emit(f"{', '.join(self.regions[-1].targets)}, = {', '.join(values)},")


# -- gpu --

def _gpu_dim(self, rest, op):
    return "xyz".index(self.match(r"([xyz])(?:\s+upper_bound\s+\d+)?", rest, op).group(1))


def _gpu_id(self, results, rest, op):
    self.emit(f"{self.one_result(results, op)} = {GPU_IDS[op]}[{_gpu_dim(self, rest, op)}]")


OPS.update({op: _gpu_id for op in GPU_IDS})


@_op("gpu.global_id")
def _global_id(self, results, rest, op):
    d = _gpu_dim(self, rest, op)
    self.emit(f"{self.one_result(results, op)} = _bid[{d}] * _bdim[{d}] + _tid[{d}]")


@_op("gpu.barrier")
def _barrier(self, results, rest, op):
    if rest.strip() or results:
        self.fail(f"unsupported gpu.barrier form: {rest}")
    self.emit(f"yield {self.line}")


@_op("gpu.return")
def _return(self, results, rest, op):
    if rest.strip() or results:
        self.fail("gpu.return takes no operands in a kernel")
    self.emit("return")


# -- memory --

def _scalar_type(self, ty):
    if ty not in FLOAT_WIDTHS and (ty not in INT_WIDTHS or ty == "index"):
        self.fail(f"unsupported memory element type {ty}")
    return ty


@_op("llvm.getelementptr")
def _gep(self, results, rest, op):
    m = self.match(rf"(?:(?:inbounds|nuw|nusw)\s+)*({VALUE})\[([^\]]*)\]\s*:\s*\(([^)]*)\)\s*"
                   r"->\s*(!llvm\.ptr(?:<\d+>)?)\s*,\s*(\S+)", rest, op)
    base, index, types, elem = m.group(1), m.group(2).strip(), split_top(m.group(3)), m.group(5)
    size = max((INT_WIDTHS.get(_scalar_type(self, elem)) or FLOAT_WIDTHS[elem]) // 8, 1)
    if "," in index:
        self.fail("llvm.getelementptr with several indices is not supported")
    if index.startswith("%"):
        if len(types) != 2:
            self.fail("llvm.getelementptr: expected (pointer type, index type)")
        _, _, sign = int_info(types[1])
        offset = f"(({self.use(index)} ^ {hex(sign)}) - {hex(sign)}) * {size}"
    elif re.match(r"-?\d+$", index):
        offset = str(int(index) * size)
    else:
        self.fail(f"llvm.getelementptr: unsupported index {index}")
    p = self.use(base)
    self.emit(f"{self.one_result(results, op)} = ({p}[0], {p}[1] + {offset})")


@_op("llvm.load")
def _llvm_load(self, results, rest, op):
    m = self.match(rf"({VALUE})\s*:\s*!llvm\.ptr(?:<\d+>)?\s*->\s*(\S+)", rest, op)
    ty = _scalar_type(self, m.group(2))
    self.emit(f"{self.one_result(results, op)} = _load_{ty}({self.use(m.group(1))})")


@_op("llvm.store")
def _llvm_store(self, results, rest, op):
    m = self.match(rf"({VALUE})\s*,\s*({VALUE})\s*:\s*(\S+)\s*,\s*!llvm\.ptr(?:<\d+>)?",
                   rest, op)
    ty = _scalar_type(self, m.group(3))
    self.no_result(results, op)
    self.emit(f"_store_{ty}({self.use(m.group(2))}, {self.use(m.group(1))})")


def _memref_index(self, ref, indices, ty):
    if ref not in self.memrefs:
        self.fail(f"{ref} is not a workgroup or private memref of the function")
    shape, _, _ = memref_type(ty)
    if memref_type(self.memrefs[ref]) != memref_type(ty):
        self.fail(f"{ref} has type {self.memrefs[ref]}, used as {ty}")
    values = [self.use(i) for i in split_top(indices)]
    if len(values) != len(shape):
        self.fail(f"{ref}: {len(values)} indices for a rank-{len(shape)} memref")
    if len(values) == 1:
        return values[0]
    return f"_flat(({', '.join(values)},), {shape!r})"


@_op("memref.load")
def _memref_load(self, results, rest, op):
    m = self.match(rf"({VALUE})\[([^\]]*)\]\s*:\s*(memref<.+>)", rest, op)
    k = _memref_index(self, m.group(1), m.group(2), m.group(3))
    self.emit(f"{self.one_result(results, op)} = {self.use(m.group(1))}.load(_me, {k})")


@_op("memref.store")
def _memref_store(self, results, rest, op):
    m = self.match(rf"({VALUE})\s*,\s*({VALUE})\[([^\]]*)\]\s*:\s*(memref<.+>)", rest, op)
    k = _memref_index(self, m.group(2), m.group(3), m.group(4))
    self.no_result(results, op)
    self.emit(f"{self.use(m.group(2))}.store(_me, {k}, {self.use(m.group(1))})")


# ---- launches ------------------------------------------------------------------------------

class Kernel:
    """One translated gpu.func, runnable on a grid."""

    def __init__(self, func):
        self.func = func
        self.source, namespace, self.origin = Translator(func).translate()
        self.filename = f"<mlir @{func.name}>"
        exec(compile(self.source, self.filename, "exec"), namespace)
        self.fn = namespace["kernel"]
        self.lines = dict(func.body)

    def bind(self, args):
        """The argument values in the work-item's representation."""
        params = self.func.params
        if len(args) != len(params):
            raise KernelError(f"@{self.func.name} takes {len(params)} arguments, got {len(args)}")
        out = []
        for (name, ty), a in zip(params, args):
            if PTR_TYPE.match(ty):
                is_ptr = isinstance(a, tuple) and isinstance(a[0], Buffer)
                out.append(a if is_ptr else (Buffer(a, name), 0))
            elif ty in INT_WIDTHS:
                out.append(int(a) & int_info(ty)[1])
            elif ty in FLOAT_WIDTHS:
                out.append(NP_FLOAT[ty](a))
            else:
                raise KernelError(f"@{self.func.name}: unsupported argument type {ty}")
        return tuple(out)

    def run(self, args, grid, block):
        """Runs the workgroups one after the other (x fastest); the race check covers the whole
        launch, since workgroups are not ordered with respect to each other."""
        grid, block = tuple(grid) + (1,) * (3 - len(grid)), tuple(block) + (1,) * (3 - len(block))
        bound = self.bind(args)
        TRACKER.reset()
        try:
            with np.errstate(all="ignore"):
                for bz in range(grid[2]):
                    for by in range(grid[1]):
                        for bx in range(grid[0]):
                            self.run_group(bound, (bx, by, bz), block, grid)
        finally:
            TRACKER.reset()

    def run_group(self, args, bid, block, grid):
        """Runs one workgroup's work-items round-robin from barrier to barrier."""
        shared = tuple(Shared(f"{n} of workgroup {bid}", *memref_type(t)[:2])
                       for n, t in self.func.workgroup)
        pending = []
        for tz in range(block[2]):
            for ty in range(block[1]):
                for tx in range(block[0]):
                    tid, me = (tx, ty, tz), len(pending)
                    pending.append((me, tid, self.fn(args, tid, bid, block, grid, shared, me)))
        TRACKER.group = bid
        while pending:
            TRACKER.phase += 1
            waiting, finished = [], []
            for me, tid, item in pending:
                TRACKER.me = me
                try:
                    waiting.append((me, tid, item, next(item)))
                except StopIteration:
                    finished.append(tid)
                except Exception as e:
                    raise KernelError(self.describe(e, bid, tid)) from e
            self.check_barrier(bid, waiting, finished)
            for s in shared:
                s.new_phase()
            pending = [w[:3] for w in waiting]

    def check_barrier(self, bid, waiting, finished):
        where = {w[3] for w in waiting}
        if waiting and finished:
            shown = ", ".join(map(str, finished[:3])) + (" ..." if len(finished) > 3 else "")
            raise KernelError(
                f"@{self.func.name}: workgroup {bid}: {len(finished)} work-items ({shown}) "
                f"returned while {len(waiting)} wait at gpu.barrier (line {min(where)})")
        if len(where) > 1:
            raise KernelError(f"@{self.func.name}: workgroup {bid}: work-items wait at different "
                              f"gpu.barrier ops (lines {sorted(where)})")

    def describe(self, error, bid, tid):
        """The error with the kernel, the work-item and the MLIR line that raised it."""
        line, tb = None, error.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == self.filename:
                line = self.origin[tb.tb_lineno - 1]
            tb = tb.tb_next
        text = f"line {line}: {self.lines.get(line, '')}: " if line else ""
        kind = "" if isinstance(error, KernelError) else f"{type(error).__name__}: "
        return f"@{self.func.name}: workgroup {bid}, work-item {tid}: {text}{kind}{error}"


class Module:
    """The gpu.funcs of an MLIR module, each translated once."""

    def __init__(self, text):
        self.kernels = {name: Kernel(f) for name, f in parse_module(text).items()}

    def run(self, kernel, args, grid=(1, 1, 1), block=(1, 1, 1)):
        """Launches `kernel` on grid x block work-items (grid counts workgroups, as
        gpu.grid_dim does); pointer arguments' memory is written in place."""
        if kernel not in self.kernels:
            raise KernelError(f"no gpu.func @{kernel} in the module")
        self.kernels[kernel].run(args, grid, block)
