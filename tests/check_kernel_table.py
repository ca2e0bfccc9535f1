#!/usr/bin/env python3
"""Checks the kernels of every module and target against the launchers.

Reads the per-target descriptions the build wrote (kernels/<module>.<target>
.json, read back from the compiled objects) and the names the launchers can
request (the `list_kernels` program), and fails when

- a kernel a launcher can request is missing on a target;
- a target holds a kernel no launcher can request (the instantiation audit:
  code size follows the API, not the macros);
- a kernel's wave size is not its target's (64 on gfx8/gfx9, else 32);
- a kernel spills registers on a target, unless the exceptions file names it
  with the reason.

Prints one line per module and target, the spills it allowed, and the
exceptions that match a checked target but no spilling kernel (stale).
"""

import argparse
import fnmatch
import json
import os
import subprocess
import sys


def read_exceptions(path):
    """[(module, kernel glob, target glob, reason)] from `module kernel target -- reason` lines."""
    out = []
    with open(path) as fh:
        for n, line in enumerate(fh, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            fields, _, reason = line.partition(" -- ")
            parts = fields.split()
            if len(parts) != 3 or not reason.strip():
                sys.exit("%s:%d: want 'module kernel-glob target-glob -- reason'" % (path, n))
            out.append((parts[0], parts[1], parts[2], reason.strip()))
    return out


def wave_size(target):
    """64 for AMD gfx8/gfx9, 32 for other AMD targets and every NVIDIA arch."""
    if target.startswith("gfx8") or target.startswith("gfx9"):
        return 64
    return 32


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--info-dir", required=True, help="the build's kernels/ folder")
    p.add_argument("--targets", required=True, help="comma list as built: sm_90,compute_90 or gfx90a")
    p.add_argument("--modules", required=True)
    p.add_argument("--expected", required=True, help="program printing 'module kernel' lines")
    p.add_argument("--spill-exceptions", required=True)
    args = p.parse_args()

    expected = {}
    out = subprocess.run([args.expected], check=True, stdout=subprocess.PIPE, universal_newlines=True).stdout
    for line in out.splitlines():
        mod, kernel = line.split()
        expected.setdefault(mod, set()).add(kernel)
    exceptions = read_exceptions(args.spill_exceptions)
    used_exceptions = set()
    failures, allowed, rows = [], [], 0
    for mod in args.modules.split(","):
        for target in args.targets.split(","):
            path = os.path.join(args.info_dir, "%s.%s.json" % (mod, target.replace(":", "_")))
            if not os.path.exists(path):
                failures.append("%s/%s: no description %s" % (mod, target, path))
                continue
            with open(path) as fh:
                kernels = json.load(fh)["kernels"]
            want = expected.get(mod, set())
            for k in sorted(want - set(kernels)):
                failures.append("%s/%s: kernel %s, which a launcher requests, is missing" % (mod, target, k))
            for k in sorted(set(kernels) - want):
                failures.append("%s/%s: kernel %s is built but no launcher can request it" % (mod, target, k))
            spills = 0
            for name, k in sorted(kernels.items()):
                rows += 1
                if "wave_size" in k and k["wave_size"] != wave_size(target):
                    failures.append("%s/%s: %s has wave size %d" % (mod, target, name, k["wave_size"]))
                if not k.get("spill_bytes"):
                    continue
                spills += 1
                why = [e for e in exceptions if e[0] == mod and fnmatch.fnmatchcase(name, e[1])
                       and fnmatch.fnmatchcase(target, e[2])]
                if why:
                    used_exceptions.add(why[0])
                    allowed.append("%s/%s: %s spills %d bytes (%s)" % (mod, target, name, k["spill_bytes"], why[0][3]))
                else:
                    failures.append("%s/%s: %s spills %d bytes per thread and is not in %s"
                                    % (mod, target, name, k["spill_bytes"], args.spill_exceptions))
            print("%-10s %-12s %4d kernels, %d spilling" % (mod, target, len(kernels), spills))
    for line in allowed:
        print("allowed:", line)
    targets = args.targets.split(",")
    for e in exceptions:
        if e not in used_exceptions and any(fnmatch.fnmatchcase(t, e[2]) for t in targets):
            print("note: spill exception '%s %s %s' matched nothing on these targets" % e[:3])
    for f in failures:
        print("FAIL:", f)
    if not rows:
        print("FAIL: nothing was checked")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
