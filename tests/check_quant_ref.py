#!/usr/bin/env python3
"""Checks the CPU reference of the GGUF block formats (tests/gpu/quant_ref.c)
bit for bit against the gguf Python package (llama.cpp's gguf-py, numpy).

    check_quant_ref.py QUANT_REF_DUMP [SEED]

Runs the dump program into a temporary directory (see quant_ref_dump.c for
what it writes) and compares, as bits (so -0.0 against +0.0 and NaN payloads
count):

- binary16 -> f32 of all 65536 values, and f32 -> binary16 of every rounding
  tie, its neighbours and random f32, against numpy's astype;
- the dequantized f32 of every format against gguf.quants.dequantize;
- the blocks of every quantizable format against gguf.quants.quantize.

Where gguf has no implementation (Q8_1, Q8_K), the check uses gguf's code of
a format with the same arithmetic where there is one (Q8_1's d and qs are
Q8_0's), and otherwise a short numpy transcription of ggml's C in this
file; each line says which. Where gguf's numpy and ggml's C (the definition)
give different bits, the expectation follows ggml and the line says how many
blocks that concerned (see GGML_SIGNED_ZERO below).

Exit status: 0 all equal, 1 a mismatch (format, first differing index and
both values in hex are printed), 77 (skip) without numpy or gguf.
"""

import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import gguf
    from gguf import GGMLQuantizationType as QT
    from gguf.quants import dequantize as gguf_dequantize
    from gguf.quants import quantize as gguf_quantize
except Exception as exc:  # ImportError, or a gguf too old for this numpy
    print(f"SKIP: {sys.executable} cannot import gguf/numpy ({exc!r}); "
          f"install them with: {sys.executable} -m pip install gguf")
    sys.exit(77)

F16 = np.dtype("<f2")
F32 = np.dtype("<f4")
U16 = np.dtype("<u2")
U32 = np.dtype("<u4")

failed = False


def fail(msg):
    global failed
    failed = True
    print("FAIL: " + msg)


def first_diff(ours, ref):
    """Index of the first differing element of two equal-shape arrays, or None."""
    bad = np.flatnonzero(ours.ravel() != ref.ravel())
    return int(bad[0]) if bad.size else None


def compare_bits(what, ours_u32, ref_u32, inputs=None):
    """Compares f32 arrays as uint32; prints the first difference."""
    i = first_diff(ours_u32, ref_u32)
    if i is None:
        return True
    n_bad = int(np.count_nonzero(ours_u32.ravel() != ref_u32.ravel()))
    o, r = int(ours_u32.ravel()[i]), int(ref_u32.ravel()[i])
    fo, fr = np.array([o], U32).view(F32)[0], np.array([r], U32).view(F32)[0]
    extra = f", input {inputs(i)}" if inputs else ""
    fail(f"{what}: {n_bad} elements differ, first at index {i}: "
         f"ours 0x{o:08x} ({fo!r}), expected 0x{r:08x} ({fr!r}){extra}")
    return False


def compare_blocks(what, ours, ref, block_bytes, x=None):
    """Compares quantized bytes; prints the first differing block."""
    ours = ours.reshape(-1, block_bytes)
    ref = ref.reshape(-1, block_bytes)
    bad_blocks = np.flatnonzero((ours != ref).any(axis=1))
    if bad_blocks.size == 0:
        return True
    b = int(bad_blocks[0])
    off = int(np.flatnonzero(ours[b] != ref[b])[0])
    msg = (f"{what}: {bad_blocks.size} blocks differ, first block {b} at byte {off} "
           f"(index {b * block_bytes + off}): ours 0x{ours[b, off]:02x}, expected 0x{ref[b, off]:02x}\n"
           f"  ours     {ours[b].tobytes().hex()}\n  expected {ref[b].tobytes().hex()}")
    if x is not None:
        msg += "\n  input    " + " ".join(f"{v:08x}" for v in x[b].view(U32))
    fail(msg)
    return False


# ------------------------------------------------------------- binary16

def check_f16_to_f32(h, f):
    ref = h.view(F16).astype(F32).view(U32)
    if compare_bits("f16 -> f32", f, ref, lambda i: f"0x{int(h[i]):04x}"):
        print(f"ok   f16 -> f32: all {h.size} binary16 values (numpy astype)")


