#!/usr/bin/env python3
"""Combine a module's per-target objects and embed them as a C source file.

Takes what compile_target.py wrote for every target of one module (each
object with its .json description next to it) and writes:

- the combined code object: an NVIDIA fat binary made by `fatbinary`
  (cubins plus the PTX of the newest arch compiled, compressed as asked), raw PTX
  for the `ptx` format, or a clang offload bundle made by
  `clang-offload-bundler` for AMD (compressed where the bundler can);
- a .c file holding its bytes, the kernels (names and parameter sizes read
  back from the objects, the same on every target or the build fails), each
  kernel's resources per target, and a `const kp_module_desc`
  (include/kernelpack/user_kernels.h).

The output contains no paths, dates or host names.

The library's build runs this file once per module; kp-build-module calls
embed() in-process.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile


class EmbedError(Exception):
    pass


def fail(msg):
    raise EmbedError(msg)


def run(cmd):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    if proc.stdout:
        sys.stderr.write(proc.stdout)
    if proc.returncode != 0:
        fail("command failed (exit %d): %s" % (proc.returncode, " ".join(cmd)))


def load_parts(paths):
    """[(target, kind, object path, info)] for the objects given, in order;
    each object's description is the .json file of the same stem."""
    parts = []
    for path in paths:
        with open(os.path.splitext(path)[0] + ".json") as fh:
            info = json.load(fh)
        parts.append((info["target"], info["kind"], path, info))
    return parts


def sm_number(target):
    return int(target.split("_", 1)[1])


def combine_fatbin(args, parts, out):
    cubins = [p for p in parts if p[1] == "cubin"]
    # The PTX of the newest target whose own compile kept PTX (a cubin
    # assembled from another target's PTX has none of its own).
    newest = max((p for p in cubins if "assembled_from" not in p[3]), key=lambda p: sm_number(p[0]))
    cmd = [args.fatbinary, "--create=" + out, "-64",
           "--cicc-cmdline=-ftz=0 -prec_div=1 -prec_sqrt=1 -fmad=1 "]
    for target, _kind, path, _info in cubins:
        cmd.append("--image3=kind=elf,sm=%d,file=%s" % (sm_number(target), path))
    cmd.append("--image3=kind=ptx,sm=%d,file=%s" % (sm_number(newest[0]), newest[2][:-6] + ".ptx"))
    if args.compress == "none":
        cmd.append("--compress=false")
    else:
        cmd += ["--compress-all", "--compress-mode=" + args.compress]
    run(cmd)
    archs = ["sm_%d" % sm_number(p[0]) for p in cubins] + ["compute_%d" % sm_number(newest[0])]
    return "KP_CODE_FATBIN", ",".join(archs)


def combine_bundle(args, parts, out):
    targets = [p[0] for p in parts]
    cmd = [args.bundler, "-type=o", "-bundle-align=4096",
           "-targets=" + ",".join(["host-x86_64-unknown-linux"] +
                                  ["hipv4-amdgcn-amd-amdhsa--" + t for t in targets]),
           "-input=/dev/null"] + ["-input=" + p[2] for p in parts] + ["-output=" + out]
    if args.compress != "none":
        cmd.append("-compress")
    run(cmd)
    return "KP_CODE_HSACO_BUNDLE", ",".join(targets)


# ------------------------------------------------------------------- C output

def c_string(data):
    """data as adjacent C string literals, every byte an octal escape (no
    trigraph, no escape swallowing the next character). Compilers read a
    string in a fraction of the time and memory a list of integers takes
    (gcc: 0.8 s and 150 MB against 12 s and 790 MB for 7 MB of code)."""
    return "\n".join('  "' + "".join("\\%03o" % b for b in data[i:i + 32]) + '"'
                     for i in range(0, len(data), 32))


def c_resources(parts, names):
    rows = []
    for target, kind, _path, info in parts:
        if kind == "ptx":
            continue  # compiled by the driver at load time: nothing to report
        for n in names:
            k = info["kernels"][n]
            rows.append('  { "%s", "%s", %d, %d, %d, %d, %d, %d, %d },'
                        % (n, target, k["registers"], k["sgprs"], k["local_bytes"], k["spill_bytes"],
                           k["shared_bytes"], k["max_threads"], k["wave_size"]))
    return rows


def param_sizes(parts, names):
    """name -> [bytes of each parameter]: the same on every target, or the build fails."""
    sizes = {}
    for target, _kind, _path, info in parts:
        for n in names:
            got = [p[1] for p in info["kernels"][n]["params"]]
            want = sizes.setdefault(n, got)
            if got != want:
                fail("kernel %s: parameter sizes %s on %s differ from %s on %s"
                     % (n, got, target, want, parts[0][0]))
    return sizes


