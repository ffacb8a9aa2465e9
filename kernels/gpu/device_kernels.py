#!/usr/bin/env python3
"""Writes the MLIR of RAL's GPU library kernels, the one source of their device code: one
gpu.module of gpu.funcs that ral-gpu-kernels compiles at build time, through the compiler's own
GPU path, to HSACO per AMD architecture (ROCDL lowering, LLVM's AMDGPU back end, ld.lld) and to
PTX per NVIDIA architecture (NVVM lowering, LLVM's NVPTX back end; ptxas then makes cubins). No
device binary is hand-written, and no kernel exists twice.

The kernels' arguments are the fields of the structs in kernels/gpu/device_args.h, in order, all
8 bytes, so an HSA kernarg segment and a CUDA parameter list are that struct byte for byte
(tests/hsa checks the layouts the code objects and the PTX declare). Every kernel is a
grid-stride loop over `count` items with `threads` = grid work-items, except GEMM (one 16x16
tile of C per 16x16 workgroup) and the ordering kernels (a 256-wide workgroup per row, rows
strided over the grid).

  ral_strided_copy_<1|2|4|8>   CopyArgs   dst[view(i)] = src[view(i)]
  ral_strided_fill_<1|2|4|8>   FillArgs   dst[view(i)] = value
  ral_rng_uniform_<f32|f64|f16|bf16>  RngArgs  Philox4x32-10, kernels/rng/philox.h bit for bit
  ral_gemm_<f32|f64|f16|bf16>  GemmArgs   c = a * b (f32 accumulation; f64 for f64)
  ral_order_rows_<f32|f64|i32|i64>  OrderArgs  ral_topk / ral_sort: one workgroup per row

Usage: device_kernels.py OUTPUT.mlir
"""
import sys

RANK = 6  # kernels/gpu/device_args.h kMaxRank: views are padded to 6 dims (size 1, stride 0)
BLOCK = 256  # work-items per workgroup of the linear kernels
TILE = 16  # GEMM tile edge: a TILE x TILE workgroup computes a TILE x TILE block of C


class Body:
    """SSA text with fresh names."""

    def __init__(self):
        self.lines = []
        self.n = 0

    def fresh(self):
        self.n += 1
        return f"%v{self.n}"

    def op(self, text):
        name = self.fresh()
        self.lines.append(f"{name} = {text}")
        return name

    def raw(self, text):
        self.lines.append(text)

    def const(self, value, ty):
        return self.op(f"arith.constant {value} : {ty}")

    def text(self, indent):
        return "\n".join(" " * indent + line for line in self.lines)


def view_args(prefix):
    return [f"%{prefix}s{d}" for d in range(RANK)]


def params(names):
    return ", ".join(f"{n}: {'!llvm.ptr<1>' if n.endswith('ptr') else 'i64'}" for n in names)


def first_item(b):
    """The work-item's global index (i64): block_id * BLOCK + thread_id."""
    bid = b.op("gpu.block_id x")
    tid = b.op("gpu.thread_id x")
    size = b.const(BLOCK, "index")
    g = b.op(f"arith.addi {b.op(f'arith.muli {bid}, {size} : index')}, {tid} : index")
    return b.op(f"arith.index_cast {g} : index to i64")


def offsets(b, i, sizes, stride_lists):
    """Element offsets of row-major index i in views sharing `sizes`, one per stride list."""
    offs = [b.const(0, "i64") for _ in stride_lists]
    rest = i
    for d in reversed(range(RANK)):
        q = b.op(f"arith.divui {rest}, {sizes[d]} : i64")
        idx = b.op(f"arith.subi {rest}, {b.op(f'arith.muli {q}, {sizes[d]} : i64')} : i64")
        for k, strides in enumerate(stride_lists):
            term = b.op(f"arith.muli {idx}, {strides[d]} : i64")
            offs[k] = b.op(f"arith.addi {offs[k]}, {term} : i64")
        rest = q
    return offs


def load(b, ptr, off, ty):
    p = b.op(f"llvm.getelementptr {ptr}[{off}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, {ty}")
    return b.op(f"llvm.load {p} : !llvm.ptr<1> -> {ty}")


