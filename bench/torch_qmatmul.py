#!/usr/bin/env python3
"""kp-bench's quantized mat-mat beside the baseline it must beat, in one run.

The baseline for a quantized weight matrix times a batch of activations is
to dequantize the weights to bf16 and multiply with the vendor BLAS: here
kernelpack's own dequantize to bf16 (kp-bench's "dequantize" case of the
same format and shape, same run) plus PyTorch's torch.matmul in bf16 (cuBLAS)
on a copy of the weights that rotates like kp-bench's, so both read cold
weights. Prints TFLOP/s (2 * batch * rows * cols per run) of kernelpack's
qmatmul, of torch.matmul alone and of dequantize + matmul, and the ratio
baseline time / kernelpack time (> 1: the quantized mat-mat is faster).

Needs PyTorch with a GPU only where it runs:
  python3 bench/torch_qmatmul.py --kp-bench build/tools/kp-bench [--iters N]
or, with a JSON file kp-bench wrote earlier on the same machine
(--ops qmatmul,dequantize --dtypes bf16):
  python3 bench/torch_qmatmul.py --json kp.json
"""

import re
import sys

# The script's own folder leads sys.path, wherever it is run from.
from kpbench_run import copies_for, kp_report, parse_args, time_rotating

VARIANT = re.compile(r"^(\S+) (\d+)x(\d+)(?: b(\d+))?$")


def main():
    a = parse_args(__doc__, warmup=5)
    report = kp_report(a, ["qmatmul", "dequantize"], ["--dtypes", "bf16"])
    import torch

    dequant = {}
    for c in report["cases"]:
        m = VARIANT.match(c["variant"])
        if c["op"] == "dequantize" and m and "error" not in c:
            dequant[(m.group(1), int(m.group(2)), int(m.group(3)))] = c["time_ms"]
    print("device: %s; PyTorch %s" % (torch.cuda.get_device_name(), torch.__version__))
    print("%-24s %9s %9s %9s %9s %9s %10s" % ("qmatmul (bf16 x, dst)", "kp ms", "kp TF/s", "mm TF/s",
                                              "deq ms", "base TF/s", "base/kp"))
    weights = {}
    missing = 0
    for c in report["cases"]:
        if c["op"] != "qmatmul":
            continue
        m = VARIANT.match(c["variant"])
        if not m or "error" in c:
            print("%-24s  %s" % (c["variant"], c.get("error", "unparsed variant")))
            missing += 1
            continue
        fmt, rows, cols, batch = m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4))
        deq = dequant.get((fmt, rows, cols))
        if deq is None:
            print("%-24s  no dequantize case of this shape in the report" % c["variant"])
            missing += 1
            continue
        if (rows, cols) not in weights:
            n = copies_for(rows * cols * 2, a.warmup + a.iters)
            weights[(rows, cols)] = [torch.randn(rows, cols, device="cuda", dtype=torch.bfloat16)
                                     for _ in range(n)]
        x = torch.randn(batch, cols, device="cuda", dtype=torch.bfloat16)
        mm = time_rotating(lambda w: torch.matmul(x, w.t()), [(w,) for w in weights[(rows, cols)]],
                           a.iters, a.warmup)
        flop = 2.0 * batch * rows * cols
        kp = c["time_ms"]
        print("%-24s %9.4f %9.1f %9.1f %9.4f %9.1f %9.2fx" % (
            c["variant"], kp, flop / kp / 1e9, flop / mm / 1e9, deq, flop / (deq + mm) / 1e9,
            (deq + mm) / kp))
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
