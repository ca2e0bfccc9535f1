"""What bench/torch_*.py share: their command line, and kp-bench's --json
report, from a run of kp-bench or from a file it wrote earlier."""

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
