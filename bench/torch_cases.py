#!/usr/bin/env python3
"""kp-bench's argsort, indexing, rope, permuted-copy and 3-d reduction cases
beside PyTorch's, in one run.

Runs kp-bench (--json) for those cases, then times PyTorch's natural
equivalent of each on the same GPU with the same shapes and dtype, its
read side rotating through copies spanning 512 MB as kp-bench's does, and
prints both with the ratio PyTorch time / kernelpack time (> 1: kernelpack
is faster). GB/s counts kp-bench's bytes for both (the op's inputs read
once and its output written once; tools/bench_<module>.c says which).
flags: <1x slower than PyTorch; <95% below 95 % of the copy in the run.

The PyTorch calls (ids are int64 there; kernelpack's are u32):
  argsort      torch.argsort(x, dim=-1, stable=True) (writes int64 indices)
  gather       torch.gather(src, dim, ids); row ids are ids.view(-1, 1).expand
  scatter      dst.scatter_(dim, ids, src)
  scatter_add  dst.scatter_add_(dim, ids, src)
  index_add    dst.index_add_(0, ids, src)
  rope         PyTorch has no rope op: the eager formula models use,
               half: x * cos + rotate_half(x) * sin (cos, sin (t, d) as
               torch.cat((c, c), -1)); interleaved: the pairs of x.unflatten
               (-1, (d/2, 2)) rotated and stacked back; thd: half on (b, t, h, d)
  permute      x.permute(p).contiguous()
  sum, max     x.sum(dim, keepdim=True), x.amax(dim, keepdim=True)

Needs PyTorch with a GPU only where it runs:
  python3 bench/torch_cases.py --kp-bench build/tools/kp-bench [--iters N]
or, with a JSON file kp-bench wrote earlier on the same machine:
  python3 bench/torch_cases.py --json kp.json
"""

import re
import sys

import torch

# The script's own folder leads sys.path, wherever it is run from.
from kpbench_run import copies_for, kp_report, parse_args, side_by_side

DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
OPS = ["argsort", "gather", "scatter", "scatter_add", "index_add", "rope", "permute", "sum", "max"]
ID_STEP = 7919  # as tools/bench_indexing.c: spread ids


def randn(shape, dt):
    return torch.randn(*shape, device="cuda", dtype=dt)


def rotated(make, nbytes, runs):
    """Input sets for time_rotating: copies of make() spanning 512 MB."""
    return [make() for _ in range(copies_for(nbytes, runs))]


def spread_ids(rows, per_row, size):
    """tools/bench_indexing.c's ids: from a random start per row, steps of
    ID_STEP modulo size."""
    start = torch.randint(0, size, (rows, 1), device="cuda")
    return (start + ID_STEP * torch.arange(per_row, device="cuda")) % size


# ---- one builder per module: (case, dtype, runs) -> (fn, input sets)

def argsort(c, dt, runs):
    width, rows = map(int, re.match(r"w(\d+) x(\d+)$", c["variant"]).groups())
    fn = lambda x: torch.argsort(x, dim=-1, stable=True)
    return fn, rotated(lambda: (randn((rows, width), dt),), rows * width * dt.itemsize, runs)


# variant -> (dim, src shape, dst shape, ids range, one id per row); as tools/bench_indexing.c
INDEXING = {
    ("gather", "rows 4096 of 32000x4096"): (0, (32000, 4096), (4096, 4096), 32000, True),
    ("gather", "dim1 1024 of 4096x32000"): (1, (4096, 32000), (4096, 1024), 32000, False),
    ("scatter", "rows 4096 to 32000x4096"): (0, (4096, 4096), (32000, 4096), 32000, True),
    ("scatter", "dim1 1024 to 4096x32000"): (1, (4096, 1024), (4096, 32000), 32000, False),
    ("scatter_add", "moe 8192 rows to 4096"): (0, (8192, 4096), (4096, 4096), 4096, True),
    ("scatter_add", "dim1 1024 to 4096x32000"): (1, (4096, 1024), (4096, 32000), 32000, False),
    ("index_add", "moe 8192 rows to 4096"): (0, (8192, 4096), (4096, 4096), 4096, True),
    ("index_add", "rows 4096 to 32000x4096"): (0, (4096, 4096), (32000, 4096), 32000, True),
}