def check_f32_to_f16(x, y):
    with np.errstate(all="ignore"):
        ref = x.astype(F16).view(U16)
    # NaN: numpy keeps the payload as is; ggml (F16C, or its portable code)
    # returns a quiet NaN. Only NaN-ness and sign are compared there.
    xb = x.view(U32)
    nan = (xb & 0x7FFFFFFF) > 0x7F800000
    y_nan = ((y & 0x7C00) == 0x7C00) & ((y & 0x3FF) != 0)
    bad_nan = nan & ~(y_nan & ((y >> 15) == (xb >> 31)))
    if bad_nan.any():
        i = int(np.flatnonzero(bad_nan)[0])
        fail(f"f32 -> f16: NaN input 0x{int(xb[i]):08x} gave 0x{int(y[i]):04x}")
    ours = np.where(nan, 0, y)
    ref = np.where(nan, 0, ref)
    i = first_diff(ours, ref)
    if i is not None:
        fail(f"f32 -> f16: {int(np.count_nonzero(ours != ref))} values differ, first at index {i}: "
             f"input 0x{int(xb[i]):08x} ({x[i]!r}), ours 0x{int(ours[i]):04x}, "
             f"expected 0x{int(ref[i]):04x}")
    elif not bad_nan.any():
        print(f"ok   f32 -> f16: {x.size} values, {int(nan.sum())} of them NaN "
              "(NaN-ness and sign only), numpy astype")


# ---------------------------------------------------- numpy transcriptions
# Of ggml-quants.c, only where gguf has nothing to compare with.

def np_roundf(v):
    """C roundf: half away from zero (floor(|v|) + (frac >= 0.5), exact in f32)."""
    a = np.abs(v)
    fl = np.floor(a)
    return np.copysign(fl + (a - fl >= np.float32(0.5)).astype(F32), v)


def ggml_q8_k_dequant(blocks):
    """dequantize_row_q8_K: y = d * qs, d an f32."""
    blocks = blocks.reshape(-1, 292)
    d = blocks[:, 0:4].copy().view(F32)
    qs = blocks[:, 4:260].view(np.int8).astype(F32)
    with np.errstate(all="ignore"):
        return (d * qs).astype(F32)


def ggml_q8_1_s(x):
    """quantize_row_q8_1_ref's s: f16(sum(qs) * d) with d the unrounded f32 amax/127."""
    x = x.reshape(-1, 32)
    d = (np.abs(x).max(axis=1, keepdims=True) / np.float32(127)).astype(F32)
    with np.errstate(divide="ignore"):
        idv = np.where(d == 0, np.float32(0), np.float32(1) / d).astype(F32)
    qs = np_roundf((x * idv).astype(F32)).astype(np.int32)
    s = (qs.sum(axis=1, keepdims=True).astype(F32) * d).astype(F32)
    with np.errstate(all="ignore"):
        return s.astype(F16).view(U16).ravel()


# ----------------------------------------------------------- ggml vs gguf
# GGML_SIGNED_ZERO: which zero ggml's C keeps where the block's extreme is a
# zero, and gguf's numpy keeps another:
# - Q4_0/Q5_0: ggml's `max` starts at +0.0f and is replaced only by a
#   strictly larger |x|, so a block of zeros has d = +0 / -8 = -0 (0x8000);
#   gguf takes x[argmax |x|] = x[0], and when x[0] is -0, d = -0 / -8 = +0.
# - Q4_1/Q5_1: ggml's `if (v < min) min = v` (and `v > max`) keeps the first
#   of equal values, so min/max is the first zero in the block; np.min/np.max
#   return whichever zero their (SIMD) reduction meets, so m (and, for a
#   block of zeros, d = (max - min) / 15) may differ in the sign of 0.
# The expectation for those blocks' scale fields is ggml's, from the code
# below; their quants do not depend on the sign of the zero.

def first_equal(x, v):
    """x[first j with x[j] == v] per row: -0 == +0, so the first zero."""
    j = np.argmax(x == v, axis=1)
    return np.take_along_axis(x, j[:, None], axis=1)


def f16_bytes(v):
    with np.errstate(all="ignore"):
        return v.astype(F32).astype(F16).reshape(-1, 1).view(np.uint8)


