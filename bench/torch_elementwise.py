#!/usr/bin/env python3
"""kp-bench's element-wise table (the cases in tools/kp-bench.c: affine,
copy, fill, cast, binary ops and their row and column broadcasts, where,
unary ops, index_select, sum and max over rows of 4096, sum of the whole
tensor, softmax, rmsnorm and layernorm over rows of 4096) beside PyTorch's,
in one run, at kp-bench's --elements (pass it after --: see below).

Runs kp-bench (--json) for those cases, then times PyTorch's natural
equivalent of each on the same GPU with the same sizes and dtype, its
inputs alternating between two sets as kp-bench's do, and prints both with
the ratio PyTorch time / kernelpack time (> 1: kernelpack is faster). GB/s
counts kp-bench's bytes for both. flags: <1x slower than PyTorch; <95%
below 95 % of the copy in the run.

The PyTorch calls:
  affine        x.mul(3).add_(1) (PyTorch has no fused a*x+b: two kernels)
  copy          x.clone(); transposed: x.t().contiguous() of [cols, rows]
  fill          dst.fill_(v)
  cast          x.to(dtype)
  binary        a + b, a - b, a * b, a / b, torch.minimum/maximum, a == b,
                a != b, <, <=, >, >= (bool results, kernelpack's u8)
  add row/col   a + r with r of shape (cols,) / (rows, 1)
  where         torch.where(cond, a, b), cond bool (all true, as kp-bench's
                random u8 are non-zero)
  unary         torch.neg, reciprocal, abs, sign, square, sqrt, rsqrt, exp,
                log, sin, cos, tanh, erf, ceil, floor, round, relu,
                F.gelu(approximate="tanh"), F.gelu, F.silu, sigmoid,
                F.elu(alpha=1.5), torch.pow(x, 1.5)
  index_select  torch.index_select(table, 0, ids), int64 ids
  sum, max      x.view(-1, 4096).sum(-1, keepdim=True) / .amax(...); x.sum()
  softmax...    torch.softmax, F.rms_norm, F.layer_norm over rows of 4096
The quantized cases (GGUF block formats) have no PyTorch equivalent and
are not compared.

Needs PyTorch with a GPU only where it runs:
  python3 bench/torch_elementwise.py --kp-bench build/tools/kp-bench [--iters N] [--elements N]
or, with a JSON file kp-bench wrote earlier on the same machine:
  python3 bench/torch_elementwise.py --json kp.json
"""

import re
import sys

import torch
import torch.nn.functional as F

# The script's own folder leads sys.path, wherever it is run from.
from kpbench_run import kp_report, parse_args, side_by_side

MODULE_VARIANT = re.compile(r"w\d+ x\d+$|dim\d of ")  # bench_rows.c's, bench_reduce.c's
DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
ROW = 4096


def square_shape(n):
    """kp-bench.c's square_shape: cols a power of two near sqrt(n)."""
    c = 1
    while c * c * 4 <= n:
        c *= 2
    return n // c, c


def randn(shape, dt):
    return torch.randn(*shape, device="cuda", dtype=dt)


UNARY = {
    "neg": torch.neg, "recip": torch.reciprocal, "abs": torch.abs, "sign": torch.sign,
    "sqr": torch.square, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt, "exp": torch.exp, "log": torch.log,
    "sin": torch.sin, "cos": torch.cos, "tanh": torch.tanh, "erf": torch.erf, "ceil": torch.ceil,
    "floor": torch.floor, "round": torch.round, "relu": torch.relu,
    "gelu": lambda x: F.gelu(x, approximate="tanh"), "gelu_erf": F.gelu, "silu": F.silu,
    "sigmoid": torch.sigmoid, "elu": lambda x: F.elu(x, alpha=1.5), "powf": lambda x: torch.pow(x, 1.5),
}
BINARY = {
    "add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div, "minimum": torch.minimum,
    "maximum": torch.maximum, "eq": torch.eq, "ne": torch.ne, "lt": torch.lt, "le": torch.le,
    "gt": torch.gt, "ge": torch.ge,
}
CASTS = {"to f32": torch.float32, "to f16": torch.float16, "to bf16": torch.bfloat16}


