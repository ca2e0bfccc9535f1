#!/usr/bin/env python3
"""The library assembles the SASS of some NVIDIA targets from the PTX of a
lower one (kernels/meson.build: sm_86 from sm_80's, sm_120 from sm_100's),
which gives the SASS a compile of its own would only while the modules' PTX
cannot tell the two targets apart. The source is what could: this reads every
file each sharing module includes and fails on any __CUDA_ARCH__ test that
comes out differently for the two targets of a pair, and on any other
__CUDA_ARCH... macro, whose effect it cannot judge. The modules that compile
every target themselves must still hold such a test, or their exception is
stale. The toolkit's headers the kernels include (cuda_fp16.h, cuda_bf16.h)
are not read: nvcc 13's test SM 53, 60, 75, 80 and 90 alone; and the PTX of
every module was compared across each pair when the sharing began.

  check_ptx_sharing.py KERNELS_DIR --pairs sm_86=sm_80,... --modules a,b,...
                       --own quantized
"""

import argparse
import operator
import os
import re
import sys


COMPARISON = re.compile(r"__CUDA_ARCH__\s*(>=|<=|==|!=|<|>)\s*(\d+)")
DEFINED = re.compile(r"defined\s*\(?\s*__CUDA_ARCH__\b|#\s*if(n?)def\s+__CUDA_ARCH__\b")
ANY = re.compile(r"__CUDA_ARCH\w*")
OPS = {">=": operator.ge, "<=": operator.le, "==": operator.eq, "!=": operator.ne,
       "<": operator.lt, ">": operator.gt}


def arch_value(target):  # sm_86 -> 860, as nvcc defines __CUDA_ARCH__
    return int(target[len("sm_"):]) * 10


def scan(path, pairs):
    """[(line number, text, why)] for the uses of __CUDA_ARCH... in path that
    could tell a pair's targets apart."""
    found = []
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            code = line.split("//", 1)[0]
            uses = len(ANY.findall(code))
            if not uses:
                continue
            judged = len(DEFINED.findall(code))
            for op, value in COMPARISON.findall(code):
                judged += 1
                for a, b in pairs:
                    if OPS[op](arch_value(a), int(value)) != OPS[op](arch_value(b), int(value)):
                        found.append((number, line.strip(), "true for one of %s and %s" % (a, b)))
            if judged != uses:
                found.append((number, line.strip(), "a use of __CUDA_ARCH... this check cannot judge"))
    return found


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("kernels_dir")
    p.add_argument("--pairs", required=True, help="target=source,...")
    p.add_argument("--modules", required=True)
    p.add_argument("--own", default="", help="modules that compile every target themselves")
    args = p.parse_args()
    sys.path.insert(0, args.kernels_dir)
    import kernel_cache  # the include closure the build's cache key follows

    pairs = [tuple(pair.split("=")) for pair in args.pairs.split(",") if pair]
    own = set(m for m in args.own.split(",") if m)
    failures = 0
    for module in args.modules.split(","):
        source = os.path.join(args.kernels_dir, module + ".cu")
        files = [path for _, _, path in
                 kernel_cache.inputs(source, [os.path.join(args.kernels_dir, "common")])]
        found = [(os.path.relpath(f, args.kernels_dir), n, text, why)
                 for f in files for n, text, why in scan(f, pairs)]
        if module in own:
            if not found:
                print("%s compiles every target itself, but nothing in its sources tells %s apart: "
                      "let it share PTX" % (module, ", ".join("%s and %s" % pr for pr in pairs)))
                failures += 1
            else:
                print("%s: compiles every target (%s:%d: %s)" % ((module,) + found[0][:3]))
            continue
        for rel, n, text, why in found:
            print("%s shares PTX, but %s:%d: %s\n    %s" % (module, rel, n, why, text))
            failures += 1
        if not found:
            print("%s: %d files, no test separates %s" % (module, len(files), args.pairs))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
