#!/usr/bin/env python3
"""Checks the AMD code objects with LLVM's own tools (independently of the
build's parser): every module's bundle has an entry for every requested
target, each entry holds every kernel the launchers request, and each
kernel's wavefront size is the one its target runs (64 for gfx9, 32 for
gfx10+). On the targets with matrix cores (CDNA: gfx908, gfx90a, gfx94x)
the quantized mat-mat kernels must multiply with MFMA instructions, and no
other quantized kernel, nor one of another target, may hold one."""

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile


def find_tool(name):
    """ROCm's own LLVM tool, else the newest versioned one: Debian's unversioned
    names may be an older LLVM than the code objects' (LLVM 14's llvm-objdump
    cannot read gfx940 code)."""
    rocm = [os.path.join(os.environ["ROCM_PATH"], "llvm", "bin")] if os.environ.get("ROCM_PATH") else []
    for d in rocm + ["/opt/rocm/llvm/bin"]:
        path = shutil.which(name, path=d)
        if path:
            return path
    for version in ("-19", "-18", "-17", "-16", "-15"):
        path = shutil.which(name + version)
        if path:
            return path
    llvm_dirs = glob.glob("/usr/lib/llvm-*/bin")
    for d in sorted(llvm_dirs, key=lambda d: int(re.sub(r"\D", "", d) or 0), reverse=True):
        path = shutil.which(name, path=d)
        if path:
            return path
    path = shutil.which(name)
    if path:
        return path
    sys.exit("check_code_objects: %s not found (install llvm or ROCm's llvm)" % name)


def run(*cmd):
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE, universal_newlines=True).stdout


MFMA_TARGETS = ("gfx908", "gfx90a", "gfx940", "gfx941", "gfx942")
MFMA_KERNELS = re.compile(r"^(qmatmul|qmoe_mm)_")


def mfma_kernels(objdump, obj):
    """The kernels of a code object whose code holds a v_mfma instruction."""
    found, current = set(), None
    for line in run(objdump, "-d", obj).splitlines():
        m = re.match(r"^[0-9a-f]+ <([^>]+)>:", line)
        if m:
            current = m.group(1)
        elif current and "v_mfma_" in line:
            found.add(current)
    return found


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build-dir", required=True)
    p.add_argument("--targets", required=True)
    p.add_argument("--modules", required=True)
    p.add_argument("--expected", required=True, help="program printing 'module kernel' lines")
    args = p.parse_args()
    bundler, nm, readelf = find_tool("clang-offload-bundler"), find_tool("llvm-nm"), find_tool("llvm-readelf")
    objdump = find_tool("llvm-objdump")
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
                if mod != "quantized":  # the only module with matrix-core code on AMD
                    print("%-10s %-10s %3d kernels, wave%d" % (mod, target, len(expected.get(mod, ())), wave))
                    continue
                with_mfma = mfma_kernels(objdump, out)
                if target.split(":")[0] in MFMA_TARGETS:
                    want = set(k for k in expected.get(mod, ()) if MFMA_KERNELS.match(k))
                    for kernel in sorted(want - with_mfma):
                        failures.append("%s/%s: %s has no MFMA instruction" % (mod, target, kernel))
                    for kernel in sorted(with_mfma - want):
                        failures.append("%s/%s: %s holds MFMA instructions" % (mod, target, kernel))
                else:
                    want = set()
                    for kernel in sorted(with_mfma):
                        failures.append("%s/%s: %s holds MFMA instructions" % (mod, target, kernel))
                print("%-10s %-10s %3d kernels, wave%d, %d with MFMA" % (mod, target, len(expected.get(mod, ())),
                                                                        wave, len(want & with_mfma)))
    for f in failures:
        print("FAIL:", f)
    if not checked:
        print("FAIL: nothing was checked")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
