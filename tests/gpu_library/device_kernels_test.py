#!/usr/bin/env python3
"""Runs the GPU library kernels' device code (the MLIR of kernels/gpu/device_kernels.py, which is
compiled for CUDA and HSA alike) through device_kernel_interp.py with the launches the host code
makes (kernels/gpu/gpu_library.h launchLinear; kernels/gemm/gemm_hsa.cc) and compares every
output buffer, including the elements outside the written view, with independent numpy
references:

  ral_strided_copy_* / ral_strided_fill_*  padded, transposed, reversed, size-1-dim, scalar and
                                           empty views, grids smaller than the element count
  ral_rng_uniform_*                        bit for bit against Philox4x32-10 (kernels/rng/philox.h)
  ral_gemm_*                               against float64 within the rounding error bound
  ral_order_rows_*                         ral_topk / ral_sort against a stable numpy sort (ties,
                                           NaN, 64-bit values), several rows per workgroup

Every kernel of the module must have a check (or be listed in PENDING): a check is a function
registered with @check(kernel names...) that gets the Module and raises CheckFailed.

  device_kernels_test.py --mlir build/kernels/gpu/device_kernels.mlir [--only SUBSTRING]
"""
import argparse
import os
import struct
import sys
import time

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import device_kernel_interp as interp  # noqa: E402

RANK = 6  # kMaxRank (kernels/gpu/device_args.h)
BLOCK = 256  # kLinearBlock
TILE = 16  # kGemmTile
MAX_GROUPS = 65535  # launchLinear's cap
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}

# Kernels whose checks are still to be written (remove a name when its check is added). A check
# is a function decorated with @check("kernel", ...) taking the Module: it builds buffers and
# arguments in the struct order of kernels/gpu/device_args.h, launches with launch_linear (the
# grid-stride kernels) or module.run(kernel, args, grid, block) for any other grid, and compares
# whole buffers (expect_equal) so that writes outside the view show too.
PENDING = ()


class CheckFailed(Exception):
    """The device code's output differs from the reference."""


CHECKS = {}  # check function -> the kernels it covers


def check(*kernels):
    """Registers a check function covering `kernels`."""
    def register(fn):
        CHECKS[fn] = kernels
        return fn
    return register


# ---- launches and views --------------------------------------------------------------------

