#!/usr/bin/env python3
"""Check the ABI surface of a built libkernelpack.so.

  scripts/check-abi.py LIBRARY [--symbols FILE] [--headers DIR]

Fails (exit 1) with a readable diff unless
  * the functions the library exports (`nm -D --defined-only`) are exactly
    the names in src/kernelpack.symbols,
  * the functions declared with KP_API in the public headers are exactly
    that list too (so nothing documented is missing, nothing hidden leaks),
  * the library has no DT_NEEDED entry on a GPU runtime (libcuda, libcudart,
    libamdhip64, ...): those are loaded with dlopen at run time, so the
    library installs and loads on machines without a GPU driver,
  * it is linked against libc.
Exit 77 (skip) when nm or readelf is missing.
"""

import argparse
import difflib
import os
import re
import shutil
import subprocess
import sys

SOURCE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GPU_RUNTIMES = re.compile(r"^lib(cuda|cudart|nvrtc|nvJitLink|amdhip64|hsa-runtime64|amd_comgr"
                          r"|hiprtc|OpenCL)\b")


def read_list(path):
    names = []
    with open(path) as fh:
        for line in fh:
            line = line.split("#", 1)[0].strip()
            if line:
                names.append(line)
    return names


def exported_functions(nm, library):
    out = subprocess.run([nm, "-D", "--defined-only", "--format=posix", library],
                         check=True, stdout=subprocess.PIPE, universal_newlines=True).stdout
    # "name type value size"; versioned names look like name@@VERSION.
    return [line.split()[0].split("@")[0] for line in out.splitlines() if line.strip()]


def declared_functions(headers):
    names = []
    for entry in sorted(os.listdir(headers)):
        if entry.endswith(".h"):
            with open(os.path.join(headers, entry)) as fh:
                text = fh.read()
            names += re.findall(r"\bKP_API\b[^;(]*?\b(kp_\w+)\s*\(", text)
    return names


def needed_libraries(readelf, library):
    out = subprocess.run([readelf, "-d", library], check=True, stdout=subprocess.PIPE,
                         universal_newlines=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def compare(want, got, want_label, got_label):
    """Unified diff of two name sets, or [] when equal."""
    want, got = sorted(set(want)), sorted(set(got))
    if want == got:
        return []
    return [line for line in difflib.unified_diff(want, got, want_label, got_label, lineterm="", n=0)
            if not line.startswith("@@")]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("library")
    p.add_argument("--symbols", default=os.path.join(SOURCE_ROOT, "src", "kernelpack.symbols"))
    p.add_argument("--headers", default=os.path.join(SOURCE_ROOT, "include", "kernelpack"))
    args = p.parse_args()

    nm = os.environ.get("NM", "nm")
    readelf = os.environ.get("READELF", "readelf")
    for tool in (nm, readelf):
        if not shutil.which(tool):
            print("check-abi: %s not found (binutils); skipping" % tool)
            return 77

    listed = read_list(args.symbols)
    exported = exported_functions(nm, args.library)
    declared = declared_functions(args.headers)
    symbols_rel = os.path.relpath(args.symbols, SOURCE_ROOT)
    problems = 0

    dups = sorted({n for n in listed if listed.count(n) > 1})
    if dups:
        problems += 1
        print("check-abi: listed more than once in %s: %s" % (symbols_rel, " ".join(dups)))
    bad = [n for n in listed if not re.match(r"^kp_[a-z0-9_]+$", n)]
    if bad:
        problems += 1
        print("check-abi: not a kp_ function name in %s: %s" % (symbols_rel, " ".join(bad)))

    diff = compare(listed, exported, symbols_rel, "exported by " + os.path.basename(args.library))
    if diff:
        problems += 1
        print("check-abi: the library's exported functions differ from %s:" % symbols_rel)
        print("\n".join("    " + line for line in diff))
        print("  '+' lines are exported but not listed, '-' lines are listed but not exported.\n"
              "  Added a public kp_ function on purpose? Add its name to %s (one line)\n"
              "  and declare it with KP_API in include/kernelpack/. Any other exported name\n"
              "  means a symbol lost its hidden visibility (internal functions need no KP_API).\n"
              "  A removed or renamed function breaks the ABI: bump soversion in src/meson.build."
              % symbols_rel)

    diff = compare(listed, declared, symbols_rel, "KP_API in " + os.path.relpath(args.headers, SOURCE_ROOT))
    if diff:
        problems += 1
        print("check-abi: the KP_API declarations in the public headers differ from %s:" % symbols_rel)
        print("\n".join("    " + line for line in diff))
        print("  Every public function is declared once with KP_API in include/kernelpack/\n"
              "  and listed in %s; add the missing side." % symbols_rel)

    needed = needed_libraries(readelf, args.library)
    gpu = [n for n in needed if GPU_RUNTIMES.match(n)]
    if gpu:
        problems += 1
        print("check-abi: the library links a GPU runtime (DT_NEEDED %s); it must load it with\n"
              "  dlopen in backends/ so that it installs and loads without a GPU driver."
              % ", ".join(gpu))
    if not any(n.startswith("libc.so") for n in needed):
        problems += 1
        print("check-abi: the library is not linked against libc (DT_NEEDED: %s)" % ", ".join(needed))

    if problems:
        print("check-abi: FAILED for %s" % args.library)
        return 1
    print("check-abi: %s exports the %d functions of %s, all declared with KP_API; "
          "DT_NEEDED: %s" % (os.path.basename(args.library), len(set(exported)), symbols_rel,
                             " ".join(needed)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