def write_c(args, fmt, archs, data, parts, names):
    """The module as C: its code object, kernel table and a `const
    kp_module_desc` named args.symbol (see include/kernelpack/user_kernels.h)."""
    sym = args.symbol
    res = c_resources(parts, names)
    sizes = param_sizes(parts, names)
    out = ["/* Generated by kernelpack's module builder from %s.cu. Do not edit. */" % args.module,
           "#include <kernelpack/user_kernels.h>", "",
           # One byte more than the code for the string's NUL, which no
           # reader uses (the object's size below is the code's).
           "static const unsigned char %s_code0[%d] =\n%s;\n" % (sym, len(data) + 1, c_string(data)),
           "static const kp_code_object %s_objects[] = {" % sym,
           '  { %s, "%s", %s_code0, %d },' % (fmt, archs, sym, len(data)),
           "};\n"]
    for i, n in enumerate(names):
        if sizes[n]:
            out.append("static const uint32_t %s_params%d[] = { %s };"
                       % (sym, i, ", ".join(str(s) for s in sizes[n])))
    out.append("\nstatic const kp_kernel_desc %s_kernels[] = {" % sym)
    out += ['  { "%s", %d, %s },' % (n, len(sizes[n]), "%s_params%d" % (sym, i) if sizes[n] else "NULL")
            for i, n in enumerate(names)]
    out.append("};\n")
    if res:
        out.append("static const kp_kernel_resources %s_resources[] = {" % sym)
        out += res
        out.append("};\n")
    out.append("const kp_module_desc %s = {" % sym)
    out.append('  KP_MODULE_DESC_VERSION, "%s",' % args.module)
    out.append("  %s_objects, 1," % sym)
    out.append("  %s_kernels, %d," % (sym, len(names)))
    out.append("  %s, %d," % ("%s_resources" % sym if res else "NULL", len(res)))
    out.append("};")
    tmp_out = args.output + ".tmp"
    with open(tmp_out, "w") as fh:
        fh.write("\n".join(out) + "\n")
    os.replace(tmp_out, args.output)


def embed(fmt, module, objects, output, object_output=None, symbol=None, compress="none",
          fatbinary=None, bundler=None):
    """Combines `objects` (compile_target outputs, in target order) into one
    code object of format `fmt` (written to `object_output` if given) and
    writes the C file `output` defining `symbol` (default kp_module_<module>).
    Raises EmbedError."""
    args = argparse.Namespace(format=fmt, module=module, symbol=symbol or "kp_module_" + module,
                              compress=compress, fatbinary=fatbinary, bundler=bundler,
                              output=output, object_output=object_output)
    parts = load_parts(objects)
    if not parts:
        fail("no objects for module %s" % module)
    names = sorted(parts[0][3]["kernels"])
    for target, _kind, _path, info in parts:
        if sorted(info["kernels"]) != names:
            fail("%s: targets %s and %s disagree on the kernel set" % (module, parts[0][0], target))

    if fmt == "ptx":
        if len(parts) != 1:
            fail("the ptx format takes one PTX target, got %d" % len(parts))
        with open(parts[0][2], "rb") as fh:
            data = fh.read()
        code_kind, archs = "KP_CODE_PTX", parts[0][0]
        data += b"\0"  # cuModuleLoadData needs NUL-terminated PTX
    else:
        with tempfile.TemporaryDirectory(prefix="kp-embed-") as tmp:
            combined = os.path.join(tmp, "module.bin")
            if fmt == "fatbin":
                code_kind, archs = combine_fatbin(args, parts, combined)
            else:
                code_kind, archs = combine_bundle(args, parts, combined)
            with open(combined, "rb") as fh:
                data = fh.read()
    write_c(args, code_kind, archs, data, parts, names)
    if object_output:
        with open(object_output, "wb") as fh:
            fh.write(data.rstrip(b"\0") if fmt == "ptx" else data)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--format", choices=["fatbin", "ptx", "hsaco"], required=True)
    p.add_argument("--module", required=True)
    p.add_argument("--symbol", help="name of the kp_module_desc (default kp_module_<module>)")
    p.add_argument("--compress", default="none",
                   help="fatbinary --compress-mode value, 'bundle' for a compressed AMD bundle, or none")
    p.add_argument("--fatbinary", help="fatbinary program (fatbin format)")
    p.add_argument("--bundler", help="clang-offload-bundler program (hsaco format)")
    p.add_argument("--output", required=True, help="the .c file")
    p.add_argument("--object-output", required=True, help="the combined code object")
    p.add_argument("objects", nargs="+", help="compile_target.py outputs, in target order")
    args = p.parse_args()
    try:
        embed(args.format, args.module, args.objects, args.output, args.object_output,
              symbol=args.symbol, compress=args.compress, fatbinary=args.fatbinary,
              bundler=args.bundler)
    except EmbedError as e:
        sys.stderr.write("embed_module.py: error: %s\n" % e)
        sys.exit(1)


if __name__ == "__main__":
    main()