def linear_groups(count, max_groups=MAX_GROUPS):
    """launchLinear's grid: ceil(count / 256) workgroups, capped (0 for an empty count)."""
    return min((count + BLOCK - 1) // BLOCK, max_groups) if count > 0 else 0


def run_linear(module, kernel, groups, make_args):
    """Runs a grid-stride kernel on `groups` 256-wide workgroups; make_args(threads) gives its
    argument list with `threads` = the grid's work-items in its slot."""
    module.run(kernel, make_args(groups * BLOCK), grid=(groups, 1, 1), block=(BLOCK, 1, 1))


def launch_linear(module, kernel, count, make_args, max_groups=MAX_GROUPS):
    """launchLinear (kernels/gpu/gpu_library.h): nothing for count <= 0, else run_linear. A
    max_groups below the host's makes the grid-stride loop take several turns."""
    groups = linear_groups(count, max_groups)
    if groups:
        run_linear(module, kernel, groups, make_args)


def pad_view(sizes, *stride_lists):
    """padView: leading dims of size 1 and stride 0 up to RANK."""
    extra = RANK - len(sizes)
    return [1] * extra + list(sizes), [[0] * extra + list(s) for s in stride_lists]


def view_offsets(sizes, strides):
    """Element offsets of a view's elements in row-major order."""
    if not sizes:
        return np.zeros(1, np.int64)
    index = np.indices(sizes, dtype=np.int64).reshape(len(sizes), -1)
    return (np.asarray(strides, np.int64)[:, None] * index).sum(axis=0)


def buffer_for(offsets, dtype, rng, pad=3):
    """Random bytes holding a view at `offsets` with `pad` spare elements on each side; returns
    (array, element index of the view's origin)."""
    lo = int(offsets.min()) if offsets.size else 0
    hi = int(offsets.max()) if offsets.size else 0
    base = pad - lo
    n = base + hi + 1 + pad
    return np.frombuffer(rng.bytes(n * np.dtype(dtype).itemsize), dtype).copy(), base


def expect_equal(what, got, want):
    """Bitwise comparison (NaN-safe), naming the first differing elements."""
    g = got.view(UINT[got.itemsize])
    w = want.view(UINT[want.itemsize])
    bad = np.flatnonzero(g != w)
    if bad.size:
        shown = ", ".join(f"[{i}] {got[i]!r} (want {want[i]!r})" for i in bad[:5])
        raise CheckFailed(f"{what}: {bad.size} of {got.size} elements differ: {shown}")


def f64_bits(x):
    """A double argument as the i64 bit pattern the kernels bitcast."""
    return struct.unpack("<q", struct.pack("<d", x))[0]


# ---- strided copy and fill -----------------------------------------------------------------

# (name, sizes, source strides, destination strides, max groups): strides in elements.
VIEWS = [
    ("padded 3x5 into a transposed 5x4", (3, 5), (7, 1), (1, 4), MAX_GROUPS),
    ("size-1 dims", (1, 4, 1, 3), (1000, 3, 77, 1), (0, 1, 0, 5), MAX_GROUPS),
    ("rank 6, 420 elements on one workgroup", (2, 3, 1, 2, 5, 7), (1, 2, 6, 6, 12, 60),
     (280, 92, 0, 46, 9, 1), 1),
    ("1500 elements transposed on two workgroups", (30, 50), (50, 1), (1, 31), 2),
    ("reversed rows", (4, 6), (6, -1), (8, 1), MAX_GROUPS),
    ("scalar", (), (), (), MAX_GROUPS),
    ("empty", (0, 5), (5, 1), (5, 1), MAX_GROUPS),
]


@check(*[f"ral_strided_copy_{s}" for s in (1, 2, 4, 8)])
def strided_copy(module):
    """Every element size on every view of VIEWS: the view copied, the rest of both buffers
    untouched."""
    rng = np.random.default_rng(1)
    for size in (1, 2, 4, 8):
        for name, sizes, src_strides, dst_strides, max_groups in VIEWS:
            src_off, dst_off = view_offsets(sizes, src_strides), view_offsets(sizes, dst_strides)
            assert np.unique(dst_off).size == dst_off.size, f"{name}: overlapping destination"
            src, src_base = buffer_for(src_off, UINT[size], rng)
            dst, dst_base = buffer_for(dst_off, UINT[size], rng)
            want_src, want = src.copy(), dst.copy()
            want[dst_base + dst_off] = src[src_base + src_off]
            count = int(np.prod(sizes, dtype=np.int64))
            padded, (ss, ds) = pad_view(sizes, src_strides, dst_strides)

            def args(threads):
                return [interp.pointer(src, src_base * size, "src"),
                        interp.pointer(dst, dst_base * size, "dst"), count, threads] + \
                    padded + ss + ds
            kernel = f"ral_strided_copy_{size}"
            launch_linear(module, kernel, count, args, max_groups)
            if count == 0:  # the host launches nothing; the device code must do nothing too
                run_linear(module, kernel, 1, args)
            expect_equal(f"{kernel} {name}: destination", dst, want)
            expect_equal(f"{kernel} {name}: source", src, want_src)


@check(*[f"ral_strided_fill_{s}" for s in (1, 2, 4, 8)])
def strided_fill(module):
    """Every element size on every destination view of VIEWS, with a 64-bit value whose low
    bytes each size keeps."""
    rng = np.random.default_rng(2)
    value = 0xF1E2D3C4B5A69788  # each size keeps its low bytes
    for size in (1, 2, 4, 8):
        for name, sizes, _, dst_strides, max_groups in VIEWS:
            dst_off = view_offsets(sizes, dst_strides)
            dst, base = buffer_for(dst_off, UINT[size], rng)
            want = dst.copy()
            want[base + dst_off] = value & ((1 << (8 * size)) - 1)
            count = int(np.prod(sizes, dtype=np.int64))
            padded, (ds,) = pad_view(sizes, dst_strides)

            def args(threads):
                return [interp.pointer(dst, base * size, "dst"), count, threads, value] + \
                    padded + ds
            kernel = f"ral_strided_fill_{size}"
            launch_linear(module, kernel, count, args, max_groups)
            if count == 0:
                run_linear(module, kernel, 1, args)
            expect_equal(f"{kernel} {name}", dst, want)


# ---- uniform random numbers ----------------------------------------------------------------

M32, M64 = 0xFFFFFFFF, 0xFFFFFFFFFFFFFFFF


def philox4x32_10(ctr, k0, k1):
    """Philox4x32-10 (kernels/rng/philox.h) on counter words `ctr` and key {k0, k1}."""
    c = list(ctr)
    for _ in range(10):
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k0, p1 & M32, (p0 >> 32) ^ c[3] ^ k1, p0 & M32]
        k0, k1 = (k0 + 0x9E3779B9) & M32, (k1 + 0xBB67AE85) & M32
    return c


