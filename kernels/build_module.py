#!/usr/bin/env python3
"""kp-build-module: build your own kernel module the way kernelpack builds its own.

Compiles SOURCE.cu for every GPU target with the compiler, flags and code
format of the kernelpack build it came with (the built-in modules' own
compile step, compile_target.py; targets in parallel), combines the objects
(embed_module.py) and writes a C file defining `const kp_module_desc SYMBOL`
(kernelpack/user_kernels.h): the code object, and the kernels with their
parameter sizes read back from the compiled code. Link that file into your
program and launch its kernels with kp_device_get_kernel() and
kp_kernel_launch().

SOURCE.cu writes `#include "kp_device.cuh"` (kernelpack's portability header,
installed in include/kernelpack/device/; this program puts its directory on
the include path) and declares its kernels with KP_KERNEL (extern "C"
__global__, so each is looked up by its plain name). One source builds for
CUDA and ROCm.

The outputs hold no paths, dates or host names.
"""

import argparse
import concurrent.futures
import json
import os
import re
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import compile_target  # noqa: E402
import embed_module  # noqa: E402

PROG = "kp-build-module"
VENDOR = {"cuda": "CUDA", "rocm": "ROCm"}


class BuildError(Exception):
    pass


def load_config(path):
    """The settings Meson wrote at configure time; `include` is relative to them."""
    with open(path) as fh:
        cfg = json.load(fh)
    base = os.path.dirname(os.path.abspath(path))
    cfg["include"] = os.path.normpath(os.path.join(base, cfg["include"]))
    return cfg


def other_vendor(cfg, target):
    mine = cfg["backend"]
    other = "rocm" if mine == "cuda" else "cuda"
    return BuildError("--targets: %s is a %s target, but this %s builds for %s (kernelpack's "
                      "gpu_backend=%s); use the %s of a %s build of kernelpack"
                      % (target, VENDOR[other], PROG, VENDOR[mine], mine, PROG, VENDOR[other]))


def parse_targets(cfg, spec):
    """kernelpack's own compile targets, or the caller's list in the Meson
    options' spellings, as compile targets (sm_XY, compute_XY or gfx...)."""
    if spec is None:
        return list(cfg["targets"])
    items = [t.strip() for t in spec.split(",") if t.strip()]
    if not items:
        raise BuildError("--targets is empty")
    if cfg["backend"] == "cuda":
        archs = []
        for t in items:
            if t.startswith("gfx"):
                raise other_vendor(cfg, t)
            m = re.fullmatch(r"(?:sm_|compute_)?(\d{2,3}[af]?)", t)
            if not m:
                raise BuildError("--targets: '%s' is not a CUDA arch (write 80, sm_80 or compute_80)" % t)
            if m.group(1) not in archs:
                archs.append(m.group(1))
        if cfg["format"] == "ptx":  # PTX of the oldest arch: the driver JIT-compiles it for newer GPUs
            return ["compute_" + min(archs, key=lambda a: int(re.sub(r"\D", "", a)))]
        return ["sm_" + a for a in archs]
    targets = []
    for t in items:
        if re.fullmatch(r"(?:sm_|compute_)?\d{2,3}[af]?", t):
            raise other_vendor(cfg, t)
        if not re.fullmatch(r"gfx[0-9a-f]+(:[a-z]+[+-])*", t):
            raise BuildError("--targets: '%s' is not an AMD GPU target (write gfx90a or gfx90a:xnack-)" % t)
        if t not in targets:
            targets.append(t)
    return targets


def compile_one(cfg, args, target, tmp):
    """SOURCE for one target, as the library's own compile step does it;
    returns (object path, depfile path, compiler messages)."""
    stem = os.path.join(tmp, args.module + "." + target.replace(":", "_"))
    ext = {"fatbin": "cubin", "ptx": "ptx", "hsaco": "hsaco"}[cfg["format"]]
    messages = []
    try:
        compile_target.compile_target(
            cfg["compiler"], target, args.module, args.source, stem + "." + ext, stem + ".json",
            stem + ".d", includes=[cfg["include"]] + [os.path.abspath(d) for d in args.include],
            defines=args.define, ptx_output=stem + ".ptx" if target.startswith("sm_") else None,
            log=messages.append)
    except compile_target.CompileError as e:
        text = "".join(messages)
        hint = ""
        if re.search(r"Unsupported gpu architecture|invalid target ID|not a recognized processor", text):
            hint = ("\n%s does not support the target %s (kernelpack's own targets: %s)"
                    % (os.path.basename(cfg["compiler"]), target, ",".join(cfg["targets"])))
        raise BuildError("compiling %s for %s failed:\n%s%s%s"
                         % (args.source, target, text, e, hint)) from None
    return stem + "." + ext, stem + ".d", "".join(messages)


def read_deps(path):
    """The prerequisites of a Make-style depfile."""
    with open(path) as fh:
        text = fh.read().replace("\\\n", " ")
    deps = []
    for line in text.splitlines():
        if ":" in line:
            deps += [d.replace("\\ ", " ") for d in re.split(r"(?<!\\)\s+", line.split(":", 1)[1]) if d]
    return deps