def store(b, value, ptr, off, ty):
    p = b.op(f"llvm.getelementptr {ptr}[{off}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, {ty}")
    b.raw(f"llvm.store {value}, {p} : {ty}, !llvm.ptr<1>")


def func(name, args, body, workgroup=""):
    return (f"  gpu.func @{name}({params(args)}){workgroup} kernel {{\n"
            f"{body.text(4)}\n    gpu.return\n  }}\n")


def grid_loop(b, count, threads, emit_body):
    """scf.for over i = first, first + threads, ... < count; emit_body(inner, i) fills it."""
    first = first_item(b)
    inner = Body()
    inner.n = b.n + 1000
    emit_body(inner, "%i")
    b.raw(f"scf.for %i = {first} to {count} step {threads} : i64 {{")
    b.lines += ["  " + line for line in inner.lines]
    b.raw("}")


INT_OF_SIZE = {1: "i8", 2: "i16", 4: "i32", 8: "i64"}


def strided_copy(size):
    ty = INT_OF_SIZE[size]
    args = ["%src_ptr", "%dst_ptr", "%count", "%threads"] + view_args("") + \
        [f"%a{d}" for d in range(RANK)] + [f"%b{d}" for d in range(RANK)]
    b = Body()

    def body(inner, i):
        so, do = offsets(inner, i, view_args(""), [[f"%a{d}" for d in range(RANK)],
                                                   [f"%b{d}" for d in range(RANK)]])
        store(inner, load(inner, "%src_ptr", so, ty), "%dst_ptr", do, ty)

    grid_loop(b, "%count", "%threads", body)
    return func(f"ral_strided_copy_{size}", args, b)


def strided_fill(size):
    ty = INT_OF_SIZE[size]
    args = ["%dst_ptr", "%count", "%threads", "%value"] + view_args("") + \
        [f"%b{d}" for d in range(RANK)]
    b = Body()

    def body(inner, i):
        (do,) = offsets(inner, i, view_args(""), [[f"%b{d}" for d in range(RANK)]])
        value = "%value" if ty == "i64" else inner.op(f"arith.trunci %value : i64 to {ty}")
        store(inner, value, "%dst_ptr", do, ty)

    grid_loop(b, "%count", "%threads", body)
    return func(f"ral_strided_fill_{size}", args, b)


def philox(b, seed, offset, block):
    """The four 32-bit words of block `block` of the (seed, offset) stream (philox.h)."""
    ctr = b.op(f"arith.addi {offset}, {block} : i64")
    c32 = b.const(32, "i64")
    w = [b.op(f"arith.trunci {ctr} : i64 to i32"),
         b.op(f"arith.trunci {b.op(f'arith.shrui {ctr}, {c32} : i64')} : i64 to i32"),
         b.const(0, "i32"), b.const(0, "i32")]
    k0 = b.op(f"arith.trunci {seed} : i64 to i32")
    k1 = b.op(f"arith.trunci {b.op(f'arith.shrui {seed}, {c32} : i64')} : i64 to i32")
    mul0, mul1 = b.const(0xD2511F53 - 2**32, "i32"), b.const(0xCD9E8D57 - 2**32, "i32")
    weyl0, weyl1 = b.const(0x9E3779B9 - 2**32, "i32"), b.const(0xBB67AE85 - 2**32, "i32")
    for _ in range(10):
        lohi0 = b.fresh()
        b.raw(f"{lohi0}:2 = arith.mului_extended {mul0}, {w[0]} : i32")
        lohi1 = b.fresh()
        b.raw(f"{lohi1}:2 = arith.mului_extended {mul1}, {w[2]} : i32")
        n0 = b.op(f"arith.xori {b.op(f'arith.xori {lohi1}#1, {w[1]} : i32')}, {k0} : i32")
        n2 = b.op(f"arith.xori {b.op(f'arith.xori {lohi0}#1, {w[3]} : i32')}, {k1} : i32")
        w = [n0, f"{lohi1}#0", n2, f"{lohi0}#0"]
        k0 = b.op(f"arith.addi {k0}, {weyl0} : i32")
        k1 = b.op(f"arith.addi {k1}, {weyl1} : i32")
    return w