def apply_ggml_signed_zeros(name, x, ref):
    """Rewrites, in gguf's blocks `ref`, the scale fields of the blocks whose
    extreme is a zero to ggml's; returns (blocks looked at, blocks changed)."""
    x = x.reshape(-1, 32)
    if name in ("q4_0", "q5_0"):
        rows = np.flatnonzero(np.abs(x).max(axis=1) == 0)
        d = np.full((rows.size, 1), -0.0, F32)  # +0.0f / -8 (or -16)
        new = ref.copy()
        new[rows, 0:2] = f16_bytes(d)
    else:
        levels = 15 if name == "q4_1" else 31
        mn, mx = x.min(axis=1), x.max(axis=1)
        rows = np.flatnonzero((mn == 0) | (mx == 0))
        xr = x[rows]
        gmin = first_equal(xr, xr.min(axis=1, keepdims=True))
        gmax = first_equal(xr, xr.max(axis=1, keepdims=True))
        d = ((gmax - gmin) / np.float32(levels)).astype(F32)
        new = ref.copy()
        new[rows, 0:2] = f16_bytes(d)
        new[rows, 2:4] = f16_bytes(gmin)
    changed = int(np.count_nonzero((new != ref).any(axis=1)))
    ref[:] = new
    return rows.size, changed


# ---------------------------------------------------------------- formats

def gguf_block_size(name):
    return gguf.GGML_QUANT_SIZES[QT[name.upper()]]


def check_random_blocks(name, blocks, n_random, block_bytes):
    """The promises of quant_ref_random_blocks: finite scales of magnitude in
    [2^-10, 2^-2), derived fields consistent."""
    b = blocks.reshape(-1, block_bytes)[:n_random]
    offsets = {"q4_0": [0], "q4_1": [0, 2], "q5_0": [0], "q5_1": [0, 2], "q8_0": [0], "q8_1": [0],
               "q2_K": [80, 82], "q3_K": [108], "q4_K": [0, 2], "q5_K": [0, 2], "q6_K": [208],
               "iq4_nl": [0], "iq4_xs": [0]}
    if name == "q8_K":
        scales = [b[:, 0:4].copy().view(F32).ravel()]
    else:
        scales = [b[:, o:o + 2].copy().view(F16).astype(F32).ravel() for o in offsets[name]]
    for s in scales:
        a = np.abs(s)
        if not (np.isfinite(s).all() and (a >= 2.0 ** -10).all() and (a < 2.0 ** -2).all()):
            fail(f"random {name} blocks: a scale outside [2^-10, 2^-2): {s[(a < 2.0 ** -10) | ~(a < 2.0 ** -2)][:4]}")
    if name == "q8_1":
        d = b[:, 0:2].copy().view(F16).astype(F32)
        total = b[:, 4:36].view(np.int8).astype(np.int32).sum(axis=1, keepdims=True).astype(F32)
        s = (total * d).astype(F32).astype(F16).view(U16)
        if (s != b[:, 2:4].copy().view(U16)).any():
            fail("random q8_1 blocks: s != f16(d * sum(qs))")
    if name == "q8_K":
        sums = b[:, 4:260].view(np.int8).astype(np.int32).reshape(-1, 16, 16).sum(axis=2)
        if (sums != b[:, 260:292].copy().view("<i2")).any():
            fail("random q8_K blocks: bsums != sums of qs")


