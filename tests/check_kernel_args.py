#!/usr/bin/env python3
"""Kernel-argument parity between the NVIDIA and AMD builds of the kernels.

A launcher packs one argument list for both vendors, so every kernel must
take the same arguments at the same offsets with the same sizes on every
target. This reads the per-target descriptions two builds wrote
(kernels/<module>.<target>.json, from the PTX `.param` lists and the HSACO
kernel metadata) and fails when, for any kernel and any AMD target:

- the kernel is missing on one side;
- the number of explicit arguments differs;
- an argument's offset or size differs from the PTX layout;
- an argument's offset breaks the alignment the PTX declares for it, or the
  kernel's argument segment is less aligned than its most aligned argument.

The NVIDIA targets must also agree among themselves. Prints one summary line.
"""

import argparse
import glob
import json
import os
import sys


def load(info_dir, modules):
    """{module: {target: kernels}} of the JSON descriptions in info_dir."""
    out = {}
    for path in sorted(glob.glob(os.path.join(info_dir, "*.json"))):
        with open(path) as fh:
            info = json.load(fh)
        if not isinstance(info, dict) or "kernels" not in info or "target" not in info:
            continue
        if modules and info["module"] not in modules:
            continue
        out.setdefault(info["module"], {})[info["target"]] = info["kernels"]
    return out


def compare(mod, name, target, ptx, amd, failures):
    want, got = ptx["params"], amd["params"]
    where = "%s/%s on %s" % (mod, name, target)
    if len(want) != len(got):
        failures.append("%s: %d arguments, the PTX has %d" % (where, len(got), len(want)))
        return
    for i, ((p_off, p_size, p_align), (a_off, a_size)) in enumerate(zip(want, got)):
        if (p_off, p_size) != (a_off, a_size):
            failures.append("%s: argument %d at offset %d, %d bytes; the PTX has offset %d, %d bytes"
                            % (where, i, a_off, a_size, p_off, p_size))
        elif a_off % p_align:
            failures.append("%s: argument %d at offset %d breaks its %d-byte alignment" % (where, i, a_off, p_align))
    most = max([a for _o, _s, a in want] or [1])
    if amd.get("kernarg_align", most) < most:
        failures.append("%s: argument segment aligned to %d bytes, an argument needs %d"
                        % (where, amd["kernarg_align"], most))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cuda", required=True, help="kernels/ folder of a CUDA build")
    p.add_argument("--rocm", required=True, help="kernels/ folder of a ROCm build")
    p.add_argument("--modules", default="", help="comma list (default: every module found)")
    args = p.parse_args()
    modules = set(filter(None, args.modules.split(",")))
    cuda, rocm = load(args.cuda, modules), load(args.rocm, modules)
    failures, kernels, pairs = [], 0, 0
    if not cuda or not rocm:
        print("FAIL: no kernel descriptions in %s" % (args.cuda if not cuda else args.rocm))
        return 1
    for mod in sorted(set(cuda) | set(rocm)):
        if mod not in cuda or mod not in rocm:
            failures.append("%s: built for one vendor only" % mod)
            continue
        nv_targets = sorted(cuda[mod])
        ref_target = nv_targets[0]
        ref = cuda[mod][ref_target]
        for t in nv_targets[1:]:
            for name in sorted(set(ref) | set(cuda[mod][t])):
                a, b = ref.get(name), cuda[mod][t].get(name)
                if not a or not b or a["params"] != b["params"]:
                    failures.append("%s/%s: %s and %s disagree on its arguments" % (mod, name, ref_target, t))
        for target, amd_kernels in sorted(rocm[mod].items()):
            for name in sorted(set(ref) | set(amd_kernels)):
                if name not in ref or name not in amd_kernels:
                    failures.append("%s/%s: only in the %s build" % (mod, name, "CUDA" if name in ref else target))
                    continue
                compare(mod, name, target, ref[name], amd_kernels[name], failures)
                pairs += 1
        kernels += len(ref)
    for f in failures:
        print("FAIL:", f)
    print("kernel-argument parity: %d kernels, %d kernel x AMD target pairs against the PTX, %d mismatches"
          % (kernels, pairs, len(failures)))
    return 1 if failures or not pairs else 0


if __name__ == "__main__":
    sys.exit(main())