def bf16_bits(b, f):
    """float -> bfloat16 bits, round to nearest even, NaN kept quiet (ral/half.h)."""
    x = b.op(f"arith.bitcast {f} : f32 to i32")
    shifted = b.op(f"arith.shrui {x}, {b.const(16, 'i32')} : i32")
    odd = b.op(f"arith.andi {shifted}, {b.const(1, 'i32')} : i32")
    rounding = b.op(f"arith.addi {odd}, {b.const(0x7fff, 'i32')} : i32")
    rounded = b.op(f"arith.shrui {b.op(f'arith.addi {x}, {rounding} : i32')}, "
                   f"{b.const(16, 'i32')} : i32")
    quiet = b.op(f"arith.ori {shifted}, {b.const(0x40, 'i32')} : i32")
    magnitude = b.op(f"arith.andi {x}, {b.const(0x7fffffff, 'i32')} : i32")
    nan = b.op(f"arith.cmpi ugt, {magnitude}, {b.const(0x7f800000, 'i32')} : i32")
    bits = b.op(f"arith.select {nan}, {quiet}, {rounded} : i32")
    return b.op(f"arith.trunci {bits} : i32 to i16")


def bf16_value(b, bits):
    """bfloat16 bits (i16) -> float, exact."""
    wide = b.op(f"arith.shli {b.op(f'arith.extui {bits} : i16 to i32')}, "
                f"{b.const(16, 'i32')} : i32")
    return b.op(f"arith.bitcast {wide} : i32 to f32")


RNG = {  # per type: words per element, (kept bits, scale) of the 32-bit-word uniform
    "f32": (1, 8, "5.9604644775390625E-8"),  # uniform24: (w >> 8) * 2^-24
    "f16": (1, 21, "4.8828125E-4"),  # uniform11: (w >> 21) * 2^-11
    "bf16": (1, 24, "3.90625E-3"),  # uniform8: (w >> 24) * 2^-8
    "f64": (2, None, None),  # uniform53 of two words
}


def rng_uniform(kind):
    words, shift, scale = RNG[kind]
    per_block = 4 // words
    args = ["%out_ptr", "%count", "%threads", "%seed", "%offset", "%low", "%span"] + \
        view_args("") + [f"%t{d}" for d in range(RANK)]
    b = Body()
    b.raw("%lowf = arith.bitcast %low : i64 to f64")
    b.raw("%spanf = arith.bitcast %span : i64 to f64")
    b.raw(f"%per = arith.constant {per_block} : i64")
    b.raw("%one = arith.constant 1 : i64")
    b.raw("%pm1 = arith.subi %per, %one : i64")
    b.raw("%cm1 = arith.addi %count, %pm1 : i64")
    b.raw("%blocks = arith.divui %cm1, %per : i64")  # (count + per - 1) / per
    if kind != "f64":
        b.raw("%low32 = arith.truncf %lowf : f64 to f32")
        b.raw("%span32 = arith.truncf %spanf : f64 to f32")

    def body(inner, blk):
        w = philox(inner, "%seed", "%offset", blk)
        base = inner.op(f"arith.muli {blk}, %per : i64")
        for j in range(per_block):
            i = inner.op(f"arith.addi {base}, {inner.const(j, 'i64')} : i64")
            inside = inner.op(f"arith.cmpi ult, {i}, %count : i64")
            then = Body()
            then.n = inner.n + 500
            (off,) = offsets(then, i, view_args(""), [[f"%t{d}" for d in range(RANK)]])
            if kind == "f64":
                c5, c6 = then.const(5, "i32"), then.const(6, "i32")
                hi = then.op(f"arith.shrui {w[2 * j]}, {c5} : i32")
                lo = then.op(f"arith.shrui {w[2 * j + 1]}, {c6} : i32")
                hi = then.op(f"arith.uitofp {hi} : i32 to f64")
                lo = then.op(f"arith.uitofp {lo} : i32 to f64")
                hi = then.op(f"arith.mulf {hi}, {then.const('6.7108864E+7', 'f64')} : f64")
                bits = then.op(f"arith.addf {hi}, {lo} : f64")
                u = then.op(f"arith.mulf {bits}, {then.const('1.1102230246251565E-16', 'f64')} "
                            f": f64")
                scaled = then.op(f"arith.mulf {u}, %spanf : f64")
                r = then.op(f"arith.addf %lowf, {scaled} : f64")
                store(then, r, "%out_ptr", off, "f64")
            else:
                kept = then.op(f"arith.shrui {w[j]}, {then.const(shift, 'i32')} : i32")
                u = then.op(f"arith.mulf {then.op(f'arith.uitofp {kept} : i32 to f32')}, "
                            f"{then.const(scale, 'f32')} : f32")
                r = then.op(f"arith.addf %low32, {then.op(f'arith.mulf {u}, %span32 : f32')} : f32")
                if kind == "f32":
                    store(then, r, "%out_ptr", off, "f32")
                elif kind == "f16":
                    store(then, then.op(f"arith.truncf {r} : f32 to f16"), "%out_ptr", off, "f16")
                else:
                    store(then, bf16_bits(then, r), "%out_ptr", off, "i16")
            inner.n = then.n + 1
            inner.raw(f"scf.if {inside} {{")
            inner.lines += ["  " + line for line in then.lines]
            inner.raw("}")

    grid_loop(b, "%blocks", "%threads", body)
    return func(f"ral_rng_uniform_{kind}", args, b)