def stream_block(seed, offset, block):
    """philox::streamBlock: block `block` of the stream (seed, offset)."""
    ctr = (offset + block) & M64
    return philox4x32_10([ctr & M32, ctr >> 32, 0, 0], seed & M32, seed >> 32)


def check_philox():
    """The reference itself against Random123's known-answer vectors."""
    kats = [([0, 0, 0, 0], 0, 0, [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]),
            ([M32] * 4, M32, M32, [0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD]),
            ([0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344], 0xA4093822, 0x299F31D0,
             [0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1])]
    for ctr, k0, k1, want in kats:
        if philox4x32_10(ctr, k0, k1) != want:
            raise CheckFailed("the Python Philox reference fails a known-answer vector")


def bf16_nearest(x):
    """float32 -> bfloat16 bits, nearest with ties to even, chosen by exact float64 distance."""
    bits = int(np.float32(x).view(np.uint32))
    down = bits & 0xFFFF0000
    up = down + 0x10000
    dist = [abs(float(np.uint32(b).view(np.float32)) - float(x)) for b in (down, up)]
    if dist[0] != dist[1]:
        return (down if dist[0] < dist[1] else up) >> 16
    return (down if not (down >> 16) & 1 else up) >> 16


def uniform_reference(kind, count, seed, offset, low, span):
    """The count values of ral_rng_uniform_<kind>, in logical order, as a numpy array."""
    per = 2 if kind == "f64" else 4
    blocks = [stream_block(seed, offset, b) for b in range((count + per - 1) // per)]
    words = [blocks[i // per] for i in range(count)]
    if kind == "f64":
        out = []
        for i, w in enumerate(words):
            a, b = w[2 * (i % 2)], w[2 * (i % 2) + 1]
            u = ((a >> 5) * 67108864.0 + (b >> 6)) * 2.0 ** -53
            out.append(low + u * span)
        return np.array(out, np.float64)
    shift = {"f32": 8, "f16": 21, "bf16": 24}[kind]
    low32, span32 = np.float32(low), np.float32(span)
    r = [low32 + (np.float32(w[i % 4] >> shift) * np.float32(2.0 ** (shift - 32))) * span32
         for i, w in enumerate(words)]
    if kind == "f16":
        return np.array(r, np.float16)
    if kind == "bf16":
        return np.array([bf16_nearest(x) for x in r], np.uint16)
    return np.array(r, np.float32)


# (kind, sizes, strides, seed, offset, low, high, max groups). With [low, high) = [1, 2) every
# f16 and bf16 value with an odd last bit of u is a tie of the final rounding (to even).
RNG_CASES = [
    ("f32", (7, 43), (50, 1), 0x0123456789ABCDEF, 0xFFFFFFF0, 0.1, 2.7, MAX_GROUPS),
    ("f64", (7, 43), (1, 8), 0xFEDCBA9876543210, 2**64 - 37, -3.5, 1e3, MAX_GROUPS),
    ("f16", (3, 700), (701, 1), 42, 12345, -3.0, 3.5, 1),
    ("f16", (50,), (2,), 7, 0, 1.0, 2.0, MAX_GROUPS),
    ("bf16", (2, 513), (1, 3), 2**63 + 5, 2**32 - 1, -0.75, 250.0, MAX_GROUPS),
    ("bf16", (50,), (3,), 7, 0, 1.0, 2.0, MAX_GROUPS),
]
STORAGE = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": np.uint16}


@check(*[f"ral_rng_uniform_{k}" for k in ("f32", "f64", "f16", "bf16")])
def rng_uniform(module):
    """RNG_CASES bit for bit, with the grid launchLinear makes for philox::blocksFor blocks."""
    check_philox()
    rng = np.random.default_rng(3)
    for kind, sizes, strides, seed, offset, low, high, max_groups in RNG_CASES:
        offs = view_offsets(sizes, strides)
        out, base = buffer_for(offs, STORAGE[kind], rng)
        count = offs.size
        want = out.copy()
        want[base + offs] = uniform_reference(kind, count, seed, offset, low, high - low)
        padded, (st,) = pad_view(sizes, strides)
        itemsize = out.itemsize

        def args(threads):
            return [interp.pointer(out, base * itemsize, "out"), count, threads, seed, offset,
                    f64_bits(low), f64_bits(high - low)] + padded + st
        blocks = (count + 1) // 2 if kind == "f64" else (count + 3) // 4  # philox::blocksFor
        launch_linear(module, f"ral_rng_uniform_{kind}", blocks, args, max_groups)
        expect_equal(f"ral_rng_uniform_{kind} [{low}, {high})", out, want)


# ---- GEMM ----------------------------------------------------------------------------------

def gemm_operand(kind, shape, transposed, rng, nan_padding, pad=2):
    """A matrix of exactly representable values stored row- or column-major with padded
    leading dimension: (storage array, base element, row stride, column stride, float64
    values). NaN padding makes any read outside an input's view show in the result."""
    rows, cols = shape
    if kind == "bf16":
        values = rng.integers(-127, 128, size=shape) / 64.0  # 8 significant bits at most
    else:
        values = rng.standard_normal(shape).astype(STORAGE[kind]).astype(np.float64)
    ld = (rows if transposed else cols) + pad
    rs, cs = (1, ld) if transposed else (ld, 1)
    offs = view_offsets(shape, (rs, cs))
    store, base = buffer_for(offs, STORAGE[kind], rng)
    if nan_padding:
        store[:] = 0x7FC0 if kind == "bf16" else np.nan
    if kind == "bf16":
        encoded = (values.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    else:
        encoded = values.astype(STORAGE[kind])
    store[base + offs] = encoded.reshape(-1)
    return store, base, rs, cs, values


def gemm_result(kind, c, base, rs, cs, m, n):
    """The m x n view of c as float64."""
    offs = view_offsets((m, n), (rs, cs))
    got = c[base + offs]
    if kind == "bf16":
        got = (got.astype(np.uint32) << 16).view(np.float32)
    return got.astype(np.float64).reshape(m, n)


# kind: (m, n, k, a transposed, b transposed, c transposed)
GEMM_CASES = [
    ("f32", 37, 21, 35, True, False, False),
    ("f32", 32, 16, 16, False, True, False),  # whole tiles
    ("f32", 3, 2, 0, False, False, False),  # k = 0: c = 0
    ("f64", 19, 33, 17, False, True, True),
    ("f16", 17, 33, 47, True, True, False),
    ("bf16", 5, 40, 19, False, False, True),
]
# unit roundoff of the accumulation and of the stored result
ROUNDOFF = {"f32": (2.0**-24, 0.0), "f64": (2.0**-53, 0.0), "f16": (2.0**-24, 2.0**-11),
            "bf16": (2.0**-24, 2.0**-8)}


@check(*[f"ral_gemm_{k}" for k in ("f32", "f64", "f16", "bf16")])
def gemm(module):
    """GEMM_CASES on ceil(n/16) x ceil(m/16) workgroups of 16 x 16, as gemm_hsa.cc launches."""
    rng = np.random.default_rng(4)
    for kind, m, n, k, ta, tb, tc in GEMM_CASES:
        a, a_base, a_rs, a_cs, av = gemm_operand(kind, (m, k), ta, rng, True)
        b, b_base, b_rs, b_cs, bv = gemm_operand(kind, (k, n), tb, rng, True)
        c, c_base, c_rs, c_cs, _ = gemm_operand(kind, (m, n), tc, rng, False)
        want_c = c.copy()
        size = c.itemsize
        args = [interp.pointer(a, a_base * size, "a"), interp.pointer(b, b_base * size, "b"),
                interp.pointer(c, c_base * size, "c"), m, n, k, a_rs, a_cs, b_rs, b_cs, c_rs,
                c_cs]
        grid = ((n + TILE - 1) // TILE, (m + TILE - 1) // TILE, 1)
        module.run(f"ral_gemm_{kind}", args, grid=grid, block=(TILE, TILE, 1))
        what = f"ral_gemm_{kind} {m}x{n}x{k}"
        got = gemm_result(kind, c, c_base, c_rs, c_cs, m, n)
        want = av @ bv
        u_acc, u_out = ROUNDOFF[kind]
        acc_err = k * u_acc / (1 - k * u_acc) * (np.abs(av) @ np.abs(bv))
        bound = acc_err + u_out * (np.abs(want) + acc_err) + 1e-300
        err = np.abs(got - want)
        if not (err <= bound).all():
            i, j = np.unravel_index(np.argmax(err - bound), err.shape)
            raise CheckFailed(f"{what}: c[{i}, {j}] = {got[i, j]!r}, want {want[i, j]!r} "
                              f"within {bound[i, j]:.3g}")
        inside = c_base + view_offsets((m, n), (c_rs, c_cs))
        c[inside] = want_c[inside]
        expect_equal(f"{what}: c outside the view", c, want_c)


# ---- ordering (ral_topk, ral_sort) -------------------------------------------------------

ORDER_TYPES = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64}

# (type, leading dims, n, k, descending, workgroups, in place): the grids are smaller than the
# row count where it matters, so workgroups take several rows and reuse their scratch slot.
ORDER_CASES = [
    ("f32", (3,), 37, 5, True, 2, False),
    ("f64", (2, 2), 16, 16, False, 4, False),
    ("i32", (1,), 1, 1, False, 1, False),
    ("i64", (5,), 9, 3, True, 2, False),
    ("f32", (2,), 300, 300, False, 1, False),  # 512 padded pairs: several per work-item
    ("i64", (2, 1, 3), 20, 20, True, 3, True),  # sort in place, rank 4
    ("f64", (), 7, 2, False, 1, False),  # rank 1: one row
]


def order_reference(x, k, descending):
    """Each row's first k (value, index) pairs: by value (NaN largest), then lower index."""
    rows = x.reshape(-1, x.shape[-1])
    index = np.arange(x.shape[-1])
    nan = np.isnan(rows) if rows.dtype.kind == "f" else np.zeros(rows.shape, bool)
    order = np.empty((rows.shape[0], k), np.int64)
    for r, row in enumerate(rows):
        key = np.where(nan[r], 0, row)
        # np.lexsort: the last key sorts first; -key is exact for the values used here.
        keys = (index, -key, ~nan[r]) if descending else (index, key, nan[r])
        order[r] = np.lexsort(keys)[:k]
    return np.take_along_axis(rows, order, 1), order


@check(*[f"ral_order_rows_{t}" for t in ORDER_TYPES])
def order_rows(module):
    """ORDER_CASES with a column-major input, dense values and padded indices (or the values
    written over the input itself), as topk_sort_gpu.h launches them."""
    rng = np.random.default_rng(5)
    for ty, lead, n, k, descending, groups, in_place in ORDER_CASES:
        dtype = ORDER_TYPES[ty]
        shape = lead + (n,)
        x = rng.integers(-4, 5, shape).astype(dtype)  # many ties
        if ty == "i64":
            x *= (1 << 40) + 3  # values that differ in both 32-bit words
        elif dtype().dtype.kind == "f" and x.size > 1:
            x.flat[1] = np.nan
        out_shape = lead + (k,)
        in_strides = tuple(int(np.prod(shape[:d])) for d in range(len(shape)))  # column-major
        v_strides = tuple(int(np.prod(out_shape[d + 1:])) for d in range(len(shape)))
        i_strides = tuple(int(np.prod([s + 1 for s in out_shape[d + 1:]]))
                          for d in range(len(shape)))
        xin, x_base = buffer_for(view_offsets(shape, in_strides), dtype, rng)
        xin[x_base + view_offsets(shape, in_strides)] = x.reshape(-1)
        if in_place:
            values, v_base, v_strides = xin, x_base, in_strides
        else:
            values, v_base = buffer_for(view_offsets(out_shape, v_strides), dtype, rng)
        indices, i_base = buffer_for(view_offsets(out_shape, i_strides), np.int64, rng)
        want_values, want_indices = values.copy(), indices.copy()
        ref_v, ref_i = order_reference(x, k, descending)
        want_values[v_base + view_offsets(out_shape, v_strides)] = ref_v.reshape(-1)
        want_indices[i_base + view_offsets(out_shape, i_strides)] = ref_i.reshape(-1)
        log2_padded = max(n - 1, 0).bit_length()
        padded = 1 << log2_padded
        size = np.dtype(dtype).itemsize
        scratch_index = np.zeros(groups * padded, np.int64)
        scratch_value = np.zeros(groups * padded, dtype)
        rows = int(np.prod(lead, dtype=np.int64))
        sizes, (xs, vs, ist) = pad_view(lead, in_strides[:-1], v_strides[:-1], i_strides[:-1])
        args = [interp.pointer(xin, x_base * size, "in"),
                interp.pointer(values, v_base * size, "values"),
                interp.pointer(indices, i_base * 8, "indices"),
                interp.pointer(scratch_index, 0, "scratch_index"),
                interp.pointer(scratch_value, 0, "scratch_value"),
                rows, n, padded, log2_padded, k, int(descending), groups, in_strides[-1],
                v_strides[-1], i_strides[-1]] + sizes + xs + vs + ist
        module.run(f"ral_order_rows_{ty}", args, grid=(groups, 1, 1), block=(BLOCK, 1, 1))
        what = (f"ral_order_rows_{ty} {'x'.join(map(str, shape))} k {k} "
                f"{'descending' if descending else 'ascending'}{' in place' if in_place else ''}")
        if not in_place:
            expect_equal(f"{what}: input", xin[x_base + view_offsets(shape, in_strides)],
                         x.reshape(-1))
        expect_equal(f"{what}: indices", indices, want_indices)
        if in_place:  # only the first k of each row are written
            got = values[v_base + view_offsets(out_shape, v_strides)]
            expect_equal(f"{what}: values", got, ref_v.reshape(-1))
        else:
            expect_equal(f"{what}: values", values, want_values)


# ---- the interpreter itself ---------------------------------------------------------------

# Operations whose results the kernels depend on, each stored into an 8-byte slot of `out`:
# (value, type, expected as a Python number). Inputs: %a = -7, %b = 3.
SEMANTICS_BODY = """
    %x = arith.trunci %a : i64 to i32
    %y = arith.trunci %b : i64 to i32
    %divsi = arith.divsi %x, %y : i32
    %remsi = arith.remsi %x, %y : i32
    %divui = arith.divui %x, %y : i32
    %remui = arith.remui %x, %y : i32
    %floor = arith.floordivsi %x, %y : i32
    %ceil = arith.ceildivsi %x, %y : i32
    %c1 = arith.constant 1 : i32
    %c31 = arith.constant 31 : i32
    %shrsi = arith.shrsi %x, %c1 : i32
    %shrui = arith.shrui %x, %c1 : i32
    %shli = arith.shli %x, %c31 : i32
    %slt = arith.cmpi slt, %x, %y : i32
    %ult = arith.cmpi ult, %x, %y : i32
    %sge = arith.cmpi sge, %x, %y : i32
    %maxsi = arith.maxsi %x, %y : i32
    %minui = arith.minui %x, %y : i32
    %mu:2 = arith.mului_extended %x, %y : i32
    %ms:2 = arith.mulsi_extended %x, %y : i32
    %xf = arith.sitofp %x : i32 to f32
    %uf = arith.uitofp %x : i32 to f32
    %ones = arith.constant -1 : i64
    %onesf = arith.uitofp %ones : i64 to f32
    %odd = arith.constant 9007199254740993 : i64
    %oddf = arith.sitofp %odd : i64 to f64
    %odd32 = arith.constant 0x1000001 : i32
    %odd32f = arith.sitofp %odd32 : i32 to f32
    %tenth = arith.constant 0.1 : f32
    %fifth = arith.constant 2.000000e-01 : f32
    %sum = arith.addf %tenth, %fifth : f32
    %h = arith.truncf %sum : f32 to f16
    %hh = arith.mulf %h, %h : f16
    %hw = arith.extf %hh : f16 to f64
    %d = arith.extf %sum : f32 to f64
    %three = arith.constant 3.0 : f64
    %d3 = arith.divf %d, %three : f64
    %zero = arith.constant -0.0 : f64
    %dz = arith.divf %d, %zero : f64
    %nan = arith.constant 0x7FC00000 : f32
    %uno = arith.cmpf uno, %nan, %sum : f32
    %olt = arith.cmpf olt, %nan, %sum : f32
    %ultf = arith.cmpf ult, %nan, %sum : f32
    %one = arith.cmpf one, %sum, %sum : f32
    %maxf = arith.maximumf %nan, %sum : f32
    %maxn = arith.maxnumf %nan, %sum : f32
    %neg = arith.negf %sum : f32
    %m25 = arith.constant -2.5 : f32
    %fi = arith.fptosi %m25 : f32 to i32
    %sel = arith.select %slt, %x, %y : i32
    %tiny = arith.constant 5.9604644775390625E-8 : f32
    %bits = arith.bitcast %sum : f32 to i32
    %hex16 = arith.constant 0xFFFF : i16
    %ext16 = arith.extsi %hex16 : i16 to i64
    %t = arith.constant true
    %tx = arith.extui %t : i1 to i64
    %ts = arith.extsi %t : i1 to i64
    %i0 = arith.constant 0 : index
    %i1 = arith.constant 1 : index
    %i10 = arith.constant 10 : index
    %tot = scf.for %i = %i0 to %i10 step %i1 iter_args(%s = %i0) -> (index) {
      %n = arith.addi %s, %i : index
      scf.yield %n : index
    }
    %m3 = arith.constant -3 : i64
    %two = arith.constant 2 : i64
    %one64 = arith.constant 1 : i64
    %z = arith.constant 0 : i64
    %cnt:2 = scf.for %j = %m3 to %two step %one64 iter_args(%c = %z, %nc = %z) -> (i64, i64) : i64 {
      %c2 = arith.addi %c, %one64 : i64
      %isneg = arith.cmpi slt, %j, %z : i64
      %nn = scf.if %isneg -> (i64) {
        %q = arith.addi %nc, %one64 : i64
        scf.yield %q : i64
      } else {
        scf.yield %nc : i64
      }
      scf.yield %c2, %nn : i64, i64
    }
"""


def semantics_expected():
    """(value, type, expected) of SEMANTICS_BODY, computed independently."""
    x, y, m32 = -7, 3, 0xFFFFFFFF
    s = np.float32(np.float32(0.1) + np.float32(0.2))
    h = np.float16(s)
    nan32 = np.uint32(0x7FC00000).view(np.float32)
    return [
        ("%divsi", "i32", -2), ("%remsi", "i32", -1), ("%divui", "i32", (x & m32) // y),
        ("%remui", "i32", (x & m32) % y), ("%floor", "i32", -3), ("%ceil", "i32", -2),
        ("%shrsi", "i32", -4), ("%shrui", "i32", (x & m32) >> 1), ("%shli", "i32", 1 << 31),
        ("%slt", "i1", 1), ("%ult", "i1", 0), ("%sge", "i1", 0), ("%maxsi", "i32", 3),
        ("%minui", "i32", 3), ("%mu#0", "i32", (x & m32) * y), ("%mu#1", "i32", 2),
        ("%ms#0", "i32", -21), ("%ms#1", "i32", -1), ("%xf", "f32", -7.0),
        ("%uf", "f32", 2.0**32), ("%onesf", "f32", 2.0**64), ("%oddf", "f64", 2.0**53),
        ("%odd32f", "f32", 2.0**24), ("%sum", "f32", s), ("%hh", "f16", np.float16(h * h)),
        ("%hw", "f64", float(np.float16(h * h))), ("%d3", "f64", float(s) / 3.0),
        ("%dz", "f64", -np.inf), ("%uno", "i1", 1), ("%olt", "i1", 0), ("%ultf", "i1", 1),
        ("%one", "i1", 0), ("%maxf", "f32", nan32), ("%maxn", "f32", s), ("%neg", "f32", -s),
        ("%fi", "i32", -2), ("%sel", "i32", -7), ("%tiny", "f32", 2.0**-24),
        ("%bits", "i32", int(s.view(np.uint32))), ("%ext16", "i64", -1), ("%tx", "i64", 1),
        ("%ts", "i64", -1), ("%tot", "index", 45), ("%cnt#0", "i64", 5), ("%cnt#1", "i64", 3),
    ]


FORMATS = {"i1": "<B", "i32": "<I", "i64": "<Q", "index": "<Q", "f16": "<H", "f32": "<I",
           "f64": "<Q"}


def encode(ty, value):
    """A value's bytes as the kernel stores them (floats by their bits, ints two's complement)."""
    if ty in ("f16", "f32", "f64"):
        return np.array(value, {"f16": np.float16, "f32": np.float32, "f64": np.float64}[ty]) \
            .tobytes()
    return struct.pack(FORMATS[ty], value & ((1 << (8 * struct.calcsize(FORMATS[ty]))) - 1))


def semantics_module(expected):
    """SEMANTICS_BODY with a store of each value, plus kernels that must fail at run time."""
    stores = []
    for k, (value, ty, _) in enumerate(expected):
        store_ty = "i64" if ty == "index" else ty
        stores.append(f"    %p{k} = llvm.getelementptr %out[{8 * k}] : (!llvm.ptr<1>) -> "
                      f"!llvm.ptr<1>, i8")
        if ty == "index":
            stores.append(f"    %w{k} = arith.index_cast {value} : index to i64")
            value = f"%w{k}"
        stores.append(f"    llvm.store {value}, %p{k} : {store_ty}, !llvm.ptr<1>")
    return f"""module attributes {{gpu.container_module}} {{
gpu.module @semantics {{
  gpu.func @semantics(%out: !llvm.ptr<1>, %a: i64, %b: i64) kernel {{
{SEMANTICS_BODY}
{chr(10).join(stores)}
    gpu.return
  }}
  gpu.func @barrier_mismatch() kernel {{
    %t = gpu.thread_id x
    %z = arith.constant 0 : index
    %first = arith.cmpi eq, %t, %z : index
    scf.if %first {{
      gpu.barrier
    }}
    gpu.return
  }}
  gpu.func @shared_race(%v: f32)
      workgroup(%m : memref<4xf32, #gpu.address_space<workgroup>>) kernel {{
    %z = arith.constant 0 : index
    memref.store %v, %m[%z] : memref<4xf32, #gpu.address_space<workgroup>>
    gpu.return
  }}
  gpu.func @global_race(%out: !llvm.ptr<1>) kernel {{
    %b = gpu.block_id x
    %v = arith.index_cast %b : index to i64
    llvm.store %v, %out : i64, !llvm.ptr<1>
    gpu.return
  }}
  gpu.func @out_of_bounds(%out: !llvm.ptr<1>) kernel {{
    %p = llvm.getelementptr %out[1] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i64
    %v = llvm.load %p : !llvm.ptr<1> -> i64
    gpu.return
  }}
}}
}}
"""


def expect_error(what, error_type, text, fn):
    """fn() must raise error_type with a message containing `text`."""
    try:
        fn()
    except error_type as e:
        if text not in str(e):
            raise CheckFailed(f"{what}: error '{e}' does not mention '{text}'")
        return
    raise CheckFailed(f"{what}: no {error_type.__name__}")


@check()
def interpreter(module):
    """The interpreter's own semantics and error reports, on handwritten MLIR."""
    expected = semantics_expected()
    mod = interp.Module(semantics_module(expected))
    out = bytearray(8 * len(expected))
    mod.run("semantics", [out, -7, 3])
    for k, (value, ty, want) in enumerate(expected):
        size = len(encode(ty, want))
        if bytes(out[8 * k:8 * k + size]) != encode(ty, want):
            got = out[8 * k:8 * k + size].hex()
            raise CheckFailed(f"interpreter: {value} ({ty}) is {got}, want "
                              f"{encode(ty, want).hex()} ({want!r})")
    expect_error("barrier mismatch", interp.KernelError, "wait at gpu.barrier",
                 lambda: mod.run("barrier_mismatch", [], block=(4, 1, 1)))
    expect_error("workgroup race", interp.KernelError, "data race on %m",
                 lambda: mod.run("shared_race", [1.0], block=(2, 1, 1)))
    expect_error("global race", interp.KernelError, "data race on %out",
                 lambda: mod.run("global_race", [bytearray(8)], grid=(2, 1, 1)))
    expect_error("out of bounds", interp.KernelError, "out-of-bounds i64 load",
                 lambda: mod.run("out_of_bounds", [bytearray(8)]))
    bad = "gpu.module @m {\n  gpu.func @k() kernel {\n    %x = arith.frobnicate\n" \
        "    gpu.return\n  }\n}\n"
    expect_error("unknown operation", interp.TranslationError, "arith.frobnicate",
                 lambda: interp.Module(bad))


# ---- driver --------------------------------------------------------------------------------

def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mlir", required=True, help="build/kernels/gpu/device_kernels.mlir")
    p.add_argument("--only", default="", help="run the checks whose name contains this")
    opts = p.parse_args()
    start = time.time()
    with open(opts.mlir) as f:
        try:
            module = interp.Module(f.read())
        except interp.TranslationError as e:
            sys.exit(f"FAILED: {opts.mlir}: {e}")
    covered = {k for kernels in CHECKS.values() for k in kernels}
    unchecked = sorted(set(module.kernels) - covered - set(PENDING))
    missing = sorted(covered - set(module.kernels))
    failures = []
    if unchecked:
        failures.append(f"kernels without a check: {', '.join(unchecked)}")
    if missing:
        failures.append(f"checked kernels missing from {opts.mlir}: {', '.join(missing)}")
    for fn in CHECKS:
        if opts.only not in fn.__name__:
            continue
        t = time.time()
        try:
            fn(module)
            print(f"ok    {fn.__name__} ({time.time() - t:.1f} s)")
        except (CheckFailed, interp.KernelError) as e:
            print(f"FAIL  {fn.__name__}: {e}")
            failures.append(f"{fn.__name__}: {e}")
    if failures:
        sys.exit("FAILED:\n  " + "\n  ".join(failures))
    print(f"all device kernel checks passed ({time.time() - start:.1f} s)")


if __name__ == "__main__":
    main()
