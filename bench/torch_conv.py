#!/usr/bin/env python3
"""kp-bench's conv and spatial cases beside PyTorch's, in one run.

Runs kp-bench (--json) for the cases below, then times PyTorch's
equivalent of each on the same GPU with the same shapes and dtype, and
prints both with the ratio PyTorch time / kernelpack time (> 1: kernelpack
is faster). Convolutions show TFLOP/s (2 * N * C_out * H_out * W_out *
C_in/groups * kH * kW per run); data movement shows GB/s of bytes read
once + written. f32 convolutions run with TF32 off in PyTorch, as
kernelpack's f32 path computes in f32.

Needs PyTorch with a GPU only where it runs:
  python3 bench/torch_conv.py --kp-bench build/tools/kp-bench [--iters N]
or, with a JSON file kp-bench wrote earlier on the same machine:
  python3 bench/torch_conv.py --json kp.json
"""

import statistics
import sys

import torch
import torch.nn.functional as F

# The script's own folder leads sys.path, wherever it is run from.
from kpbench_run import kp_report, parse_args

# (op, variant) -> (make inputs, run). Shapes match tools/bench_conv.c and
# tools/bench_spatial.c; a case kp-bench has and this table lacks is listed
# as such, never silently dropped.


def conv2d(n, cin, cout, hw, k, pad):
    def make(dt):
        return (torch.randn(n, cin, hw, hw, device="cuda", dtype=dt),
                torch.randn(cout, cin, k, k, device="cuda", dtype=dt))
    return make, lambda x, w: F.conv2d(x, w, padding=pad)


def conv1d(n, cin, cout, length, k, pad):
    def make(dt):
        return (torch.randn(n, cin, length, device="cuda", dtype=dt),
                torch.randn(cout, cin, k, device="cuda", dtype=dt))
    return make, lambda x, w: F.conv1d(x, w, padding=pad)


def conv_transpose2d(n, cin, cout, hw, k, stride, pad):
    def make(dt):
        return (torch.randn(n, cin, hw, hw, device="cuda", dtype=dt),
                torch.randn(cin, cout, k, k, device="cuda", dtype=dt))
    return make, lambda x, w: F.conv_transpose2d(x, w, stride=stride, padding=pad)


def image(shape, fn):
    return (lambda dt: (torch.randn(*shape, device="cuda", dtype=dt),)), fn


def folded(shape, k, pad, out_size):
    """col2im's input: what unfold gives for an image of out_size."""
    def make(dt):
        x = torch.randn(*shape[:2], *out_size, device="cuda", dtype=dt)
        return (F.unfold(x, k, padding=pad).contiguous(),)
    return make, lambda c: F.fold(c, out_size, k, padding=pad)


CASES = {
    ("conv2d", "3x3"): conv2d(32, 128, 128, 56, 3, 1),
    ("conv2d", "1x1"): conv2d(32, 128, 128, 56, 1, 0),
    ("conv1d", "whisper"): conv1d(1, 80, 384, 3000, 3, 1),
    ("conv_transpose2d", "k4s2"): conv_transpose2d(8, 256, 128, 32, 4, 2, 1),
    ("im2col", "3x3"): image((32, 128, 56, 56), lambda x: F.unfold(x, 3, padding=1)),
    ("im2col", "1d_k3"): image((1, 80, 1, 3000), lambda x: F.unfold(x, (1, 3), padding=(0, 1))),
    ("col2im", "3x3"): folded((32, 128), 3, 1, (56, 56)),
    ("col2im", "1d_k3"): folded((1, 80), (1, 3), (0, 1), (1, 3000)),
    ("max_pool2d", "3x3s2p1"): image((32, 64, 112, 112), lambda x: F.max_pool2d(x, 3, 2, 1)),
    ("max_pool2d", "2x2s2"): image((32, 128, 56, 56), lambda x: F.max_pool2d(x, 2, 2)),
    ("avg_pool2d", "2x2s2"): image((32, 128, 56, 56), lambda x: F.avg_pool2d(x, 2, 2)),
    ("upsample_nearest2d", "x2"): image((8, 256, 64, 64),
                                        lambda x: F.interpolate(x, scale_factor=2, mode="nearest")),
    ("upsample_bilinear2d", "x2"): image((8, 256, 64, 64),
                                         lambda x: F.interpolate(x, scale_factor=2, mode="bilinear",
                                                                 align_corners=False)),
}

DTYPES = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16, "bf16": torch.bfloat16}


def time_ms(fn, args, iters, warmup):
    for _ in range(warmup):
        fn(*args)
    times = []
    for _ in range(iters):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(*args)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def main():
    a = parse_args(__doc__, warmup=5)
    ops = sorted({op for op, _ in CASES})
    report = kp_report(a, ops, ["--dtypes", "f32,bf16"])

    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.benchmark = True  # PyTorch at its best: cuDNN picks its fastest algorithm
    print("device: %s; PyTorch %s, cuDNN %s" % (torch.cuda.get_device_name(), torch.__version__,
                                               torch.backends.cudnn.version()))
    print("%-20s %-8s %-5s %10s %10s %12s %12s %8s" % ("op", "variant", "dtype", "kp ms", "torch ms",
                                                      "kp rate", "torch rate", "torch/kp"))
    missing = 0
    for c in report["cases"]:
        key = (c["op"], c["variant"])
        if c["op"] not in ops:
            continue
        if key not in CASES or c["dtype"] not in DTYPES:
            print("%-20s %-8s %-5s  no PyTorch equivalent in this script" % (key + (c["dtype"],)))
            missing += 1
            continue
        if "error" in c:
            print("%-20s %-8s %-5s  kernelpack failed: %s" % (key + (c["dtype"], c["error"])))
            continue
        make, fn = CASES[key]
        args = make(DTYPES[c["dtype"]])
        t = time_ms(fn, args, a.iters, a.warmup)
        kp = c["time_ms"]
        if c.get("flops"):
            unit = "TF/s"
            kp_rate, t_rate = c["flops"] / kp / 1e9, c["flops"] / t / 1e9
        else:
            unit = "GB/s"
            kp_rate, t_rate = c["bytes"] / kp / 1e6, c["bytes"] / t / 1e6
        print("%-20s %-8s %-5s %10.4f %10.4f %7.1f %-4s %7.1f %-4s %7.2fx" % (
            c["op"], c["variant"], c["dtype"], kp, t, kp_rate, unit, t_rate, unit, t / kp))
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