GEMM = {  # element type: (storage type in memory, accumulator type)
    "f32": ("f32", "f32"),
    "f64": ("f64", "f64"),
    "f16": ("f16", "f32"),
    "bf16": ("i16", "f32"),
}


def gemm(kind):
    mem, acc = GEMM[kind]
    args = ["%a_ptr", "%b_ptr", "%c_ptr", "%m", "%n", "%k", "%a_rs", "%a_cs", "%b_rs", "%b_cs",
            "%c_rs", "%c_cs"]
    tile_type = f"memref<{TILE * TILE}x{acc}, #gpu.address_space<workgroup>>"
    workgroup = f" workgroup(%tile_a : {tile_type}, %tile_b : {tile_type})"

    def widen(b, v):
        if kind == "f16":
            return b.op(f"arith.extf {v} : f16 to f32")
        if kind == "bf16":
            return bf16_value(b, v)
        return v

    b = Body()
    tile = b.const(TILE, "index")
    tx, ty = b.op("gpu.thread_id x"), b.op("gpu.thread_id y")
    bx, by = b.op("gpu.block_id x"), b.op("gpu.block_id y")
    slot = b.op(f"arith.addi {b.op(f'arith.muli {ty}, {tile} : index')}, {tx} : index")
    to64 = lambda v: b.op(f"arith.index_cast {v} : index to i64")  # noqa: E731
    row = to64(b.op(f"arith.addi {b.op(f'arith.muli {by}, {tile} : index')}, {ty} : index"))
    col = to64(b.op(f"arith.addi {b.op(f'arith.muli {bx}, {tile} : index')}, {tx} : index"))
    tx64, ty64 = to64(tx), to64(ty)
    zero = b.const("0.0", acc)
    row_in = b.op(f"arith.cmpi ult, {row}, %m : i64")
    col_in = b.op(f"arith.cmpi ult, {col}, %n : i64")
    c0, c1, ctile = b.const(0, "index"), b.const(1, "index"), tile
    tile64 = b.const(TILE, "i64")

    # One step of K: stage a[row, kt + tx] and b[kt + ty, col] (0 outside), then accumulate.
    s = Body()
    s.n = b.n + 2000

    def guarded_load(body, cond, ptr, r, r_stride, c, c_stride):
        off = body.op(f"arith.addi {body.op(f'arith.muli {r}, {r_stride} : i64')}, "
                      f"{body.op(f'arith.muli {c}, {c_stride} : i64')} : i64")
        then = Body()
        then.n = body.n + 100
        v = widen(then, load(then, ptr, off, mem))
        result = body.fresh()
        body.n = then.n + 1
        body.raw(f"{result} = scf.if {cond} -> ({acc}) {{")
        body.lines += ["  " + line for line in then.lines]
        body.raw(f"  scf.yield {v} : {acc}")
        body.raw("} else {")
        body.raw(f"  scf.yield {zero} : {acc}")
        body.raw("}")
        return result

    ka = s.op(f"arith.addi %kt, {tx64} : i64")
    a_in = s.op(f"arith.andi {row_in}, {s.op(f'arith.cmpi ult, {ka}, %k : i64')} : i1")
    va = guarded_load(s, a_in, "%a_ptr", row, "%a_rs", ka, "%a_cs")
    s.raw(f"memref.store {va}, %tile_a[{slot}] : {tile_type}")
    kb = s.op(f"arith.addi %kt, {ty64} : i64")
    b_in = s.op(f"arith.andi {col_in}, {s.op(f'arith.cmpi ult, {kb}, %k : i64')} : i1")
    vb = guarded_load(s, b_in, "%b_ptr", kb, "%b_rs", col, "%b_cs")
    s.raw(f"memref.store {vb}, %tile_b[{slot}] : {tile_type}")
    s.raw("gpu.barrier")
    dot = s.fresh()
    s.raw(f"{dot} = scf.for %j = {c0} to {ctile} step {c1} iter_args(%sum = %acc) -> ({acc}) {{")
    s.raw("  %ai = arith.addi %row_base, %j : index")
    s.raw(f"  %jt = arith.muli %j, {tile} : index")
    s.raw(f"  %bi = arith.addi %jt, {tx} : index")
    s.raw(f"  %x = memref.load %tile_a[%ai] : {tile_type}")
    s.raw(f"  %y = memref.load %tile_b[%bi] : {tile_type}")
    s.raw(f"  %xy = arith.mulf %x, %y : {acc}")
    s.raw(f"  %next = arith.addf %sum, %xy : {acc}")
    s.raw(f"  scf.yield %next : {acc}")
    s.raw("}")
    s.raw("gpu.barrier")
    s.raw(f"scf.yield {dot} : {acc}")

    b.raw(f"%row_base = arith.muli {ty}, {tile} : index")
    total = b.fresh()
    b.raw(f"{total} = scf.for %kt = {b.const(0, 'i64')} to %k step {tile64} "
          f"iter_args(%acc = {zero}) -> ({acc}) : i64 {{")
    b.lines += ["  " + line for line in s.lines]
    b.raw("}")
    b.n = s.n + 1
    inside = b.op(f"arith.andi {row_in}, {col_in} : i1")
    then = Body()
    then.n = b.n + 100
    off = then.op(f"arith.addi {then.op(f'arith.muli {row}, %c_rs : i64')}, "
                  f"{then.op(f'arith.muli {col}, %c_cs : i64')} : i64")
    if kind == "f16":
        value = then.op(f"arith.truncf {total} : f32 to f16")
    elif kind == "bf16":
        value = bf16_bits(then, total)
    else:
        value = total
    store(then, value, "%c_ptr", off, mem)
    b.raw(f"scf.if {inside} {{")
    b.lines += ["  " + line for line in then.lines]
    b.raw("}")
    return func(f"ral_gemm_{kind}", args, b, workgroup)