def check_dequant(name, nb, blocks, out, n_random):
    block_bytes = blocks.size // nb
    check_random_blocks(name, blocks, n_random, block_bytes)
    ours = out.view(U32)
    if name == "q8_1":
        # gguf has no Q8_1 (and its GGML_QUANT_SIZES still has the old 40-byte
        # layout with f32 d and s); ggml has no dequantize_row_q8_1 either.
        # Element = qs * d as Q8_0: compare with gguf's Q8_0 of the same d and
        # qs (s dropped).
        b = blocks.reshape(nb, 36)
        as_q8_0 = np.concatenate([b[:, 0:2], b[:, 4:36]], axis=1)
        with np.errstate(all="ignore"):
            ref = gguf_dequantize(as_q8_0, QT.Q8_0).astype(F32).view(U32).ravel()
        how = "gguf Q8_0 on its d and qs (gguf has no Q8_1)"
    elif name == "q8_K":
        ref = ggml_q8_k_dequant(blocks).view(U32).ravel()
        how = "numpy transcription of dequantize_row_q8_K (gguf has no Q8_K)"
    else:
        gsize = gguf_block_size(name)
        if gsize[1] != block_bytes:
            fail(f"dequantize {name}: gguf's block is {gsize[1]} bytes, ours {block_bytes}")
            return
        with np.errstate(all="ignore"):
            ref = gguf_dequantize(blocks, QT[name.upper()]).astype(F32).view(U32).ravel()
        how = "gguf.quants.dequantize"
    if compare_bits(f"dequantize {name}", ours, ref,
                    lambda i: "block " + blocks.reshape(nb, -1)[i // (out.size // nb)].tobytes().hex()):
        print(f"ok   dequantize {name}: {nb} blocks ({n_random} random, the rest raw random bytes "
              f"and special scales), {out.size} elements vs {how}")


def check_quantize(name, x, blocks, n_edge):
    nb = x.size // 32
    block_bytes = blocks.size // nb
    x = x.reshape(nb, 32)
    note = ""
    with np.errstate(all="ignore"):
        if name == "q8_1":
            # d and qs are Q8_0's by definition (quantize_row_q8_1_ref); s is
            # checked against the transcription.
            ref8 = gguf_quantize(x, QT.Q8_0).reshape(nb, 34)
            s = ggml_q8_1_s(x).reshape(nb, 1).view(np.uint8)
            ref = np.concatenate([ref8[:, 0:2], s, ref8[:, 2:34]], axis=1)
            how = "gguf Q8_0 for d and qs, numpy transcription of quantize_row_q8_1_ref for s"
        else:
            ref = gguf_quantize(x, QT[name.upper()]).reshape(nb, block_bytes).copy()
            how = "gguf.quants.quantize"
            if name in ("q4_0", "q5_0", "q4_1", "q5_1"):
                looked, changed = apply_ggml_signed_zeros(name, x, ref)
                note = (f"; {changed} of the {looked} blocks whose extreme is a zero "
                        "expected as ggml's C, not gguf (the sign of a zero scale, GGML_SIGNED_ZERO)")
    if compare_blocks(f"quantize {name}", blocks, ref, block_bytes, x):
        print(f"ok   quantize {name}: {nb} blocks ({n_edge} edge cases, the rest random) vs {how}{note}")


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__)
        return 2
    dump = os.path.abspath(sys.argv[1])
    try:
        from importlib.metadata import version
        gguf_version = version("gguf")
    except Exception:
        gguf_version = "?"
    print(f"{sys.executable}: gguf {gguf_version} ({os.path.dirname(gguf.__file__)}), "
          f"numpy {np.__version__}")
    with tempfile.TemporaryDirectory(prefix="quant_ref.") as tmp:
        subprocess.run([dump, tmp] + sys.argv[2:], check=True)
        with open(os.path.join(tmp, "manifest.txt")) as fh:
            lines = [line.split() for line in fh if line.strip()]

        def load(fname, dtype):
            return np.fromfile(os.path.join(tmp, fname), dtype=dtype)

        seen_dequant, seen_quant = set(), set()
        for f in lines:
            kind = f[0]
            if kind == "seed":
                print(f"seed {f[1]}")
            elif kind == "f16_to_f32":
                check_f16_to_f32(load(f[2], U16), load(f[3], U32))
            elif kind == "f32_to_f16":
                check_f32_to_f16(load(f[2], F32), load(f[3], U16))
            elif kind == "dequant":
                name = f[1]
                seen_dequant.add(name)
                check_dequant(name, int(f[3]), load(f[4], np.uint8), load(f[5], F32), int(f[6]))
            elif kind == "quantize":
                name = f[1]
                seen_quant.add(name)
                check_quantize(name, load(f[4], F32), load(f[5], np.uint8), int(f[6]))
            else:
                fail(f"unknown manifest line: {' '.join(f)}")
    expected_dequant = {"q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q8_1", "q2_K", "q3_K", "q4_K",
                        "q5_K", "q6_K", "q8_K", "iq4_nl", "iq4_xs"}
    expected_quant = {"q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q8_1"}
    if seen_dequant != expected_dequant or seen_quant != expected_quant:
        fail(f"the dump covered dequantize {sorted(seen_dequant)}, quantize {sorted(seen_quant)}")
    print("FAILED" if failed else "all bit-identical")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