def indexing(c, dt, runs):
    dim, src_shape, dst_shape, size, row_ids = INDEXING[(c["op"], c["variant"])]
    op = c["op"]
    id_shape = dst_shape if op == "gather" else src_shape
    if op == "index_add":
        ids = spread_ids(1, id_shape[0], size)[0]
    elif row_ids:
        ids = spread_ids(1, id_shape[0], size)[0]
    else:
        ids = spread_ids(id_shape[0], id_shape[1], size)

    def make():
        i = ids.clone()  # a set's own ids; row ids broadcast along the row, as kp-bench's stride 0
        return randn(src_shape, dt), (i.view(-1, 1).expand(*id_shape) if row_ids and op != "index_add" else i)
    dst = randn(dst_shape, dt)
    fns = {
        "gather": lambda s, i: torch.gather(s, dim, i),
        "scatter": lambda s, i: dst.scatter_(dim, i, s),
        "scatter_add": lambda s, i: dst.scatter_add_(dim, i, s),
        "index_add": lambda s, i: dst.index_add_(0, i, s),
    }
    nbytes = src_shape[0] * src_shape[1] * dt.itemsize
    return fns[op], rotated(make, nbytes, runs)


def rope(c, dt, runs):
    layout, b, t = re.match(r"(\w+) b(\d+) t(\d+)$", c["variant"]).groups()
    b, t, h, d = int(b), int(t), 32, 128
    cs, sn = randn((t, d // 2), dt), randn((t, d // 2), dt)
    if layout == "interleaved":
        def fn(x):
            x1, x2 = x.unflatten(-1, (d // 2, 2)).unbind(-1)
            return torch.stack((x1 * cs - x2 * sn, x1 * sn + x2 * cs), -1).flatten(-2)
        shape = (b, h, t, d)
    else:
        cos, sin = torch.cat((cs, cs), -1), torch.cat((sn, sn), -1)
        if layout == "thd":  # (b, t, h, d): the tables broadcast over h
            cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)

        def fn(x):
            rot = torch.cat((-x[..., d // 2:], x[..., :d // 2]), -1)
            return x * cos + rot * sin
        shape = (b, t, h, d) if layout == "thd" else (b, h, t, d)
    return fn, rotated(lambda: (randn(shape, dt),), b * h * t * d * dt.itemsize, runs)


PERMS = {"bsc>bcs": (0, 2, 1), "bshd>bhsd": (0, 2, 1, 3), "nchw>nhwc": (0, 2, 3, 1)}


def permute(c, dt, runs):
    name, dims = c["variant"].split(" ")
    dims = dims.split("x")
    fixed = 1
    for s in dims:
        fixed *= int(s) if s.isdigit() else 1
    shape = [int(s) if s.isdigit() else c["elements"] // fixed for s in dims]
    perm = PERMS[name]
    fn = lambda x: x.permute(perm).contiguous()
    return fn, rotated(lambda: (randn(shape, dt),), c["elements"] * dt.itemsize, runs)


def reduce3(c, dt, runs):
    dim, a, b = map(int, re.match(r"dim(\d) of (\d+)x(\d+)xN$", c["variant"]).groups())
    shape = (a, b, c["elements"] // (a * b))
    fn = (lambda x: x.sum(dim, keepdim=True)) if c["op"] == "sum" else (lambda x: x.amax(dim, keepdim=True))
    return fn, rotated(lambda: (randn(shape, dt),), c["elements"] * dt.itemsize, runs)


def builder(c):
    if c["op"] == "argsort":
        return argsort
    if (c["op"], c["variant"]) in INDEXING:
        return indexing
    if c["op"] == "rope":
        return rope
    if c["op"] == "permute":
        return permute
    if c["op"] in ("sum", "max") and c["variant"].startswith("dim"):
        return reduce3
    return None


def main():
    a = parse_args(__doc__, warmup=3)
    report = kp_report(a, OPS)
    print("device: %s; PyTorch %s" % (torch.cuda.get_device_name(), torch.__version__))
    # Cases without a builder are the element-wise table's sum and max: bench/torch_elementwise.py.
    cases = [c for c in report["cases"] if builder(c) is not None]
    runs = a.warmup + a.iters
    return side_by_side(cases, lambda c: lambda: builder(c)(c, DTYPES[c["dtype"]], runs), a.iters, a.warmup)


if __name__ == "__main__":
    sys.exit(main())