def before(b, x, y, desc, ty):
    """x strictly before y (i1): x > y when `desc`, else x < y; NaN larger than every number."""
    if ty.startswith("i"):
        return b.op(f"arith.select {desc}, {b.op(f'arith.cmpi sgt, {x}, {y} : {ty}')}, "
                    f"{b.op(f'arith.cmpi slt, {x}, {y} : {ty}')} : i1")
    true = b.op("arith.constant true")
    nx = b.op(f"arith.cmpf uno, {x}, {x} : {ty}")
    ny = b.op(f"arith.cmpf uno, {y}, {y} : {ty}")
    only_x = b.op(f"arith.andi {nx}, {b.op(f'arith.xori {ny}, {true} : i1')} : i1")
    only_y = b.op(f"arith.andi {ny}, {b.op(f'arith.xori {nx}, {true} : i1')} : i1")
    nan_order = b.op(f"arith.select {desc}, {only_x}, {only_y} : i1")
    number_order = b.op(f"arith.select {desc}, {b.op(f'arith.cmpf ogt, {x}, {y} : {ty}')}, "
                        f"{b.op(f'arith.cmpf olt, {x}, {y} : {ty}')} : i1")
    any_nan = b.op(f"arith.ori {nx}, {ny} : i1")
    return b.op(f"arith.select {any_nan}, {nan_order}, {number_order} : i1")


