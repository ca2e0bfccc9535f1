"""What bench/torch_*.py share: their command line, kp-bench's --json
report (from a run of kp-bench or from a file it wrote earlier), and for
the newer scripts the rotation, timing and report line (PyTorch is
imported only by the functions that time)."""

import argparse
import json
import subprocess


def parse_args(doc, warmup):
    """--kp-bench PROGRAM or --json FILE, --iters, --warmup (default `warmup`)."""
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--kp-bench", help="the kp-bench program to run")
    src.add_argument("--json", help="kp-bench --json output to compare with")
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--warmup", type=int, default=warmup)
    return p.parse_args()


def kp_report(a, ops, extra=()):
    """The report: kp-bench run on `ops` (then `extra` arguments) with a's
    iters and warmup, or a.json read."""
    if a.kp_bench:
        out = subprocess.run([a.kp_bench, "--json", "--ops", ",".join(ops), *extra,
                              "--iters", str(a.iters), "--warmup", str(a.warmup)],
                             stdout=subprocess.PIPE, check=True, universal_newlines=True).stdout
        return json.loads(out)
    with open(a.json) as fh:
        return json.load(fh)


ROTATE_BYTES = 512 << 20  # kp-bench's rotation span: above any current GPU's L2


def copies_for(nbytes, runs):
    """How many copies of `nbytes` a measurement rotates through, as
    kp-bench's rotation_copies picks: enough to span ROTATE_BYTES, at least
    2, at most one per run (and 64)."""
    return max(2, min(runs, 64, -(-ROTATE_BYTES // max(1, nbytes))))


def time_rotating(fn, inputs, iters, warmup):
    """Median ms of `iters` runs of fn(*inputs[k]) after `warmup` untimed
    ones, run i taking input set i modulo their count; CUDA events around
    each run, as kp-bench's time_runs."""
    import statistics

    import torch
    for i in range(warmup):
        fn(*inputs[i % len(inputs)])
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    for i in range(iters):
        starts[i].record()
        fn(*inputs[(warmup + i) % len(inputs)])
        ends[i].record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends))


HEADER = "%-12s %-24s %-5s %9s %9s %8s %8s %6s %7s %8s  %s" % (
    "op", "variant", "dtype", "kp ms", "torch ms", "kp GB/s", "torch", "%copy", "copy", "torch/kp", "flags")


def print_row(c, torch_ms):
    """One line of the side-by-side: kernelpack's case `c` (a kp-bench JSON
    case) and PyTorch's time on it; GB/s for both counts kp-bench's bytes.
    flags: < 1x (slower than PyTorch), < 95% (of the copy in kp-bench's run)."""
    kp = c["time_ms"]
    ratio = torch_ms / kp
    flags = ([" <1x"] if ratio < 1.0 else []) + ([" <95%"] if c["copy_percent"] < 95.0 else [])
    print("%-12s %-24s %-5s %9.4f %9.4f %8.1f %8.1f %6.1f %7.1f %7.2fx %s" % (
        c["op"], c["variant"], c["dtype"], kp, torch_ms, c["bytes"] / kp / 1e6, c["bytes"] / torch_ms / 1e6,
        c["copy_percent"], c["copy_gb_per_s"], ratio, "".join(flags)))


def side_by_side(cases, prepare, iters, warmup):
    """Prints HEADER and a row for each kp-bench JSON case in `cases` (the
    script's own). prepare(c) gives None where the script has no PyTorch
    equivalent, else a function returning (fn, input sets), called where a
    PyTorch error (building inputs or timing) leaves the other cases' rows.
    Returns the exit status: 1 if any case has no row."""
    import torch
    print(HEADER)
    missing = 0
    for c in cases:
        name = "%-12s %-24s %-5s" % (c["op"], c["variant"], c["dtype"])
        if "error" in c:
            print("%s  kernelpack failed: %s" % (name, c["error"]))
            missing += 1
            continue
        build = prepare(c)
        if build is None:
            print("%s  no PyTorch equivalent in this script" % name)
            missing += 1
            continue
        try:
            fn, inputs = build()
            print_row(c, time_rotating(fn, inputs, iters, warmup))
            del inputs
        except (RuntimeError, ValueError) as e:
            print("%s  PyTorch failed: %s" % (name, e))
            missing += 1
        torch.cuda.empty_cache()
    return 1 if missing else 0
