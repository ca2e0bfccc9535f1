#!/usr/bin/env python3
"""Checks the AMD code objects with LLVM's own tools (independently of the
build's parser): every module's bundle has an entry for every requested
target, each entry holds every kernel the launchers request, and each
kernel's wavefront size is the one its target runs (64 for gfx9, 32 for
gfx10+)."""

import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile


def find_tool(name):
    dirs = os.environ.get("PATH", "").split(os.pathsep)
    if os.environ.get("ROCM_PATH"):
        dirs.append(os.path.join(os.environ["ROCM_PATH"], "llvm", "bin"))
    dirs += ["/opt/rocm/llvm/bin"] + sorted(glob.glob("/usr/lib/llvm-*/bin"), reverse=True)
    for d in dirs:
        for cand in (name, name + "-15", name + "-17"):
            path = shutil.which(cand, path=d)
            if path:
                return path
    sys.exit("check_code_objects: %s not found (install llvm or ROCm's llvm)" % name)


def run(*cmd):
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE, universal_newlines=True).stdout


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build-dir", required=True)
    p.add_argument("--targets", required=True)
    p.add_argument("--modules", required=True)
    p.add_argument("--expected", required=True, help="program printing 'module kernel' lines")
    args = p.parse_args()
    bundler, nm, readelf = find_tool("clang-offload-bundler"), find_tool("llvm-nm"), find_tool("llvm-readelf")
    expected = {}
    for line in run(args.expected).splitlines():
        mod, kernel = line.split()
        expected.setdefault(mod, set()).add(kernel)
    failures, checked = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for mod in args.modules.split(","):
            bundle = os.path.join(args.build_dir, mod + ".hsaco")
            listed = run(bundler, "--list", "--type=o", "--input=" + bundle).split()
            for target in args.targets.split(","):
                tid = "hipv4-amdgcn-amd-amdhsa--" + target
                if tid not in listed:
                    failures.append("%s: no code object for %s (bundle has %s)" % (mod, target, listed))
                    continue
                out = os.path.join(tmp, "%s-%s.o" % (mod, target.replace(":", "_")))
                run(bundler, "--unbundle", "--type=o", "--input=" + bundle, "--targets=" + tid,
                    "--output=" + out)
                symbols = set(l.split()[-1] for l in run(nm, "--defined-only", out).splitlines() if l.strip())
                for kernel in sorted(expected.get(mod, ())):
                    checked += 1
                    if kernel not in symbols or kernel + ".kd" not in symbols:
                        failures.append("%s/%s: kernel %s missing" % (mod, target, kernel))
                wave = 64 if target.startswith("gfx9") or target.startswith("gfx8") else 32
                notes = run(readelf, "--notes", out)
                sizes = set(l.split(":")[1].strip() for l in notes.splitlines()
                            if ".wavefront_size:" in l)
                if sizes != {str(wave)}:
                    failures.append("%s/%s: wavefront sizes %s, expected %d" % (mod, target, sizes, wave))
                print("%-10s %-10s %3d kernels, wave%d" % (mod, target, len(expected.get(mod, ())), wave))
    for f in failures:
        print("FAIL:", f)
    if not checked:
        print("FAIL: nothing was checked")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