def precedes(b, va, ia, vb, ib, desc, ty):
    """Pair (va, ia) strictly before (vb, ib): by value, then lower index; index >= n last."""
    true = b.op("arith.constant true")
    a_real = b.op(f"arith.cmpi ult, {ia}, %n : i64")
    b_pad = b.op(f"arith.cmpi uge, {ib}, %n : i64")
    first = before(b, va, vb, desc, ty)
    not_after = b.op(f"arith.xori {before(b, vb, va, desc, ty)}, {true} : i1")
    lower = b.op(f"arith.cmpi ult, {ia}, {ib} : i64")
    tie = b.op(f"arith.andi {not_after}, {lower} : i1")
    real_order = b.op(f"arith.ori {b_pad}, {b.op(f'arith.ori {first}, {tie} : i1')} : i1")
    return b.op(f"arith.andi {a_real}, {real_order} : i1")


def order_rows(ty):
    """ral_topk / ral_sort of rows of `ty`: workgroup g orders rows g, g + groups, ... by a
    bitonic sort of (value, index) pairs in its slot of the scratch (padded pairs from g *
    padded), then writes the first k. The order is the CPU kernel's, ties and NaN included."""
    strides = {w: [f"%{w}s{d}" for d in range(RANK)] for w in ("x", "v", "i")}
    args = ["%in_ptr", "%values_ptr", "%indices_ptr", "%sidx_ptr", "%sval_ptr", "%rows", "%n",
            "%padded", "%log2_padded", "%k", "%descending", "%groups", "%in_step",
            "%values_step", "%indices_step"] + view_args("") + strides["x"] + strides["v"] + \
        strides["i"]
    b = Body()
    zero, one, block = b.const(0, "i64"), b.const(1, "i64"), b.const(BLOCK, "i64")
    tid = b.op(f"arith.index_cast {b.op('gpu.thread_id x')} : index to i64")
    bid = b.op(f"arith.index_cast {b.op('gpu.block_id x')} : index to i64")
    slot = b.op(f"arith.muli {bid}, %padded : i64")
    half = b.op(f"arith.shrui %padded, {one} : i64")
    desc = b.op(f"arith.cmpi ne, %descending, {zero} : i64")
    stages = b.op(f"arith.addi %log2_padded, {one} : i64")

    def at(base, i, step):
        return b.op(f"arith.addi {base}, {b.op(f'arith.muli {i}, {step} : i64')} : i64")

    b.raw(f"scf.for %r = {bid} to %rows step %groups : i64 {{")
    xo, vo, io = offsets(b, "%r", view_args(""), [strides["x"], strides["v"], strides["i"]])
    # Load the row into the slot: pair i = (x[i], i); pairs from n on are padding.
    b.raw(f"scf.for %li = {tid} to %padded step {block} : i64 {{")
    si = b.op(f"arith.addi {slot}, %li : i64")
    store(b, "%li", "%sidx_ptr", si, "i64")
    b.raw(f"scf.if {b.op('arith.cmpi ult, %li, %n : i64')} {{")
    store(b, load(b, "%in_ptr", at(xo, "%li", "%in_step"), ty), "%sval_ptr", si, ty)
    b.raw("}")
    b.raw("}")
    b.raw("gpu.barrier")
    # Stage (s, t) compares pair i with i + j, j = 2^(s-1-t), ascending in blocks of 2^s whose
    # bit s of i is clear; each work-item takes pairs p = tid, tid + 256, ... < padded / 2.
    b.raw(f"scf.for %s = {one} to {stages} step {one} : i64 {{")
    b.raw(f"scf.for %t = {zero} to %s step {one} : i64 {{")
    shift = b.op(f"arith.subi {b.op(f'arith.subi %s, {one} : i64')}, %t : i64")
    j = b.op(f"arith.shli {one}, {shift} : i64")
    low_mask = b.op(f"arith.subi {j}, {one} : i64")
    shift1 = b.op(f"arith.addi {shift}, {one} : i64")
    direction_bit = b.op(f"arith.shli {one}, %s : i64")
    b.raw(f"scf.for %p = {tid} to {half} step {block} : i64 {{")
    high = b.op(f"arith.shli {b.op(f'arith.shrui %p, {shift} : i64')}, {shift1} : i64")
    i = b.op(f"arith.addi {high}, {b.op(f'arith.andi %p, {low_mask} : i64')} : i64")
    oi = b.op(f"arith.addi {slot}, {i} : i64")
    ol = b.op(f"arith.addi {oi}, {j} : i64")
    ia, ib = load(b, "%sidx_ptr", oi, "i64"), load(b, "%sidx_ptr", ol, "i64")
    va, vb = load(b, "%sval_ptr", oi, ty), load(b, "%sval_ptr", ol, ty)
    ascending = b.op(f"arith.cmpi eq, {b.op(f'arith.andi {i}, {direction_bit} : i64')}, "
                     f"{zero} : i64")
    # Ascending: swap when (vb, ib) precedes (va, ia); descending blocks the other way round.
    fv = b.op(f"arith.select {ascending}, {vb}, {va} : {ty}")
    fi = b.op(f"arith.select {ascending}, {ib}, {ia} : i64")
    sv = b.op(f"arith.select {ascending}, {va}, {vb} : {ty}")
    sj = b.op(f"arith.select {ascending}, {ia}, {ib} : i64")
    b.raw(f"scf.if {precedes(b, fv, fi, sv, sj, desc, ty)} {{")
    store(b, ib, "%sidx_ptr", oi, "i64")
    store(b, ia, "%sidx_ptr", ol, "i64")
    store(b, vb, "%sval_ptr", oi, ty)
    store(b, va, "%sval_ptr", ol, ty)
    b.raw("}")
    b.raw("}")
    b.raw("gpu.barrier")
    b.raw("}")
    b.raw("}")
    # Every read of the row is behind the barrier above, so `values` may be the input itself.
    b.raw(f"scf.for %wi = {tid} to %k step {block} : i64 {{")
    so = b.op(f"arith.addi {slot}, %wi : i64")
    store(b, load(b, "%sval_ptr", so, ty), "%values_ptr", at(vo, "%wi", "%values_step"), ty)
    store(b, load(b, "%sidx_ptr", so, "i64"), "%indices_ptr", at(io, "%wi", "%indices_step"),
          "i64")
    b.raw("}")
    # Every loop over the slot gives work-item t the entries t, t + 256, ..., so the next row's
    # load could not race with these reads; the barrier keeps the rows apart regardless.
    b.raw("gpu.barrier")
    b.raw("}")
    return func(f"ral_order_rows_{ty}", args, b)


def main():
    kernels = []
    for size in (1, 2, 4, 8):
        kernels.append(strided_copy(size))
    for size in (1, 2, 4, 8):
        kernels.append(strided_fill(size))
    for kind in ("f32", "f64", "f16", "bf16"):
        kernels.append(rng_uniform(kind))
    for kind in ("f32", "f64", "f16", "bf16"):
        kernels.append(gemm(kind))
    for ty in ("f32", "f64", "i32", "i64"):
        kernels.append(order_rows(ty))
    text = ("// Generated by kernels/gpu/device_kernels.py; do not edit.\n"
            "module attributes {gpu.container_module} {\n"
            "gpu.module @ral_gpu_kernels {\n" + "\n".join(kernels) + "}\n}\n")
    with open(sys.argv[1], "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
