#!/usr/bin/env python3
"""Compile one kernel module (.cu) and embed the result as a C source file.

Runs nvcc (CUDA) or hipcc (ROCm) on the module, reads the kernel names back
from what the compiler produced (so the table cannot drift from the code),
and writes a .c file holding the code object bytes and a
`const struct kp_module_desc`.  Writes a Make-style depfile so the module is
rebuilt only when the .cu file or a header it includes changes.

The output contains no paths, dates or host names: two builds of the same
source in different directories produce identical files.
"""

import argparse
import os
import re
import struct
import subprocess
import sys
import tempfile

BUNDLE_MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"


def fail(msg):
    sys.stderr.write("build_module.py: error: %s\n" % msg)
    sys.exit(1)


def run(cmd, env=None):
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True)
    if proc.stdout:
        sys.stderr.write(proc.stdout)
    if proc.returncode != 0:
        fail("command failed (exit %d): %s" % (proc.returncode, " ".join(cmd)))


# ---------------------------------------------------------------- name readers

def ptx_entries(text):
    return sorted(set(re.findall(r"^\s*(?:\.visible\s+)?\.entry\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(",
                                 text, re.M)))


def elf_symbols(blob):
    """(name, type, section index) of every symbol in an ELF64 LE image."""
    if blob[:4] != b"\x7fELF" or blob[4] != 2 or blob[5] != 1:
        fail("code object is not a 64-bit little-endian ELF image")
    shoff, = struct.unpack_from("<Q", blob, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", blob, 0x3A)
    sections = []
    for i in range(shnum):
        off = shoff + i * shentsize
        (_name, stype, _flags, _addr, soff, ssize, link, _info, _align,
         entsize) = struct.unpack_from("<IIQQQQIIQQ", blob, off)
        sections.append((stype, soff, ssize, link, entsize))
    out = []
    for stype, soff, ssize, link, entsize in sections:
        if stype != 2:  # SHT_SYMTAB
            continue
        str_off = sections[link][1]
        for j in range(ssize // entsize):
            st_name, st_info, _other, st_shndx, _value, _size = struct.unpack_from(
                "<IBBHQQ", blob, soff + j * entsize)
            end = blob.index(b"\0", str_off + st_name)
            out.append((blob[str_off + st_name:end].decode(), st_info & 0xF, st_shndx))
    return out


def amdgpu_kernels(elf):
    # Every AMDGPU kernel has a kernel-descriptor object symbol "<name>.kd".
    return sorted(n[:-3] for n, _t, shndx in elf_symbols(elf)
                  if n.endswith(".kd") and shndx != 0)


def split_bundle(blob):
    """Entries (target id, bytes) of a clang offload bundle."""
    if not blob.startswith(BUNDLE_MAGIC):
        fail("hipcc output is not a clang offload bundle")
    count, = struct.unpack_from("<Q", blob, 24)
    pos, entries = 32, []
    for _ in range(count):
        off, size, idlen = struct.unpack_from("<QQQ", blob, pos)
        pos += 24
        target = blob[pos:pos + idlen].decode()
        pos += idlen
        entries.append((target, blob[off:off + size]))
    return entries


# ------------------------------------------------------------------ compilers

def compile_cuda(args, src, tmp):
    archs = args.archs.split(",")
    newest = max(archs, key=int)
    if args.format == "ptx":
        # PTX of the oldest arch: the driver JIT-compiles it for any newer GPU.
        oldest = min(archs, key=int)
        out = os.path.join(tmp, "module.ptx")
        cmd = [args.compiler, "--ptx", "-arch=compute_" + oldest]
        gencode = []
        described = "compute_" + oldest
    else:
        out = os.path.join(tmp, "module.fatbin")
        cmd = [args.compiler, "--fatbin"]
        gencode = ["-gencode=arch=compute_%s,code=sm_%s" % (a, a) for a in archs]
        gencode.append("-gencode=arch=compute_%s,code=compute_%s" % (newest, newest))
        described = ",".join(["sm_" + a for a in archs] + ["compute_" + newest])
    keep = os.path.join(tmp, "keep")
    os.mkdir(keep)
    cmd += gencode + ["-std=c++17", "-O3", "-Xcompiler", "-Wall,-Wextra",
                      "-Werror", "all-warnings", "--keep", "--keep-dir", keep,
                      "-MD", "-MF", args.depfile, "-MT", args.output]
    cmd += ["-I" + d for d in args.include] + [src, "-o", out]
    run(cmd)
    # --fatbin leaves one PTX file per arch in the keep dir; --ptx writes the
    # PTX straight to the output and keeps none.
    ptx_files = [out] if args.format == "ptx" else [
        os.path.join(keep, f) for f in sorted(os.listdir(keep)) if f.endswith(".ptx")]
    names = None
    for path in ptx_files:
        with open(path) as fh:
            found = ptx_entries(fh.read())
            if names is not None and found != names:
                fail("PTX files of %s disagree on the kernel set" % args.module)
            names = found
    if not names:
        fail("no kernels found in the PTX of %s" % args.module)
    with open(out, "rb") as fh:
        data = fh.read()
    if args.format == "ptx":
        data += b"\0"  # cuModuleLoadData needs NUL-terminated PTX
        return [("KP_CODE_PTX", described, data)], names
    return [("KP_CODE_FATBIN", described, data)], names


def compile_rocm(args, src, tmp):
    out = os.path.join(tmp, "module.hsaco")
    targets = args.archs.split(",")
    cmd = [args.compiler, "--genco", "-O3", "-std=c++17", "-Wall", "-Wextra",
           "-Werror", "-MD", "-MF" + args.depfile, "-MT" + args.output]
    cmd += ["--offload-arch=" + t for t in targets]
    cmd += ["-I" + d for d in args.include] + [src, "-o", out]
    env = dict(os.environ, HIP_PLATFORM="amd")
    run(cmd, env)
    with open(out, "rb") as fh:
        data = fh.read()
    names, seen = None, []
    for target, elf in split_bundle(data):
        if not target.startswith("hipv4-amdgcn"):
            continue  # the (empty) host entry
        found = amdgpu_kernels(elf)
        if names is not None and found != names:
            fail("targets of %s disagree on the kernel set (%s)" % (args.module, target))
        names = found
        seen.append(target.split("--", 1)[1])
    if sorted(seen) != sorted(targets):
        fail("bundle holds %s, expected %s" % (seen, targets))
    if not names:
        fail("no kernels found in %s" % args.module)
    return [("KP_CODE_HSACO_BUNDLE", ",".join(targets), data)], names


# ------------------------------------------------------------------- C output

def c_bytes(data):
    lines = []
    for i in range(0, len(data), 16):
        lines.append("  " + ",".join("%d" % b for b in data[i:i + 16]) + ",")
    return "\n".join(lines)


def write_c(args, objects, names):
    sym = "kp_module_" + args.module
    out = ["/* Generated by kernels/build_module.py from kernels/%s.cu. Do not edit. */"
           % args.module, '#include "module_desc.h"', ""]
    for i, (_fmt, _archs, data) in enumerate(objects):
        out.append("static const unsigned char %s_code%d[%d] = {\n%s\n};\n"
                   % (sym, i, len(data), c_bytes(data)))
    out.append("static const struct kp_code_object %s_objects[] = {" % sym)
    for i, (fmt, archs, data) in enumerate(objects):
        out.append('  { %s, "%s", %s_code%d, %d },' % (fmt, archs, sym, i, len(data)))
    out.append("};\n")
    out.append("static const char *const %s_kernels[] = {" % sym)
    out += ['  "%s",' % n for n in names]
    out.append("};\n")
    out.append("const struct kp_module_desc %s = {" % sym)
    out.append('  "%s", KP_MODULE_%s,' % (args.module, args.module.upper()))
    out.append("  %s_objects, %d," % (sym, len(objects)))
    out.append("  %s_kernels, %d," % (sym, len(names)))
    out.append("};")
    tmp_out = args.output + ".tmp"
    with open(tmp_out, "w") as fh:
        fh.write("\n".join(out) + "\n")
    os.replace(tmp_out, args.output)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--backend", choices=["cuda", "rocm"], required=True)
    p.add_argument("--compiler", required=True)
    p.add_argument("--format", choices=["fatbin", "ptx", "hsaco"], required=True)
    p.add_argument("--archs", required=True, help="comma list: 80,90 or gfx900,gfx90a")
    p.add_argument("--module", required=True)
    p.add_argument("--include", action="append", default=[])
    p.add_argument("--depfile", required=True)
    p.add_argument("--output", required=True)
    p.add_argument("--object-output", required=True,
                   help="where to keep the raw code object (for inspection and tests)")
    p.add_argument("source")
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="kp-build-") as tmp:
        if args.backend == "cuda":
            objects, names = compile_cuda(args, args.source, tmp)
        else:
            objects, names = compile_rocm(args, args.source, tmp)
    write_c(args, objects, names)
    with open(args.object_output, "wb") as fh:
        fh.write(objects[0][2].rstrip(b"\0") if args.format == "ptx" else objects[0][2])


if __name__ == "__main__":
    main()