def case(op, variant, n, dt):
    """(fn, make one input set) for kp-bench.c's case, or None."""
    rows, cols = square_shape(n)
    one = lambda: (randn((n,), dt),)
    if op in UNARY and variant == "contiguous":
        return UNARY[op], one
    if op in BINARY and variant == "contiguous":
        return BINARY[op], lambda: (randn((n,), dt), randn((n,), dt))
    if op == "affine":
        return lambda x: x.mul(3).add_(1), one
    if op == "copy" and variant == "contiguous":
        return torch.clone, one
    if op == "copy" and variant == "transposed":
        return lambda x: x.t().contiguous(), lambda: (randn((cols, rows), dt),)
    if op == "fill":
        return lambda d: d.fill_(1.5), lambda: (torch.empty(n, device="cuda", dtype=dt),)
    if op == "cast" and variant in CASTS:
        to = CASTS[variant]
        return lambda x: x.to(to), one
    if op == "add" and variant == "row broadcast":
        return torch.add, lambda: (randn((rows, cols), dt), randn((cols,), dt))
    if op == "add" and variant == "col broadcast":
        return torch.add, lambda: (randn((rows, cols), dt), randn((rows, 1), dt))
    if op == "where":
        return torch.where, lambda: (torch.ones(n, device="cuda", dtype=torch.bool), randn((n,), dt),
                                     randn((n,), dt))
    if op == "index_select":
        table, picked = n // ROW, n // 2 // ROW
        return (lambda t, i: torch.index_select(t, 0, i),
                lambda: (randn((table, ROW), dt), torch.randint(0, table, (picked,), device="cuda")))
    rows_of = lambda: (randn((n // ROW, ROW), dt),)
    if variant == "rows of 4096":
        if op == "sum":
            return lambda x: x.sum(-1, keepdim=True), rows_of
        if op == "max":
            return lambda x: x.amax(-1, keepdim=True), rows_of
        if op == "softmax":
            return lambda x: torch.softmax(x, dim=-1), rows_of
        w, b = randn((ROW,), dt), randn((ROW,), dt)
        if op == "rmsnorm":
            return lambda x: F.rms_norm(x, (ROW,), w, eps=1e-5), rows_of
        if op == "layernorm":
            return lambda x: F.layer_norm(x, (ROW,), w, b, eps=1e-5), rows_of
    if op == "sum" and variant == "whole tensor":
        return torch.sum, one
    return None


OPS = sorted(set(UNARY) | set(BINARY) | {"affine", "copy", "fill", "cast", "where", "index_select", "sum",
                                         "max", "softmax", "rmsnorm", "layernorm"})


def main():
    extra = []
    if "--elements" in sys.argv:  # passed on to kp-bench; the sizes follow its report
        k = sys.argv.index("--elements")
        extra = sys.argv[k:k + 2]
        del sys.argv[k:k + 2]
    a = parse_args(__doc__, warmup=3)
    report = kp_report(a, OPS, extra)
    print("device: %s; PyTorch %s" % (torch.cuda.get_device_name(), torch.__version__))
    # The module tables' softmax, sum...: torch_rows.py, torch_cases.py.
    cases = [c for c in report["cases"]
             if c["op"] in OPS and c["dtype"] in DTYPES and not MODULE_VARIANT.match(c["variant"])]

    def prepare(c):
        found = case(c["op"], c["variant"], c["elements"], DTYPES[c["dtype"]])
        if found is None:
            return None
        fn, make = found
        return lambda: (fn, [make(), make()])  # kp-bench's two alternating input sets

    return side_by_side(cases, prepare, a.iters, a.warmup)


if __name__ == "__main__":
    sys.exit(main())
