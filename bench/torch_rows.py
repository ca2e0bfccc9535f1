#!/usr/bin/env python3
"""kp-bench's row cases (wN xR: softmax, log_softmax, rmsnorm, layernorm over
R rows of width N) beside PyTorch's, in one run.

Runs kp-bench (--json) for those cases, then times PyTorch's equivalent of
each on the same GPU with the same shape and dtype, its source rotating
through copies spanning 512 MB as kp-bench's does, and prints both with
the ratio PyTorch time / kernelpack time (> 1: kernelpack is faster).
GB/s counts the source read once and the result written once.

Needs PyTorch with a GPU only where it runs:
  python3 bench/torch_rows.py --kp-bench build/tools/kp-bench [--iters N]
or, with a JSON file kp-bench wrote earlier on the same machine:
  python3 bench/torch_rows.py --json kp.json
"""

import re
import statistics
import sys

import torch
import torch.nn.functional as F

# The script's own folder leads sys.path, wherever it is run from.
from kpbench_run import kp_report, parse_args

ROTATE_BYTES = 512 << 20
OPS = {
    "softmax": lambda x, w, b: torch.softmax(x, dim=-1),
    "log_softmax": lambda x, w, b: torch.log_softmax(x, dim=-1),
    "rmsnorm": lambda x, w, b: F.rms_norm(x, (x.shape[-1],), w, eps=1e-5),
    "layernorm": lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b, eps=1e-5),
}
DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
VARIANT = re.compile(r"^w(\d+) x(\d+)$")


def time_ms(fn, sources, w, b, iters, warmup):
    """Median of iters runs, each on the next source; events around each."""
    for i in range(warmup):
        fn(sources[i % len(sources)], w, b)
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    for i in range(iters):
        starts[i].record()
        fn(sources[(warmup + i) % len(sources)], w, b)
        ends[i].record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends))


def main():
    a = parse_args(__doc__, warmup=3)
    report = kp_report(a, OPS)

    print("device: %s; PyTorch %s" % (torch.cuda.get_device_name(), torch.__version__))
    print("%-12s %-14s %-5s %10s %10s %9s %9s %8s %8s" % ("op", "variant", "dtype", "kp ms", "torch ms",
                                                       "kp GB/s", "torch", "kp %copy", "torch/kp"))
    for c in report["cases"]:
        m = VARIANT.match(c["variant"])
        if c["op"] not in OPS or not m:
            continue  # the element-wise table's "rows of 4096" cases: torch_conv.py's style covers none
        if "error" in c:
            print("%-12s %-14s %-5s  kernelpack failed: %s" % (c["op"], c["variant"], c["dtype"], c["error"]))
            continue
        width, rows = int(m.group(1)), int(m.group(2))
        dt = DTYPES[c["dtype"]]
        nbytes = rows * width * torch.tensor([], dtype=dt).element_size()
        copies = max(2, min(a.warmup + a.iters, -(-ROTATE_BYTES // nbytes)))
        sources = [torch.randn(rows, width, device="cuda", dtype=dt) for _ in range(copies)]
        w = torch.randn(width, device="cuda", dtype=dt)
        b = torch.randn(width, device="cuda", dtype=dt)
        t = time_ms(OPS[c["op"]], sources, w, b, a.iters, a.warmup)
        kp = c["time_ms"]
        gbs = c["bytes"] / kp / 1e6
        pct = c["copy_percent"]
        print("%-12s %-14s %-5s %10.4f %10.4f %9.1f %9.1f %8.1f %7.2fx" % (
            c["op"], c["variant"], c["dtype"], kp, t, gbs, c["bytes"] / t / 1e6, pct, t / kp))
        del sources
    return 0


if __name__ == "__main__":
    sys.exit(main())