def write_atomic(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        fh.write(text)
    os.replace(tmp, path)


def depfile_text(output, dep_lists):
    """One rule: OUT.c depends on every header any target's compile read,
    plus this program's own scripts and settings (a reconfigured kernelpack
    rebuilds the module)."""
    deps = []
    for d in [p for lst in dep_lists for p in lst]:
        if d not in deps:
            deps.append(d)
    def esc(path):
        return path.replace(" ", "\\ ")
    return "%s: %s\n" % (esc(output), " \\\n  ".join(esc(d) for d in deps))


def header_text(symbol, module):
    guard = re.sub(r"\W", "_", symbol).upper() + "_H"
    return ("/* Generated by kernelpack's module builder from %s.cu. Do not edit. */\n"
            "#ifndef %s\n#define %s\n\n#include <kernelpack/user_kernels.h>\n\n"
            "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
            "extern const kp_module_desc %s;\n\n"
            "#ifdef __cplusplus\n}\n#endif\n#endif\n" % (module, guard, guard, symbol))


def check_args(cfg, args):
    if args.backend and args.backend != cfg["backend"]:
        raise BuildError("--backend %s: this %s builds for %s (kernelpack's gpu_backend=%s)"
                         % (args.backend, PROG, VENDOR[cfg["backend"]], cfg["backend"]))
    if not os.path.isfile(args.source):
        raise BuildError("no source file %s" % args.source)
    for flag, name in (("--module", args.module), ("--symbol", args.symbol)):
        if name is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise BuildError("%s '%s' must be a C identifier" % (flag, name))
    for d in args.define:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(=.*)?", d, re.S):
            raise BuildError("--define '%s' is not NAME or NAME=VALUE" % d)
    for d in args.include:
        if not os.path.isdir(d):
            raise BuildError("--include %s: no such directory" % d)
    if args.jobs is not None and args.jobs < 1:
        raise BuildError("--jobs must be at least 1")


def build(cfg, args, config_path):
    check_args(cfg, args)
    symbol = args.symbol or args.module + "_module"
    targets = parse_targets(cfg, args.targets)
    with tempfile.TemporaryDirectory(prefix="kp-build-module-") as tmp:
        # Each target is its own compiler process; threads just wait on them.
        jobs = min(args.jobs or os.cpu_count() or 1, len(targets))
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
            futures = [pool.submit(compile_one, cfg, args, t, tmp) for t in targets]
            results = []
            try:
                for f in futures:  # in target order: the first failure is reported
                    results.append(f.result())
            except BuildError:
                pool.shutdown(cancel_futures=True)
                raise
        for _obj, _dep, messages in results:
            sys.stderr.write(messages)
        objects = [obj for obj, _dep, _msg in results]
        try:
            embed_module.embed(cfg["format"], args.module, objects, args.output, symbol=symbol,
                               compress=cfg["compress"],
                               fatbinary=cfg["combiner"] if cfg["format"] == "fatbin" else None,
                               bundler=cfg["combiner"] if cfg["format"] == "hsaco" else None)
        except embed_module.EmbedError as e:
            raise BuildError("combining the objects of %s failed: %s" % (args.source, e)) from None
        if args.depfile:
            own = [os.path.join(HERE, f) for f in ("build_module.py", "compile_target.py",
                                                  "embed_module.py", "code_objects.py",
                                                  "kernel_cache.py")]
            write_atomic(args.depfile, depfile_text(
                args.output, [read_deps(dep) for _obj, dep, _msg in results] +
                [own + [os.path.abspath(config_path)]]))
    if args.header_output:
        write_atomic(args.header_output, header_text(symbol, args.module))


def main(config_path):
    p = argparse.ArgumentParser(prog=PROG, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--module", metavar="NAME", help="the module's name (a C identifier), for messages")
    p.add_argument("--output", metavar="OUT.c", help="the C file to write")
    p.add_argument("--header-output", metavar="OUT.h",
                   help="also write a header declaring `extern const kp_module_desc SYMBOL;`")
    p.add_argument("--symbol", help="the descriptor's name (default: NAME_module)")
    p.add_argument("--targets", metavar="LIST",
                   help="instead of kernelpack's own targets (--print-config shows them): 80,90 or "
                        "sm_80,sm_90 for CUDA (a PTX-format build takes the oldest), gfx90a,gfx1030 "
                        "for ROCm")
    p.add_argument("--include", metavar="DIR", action="append", default=[],
                   help="another include directory (repeatable)")
    p.add_argument("--define", metavar="NAME[=VALUE]", action="append", default=[],
                   help="a preprocessor definition (repeatable)")
    p.add_argument("--depfile", metavar="FILE",
                   help="write a Make-style depfile for OUT.c (Meson: depfile: '@DEPFILE@')")
    p.add_argument("--jobs", metavar="N", type=int,
                   help="targets compiled at once (default: the number of CPUs)")
    p.add_argument("--backend", choices=sorted(VENDOR),
                   help="fail unless this program builds for this backend")
    p.add_argument("--print-config", action="store_true",
                   help="print the settings (backend, compiler, targets, code format) and exit")
    p.add_argument("source", metavar="SOURCE.cu", nargs="?", help="the kernels' source")
    args = p.parse_args()
    try:
        cfg = load_config(config_path)
    except (OSError, ValueError, KeyError) as e:
        sys.stderr.write("%s: error: cannot read its settings %s: %s\n" % (PROG, config_path, e))
        return 1
    if args.print_config:
        print(json.dumps(cfg, indent=1, sort_keys=True))
        return 0
    if not args.module or not args.output or not args.source:
        p.error("--module, --output and SOURCE.cu are required")
    try:
        build(cfg, args, config_path)
    except (BuildError, OSError) as e:
        sys.stderr.write("%s: error: %s\n" % (PROG, e))
        return 1
    return 0
