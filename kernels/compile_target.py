#!/usr/bin/env python3
"""Compile one kernel module (.cu) for one GPU target.

One call per module x target, so Ninja runs them in parallel and rebuilds
only what a change touches; embed_module.py combines the results. Targets:

  sm_XY        NVIDIA SASS: writes the cubin and the PTX it was built from,
               or (--from-ptx) assembles the cubin from another sm_ target's PTX
  compute_XY   NVIDIA PTX only (the `ptx` code format)
  gfxNNN[:..]  AMD HSACO (the raw ELF of that one target)

Next to the object it writes a JSON description read back from what the
compiler produced: the kernel names and, per kernel, its resources and the
layout of its arguments (PTX .param list / AMD kernel metadata). For a cubin
the figures read from the code object are checked against ptxas's own
report (-v), so the reader cannot drift from the compiler.

Writes a Make-style depfile so the step reruns only when the .cu file or a
header it includes changes. The outputs hold no paths, dates or host names.

The library's build runs this file once per step; kp-build-module calls
compile_target() in-process, so users' kernels get the same commands.
"""

import argparse
import contextlib
import fcntl
import functools
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import code_objects  # noqa: E402
import kernel_cache  # noqa: E402


class CompileError(Exception):
    pass


def fail(msg):
    raise CompileError(msg)


def run(args, cmd, env=None, quiet=lambda line: False, cwd=None, rewrite=lambda text: text):
    """Runs cmd; passes its output, except lines `quiet` accepts, to args.log,
    and names cmd in the error if it fails, both through `rewrite` (the paths
    a message should show); returns the output as it came."""
    proc = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True)
    shown = [l for l in proc.stdout.splitlines(True) if not quiet(l)]
    if shown:
        args.log(rewrite("".join(shown)))
    if proc.returncode != 0:
        fail("command failed (exit %d): %s" % (proc.returncode, rewrite(" ".join(cmd))))
    return proc.stdout


# ------------------------------------------------------------------ NVIDIA

def ptxas_report(text):
    """kernel -> {registers, stack, spill, smem} from `ptxas -v` output."""
    out, current, props_for = {}, None, None
    for line in text.splitlines():
        m = re.search(r"Compiling entry function '([^']+)'", line)
        if m:
            current = out.setdefault(m.group(1), {"smem": 0})
            continue
        m = re.search(r"Function properties for (\S+)", line)
        if m:  # the next line is about this function, which may be a callee
            props_for = out.get(m.group(1))
            continue
        if current is None:
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores", line)
        if m and props_for is current:
            current["stack"], current["spill"] = int(m.group(1)), int(m.group(2))
        m = re.search(r"Used (\d+) registers", line)
        if m:
            current["registers"] = int(m.group(1))
        m = re.search(r"(\d+) bytes cumulative stack size", line)
        if m:  # the frame plus what the functions it calls need
            current["stack"] = max(current.get("stack", 0), int(m.group(1)))
        m = re.search(r"(\d+) bytes smem", line)
        if m:
            current["smem"] = int(m.group(1))
    return out


# nvcc sees only these environment variables: nothing else in the caller's
# environment (NVCC_PREPEND_FLAGS, NVCC_APPEND_FLAGS, the locale) reaches the
# library's kernels.
NVCC_ENV = ("PATH", "TMPDIR")


def nvcc_env():
    return {k: os.environ[k] for k in NVCC_ENV if k in os.environ}


# nvcc runs in a directory whose path is the same in every build and for
# every user: cicc names the translation unit after the absolute path of the
# source it is given (its "module id", in the keep directory's .module_id
# file) and that name can steer its code choices. Compiled in a fresh
# directory of a random name, the PTX of two quantized mat-mat kernels
# (qmatmul_q3_k_n16, qmoe_mm_q4_k_n16) took one of two forms, about half of
# the builds each; the SASS did not vary. (The choice that varied was how
# cicc split and re-joined one 16-byte shared-memory load; the kernels now
# make that load in asm, kp_lds_u32x4 in kp_mma.cuh, and it varied with a
# fixed directory too.) One compile of a module for a target runs there at a
# time (a lock next to it).
NVCC_WORK_ROOT = "/tmp/kernelpack-nvcc"


@functools.lru_cache(maxsize=None)
def fixed_layout_prefix():
    """("setarch", machine, "-R"): runs nvcc without address-space layout
    randomization, or () where setarch is missing or may not do that (some
    containers refuse it); probed once. With the module id fixed
    (NVCC_WORK_ROOT), qmoe_mm_q4_k_n16's PTX still came out in its other
    form in about one compile in ten with randomization on, and sometimes
    with it off: something in cicc varies from run to run (not its random
    temporary-file names, the clock or free memory; not identified). The
    kernels' one known case is closed (NVCC_WORK_ROOT's comment); this
    leaves one source of variation fewer for any other."""
    setarch = shutil.which("setarch")
    if not setarch:
        return ()
    cmd = (setarch, os.uname().machine, "-R")
    try:
        probe = subprocess.run(cmd + ("true",), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        ok = probe.returncode == 0
    except OSError:
        ok = False
    return cmd if ok else ()


def own_directory(path):
    st = os.lstat(path)
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid()


@contextlib.contextmanager
def nvcc_work_dir(module, target, log):
    """NVCC_WORK_ROOT/<module>.<architecture>, emptied, for the length of
    the with-block, under an exclusive lock. sm_XY and compute_XY share it,
    so their PTX stays the same (store_ptx_entry). Where that cannot be had
    (the root not writable, the directory another user's), a private
    temporary directory: the build works and its PTX may differ from another
    build's."""
    name = "%s.%s" % (module, target.split("_", 1)[1])
    lock = path = None
    try:
        if not re.fullmatch(r"[\w.+-]+", name):
            raise OSError("a name unfit for a directory")
        try:
            os.mkdir(NVCC_WORK_ROOT)
            os.chmod(NVCC_WORK_ROOT, 0o1777)  # shared like /tmp: users keep their own entries
        except FileExistsError:
            pass
        if not stat.S_ISDIR(os.lstat(NVCC_WORK_ROOT).st_mode):
            raise OSError("%s is not a directory" % NVCC_WORK_ROOT)
        # read-only: another user's lock file (0644) locks as well
        lock = os.open(os.path.join(NVCC_WORK_ROOT, name + ".lock"), os.O_RDONLY | os.O_CREAT, 0o644)
        fcntl.flock(lock, fcntl.LOCK_EX)
        path = os.path.join(NVCC_WORK_ROOT, name)
        if os.path.lexists(path):
            if not own_directory(path):
                raise OSError("%s belongs to another user" % path)
            shutil.rmtree(path)
        os.mkdir(path, 0o700)
    except OSError as e:
        if lock is not None:
            os.close(lock)
        log("note: %s: compiling in a private directory (%s); its PTX may differ from other builds'\n"
            % (name, e))
        path = None
    if path is None:
        with tempfile.TemporaryDirectory(prefix="kp-build-") as tmp:
            yield tmp
        return
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
        os.close(lock)


def nvcc_stage(args, tmp):
    """tmp/stage: a copy of the source, `srcdir` linking to its directory
    (searched first, for its quoted includes) and incN to the Nth include
    directory."""
    stage = os.path.join(tmp, "stage")
    os.mkdir(stage)
    shutil.copyfile(args.source, os.path.join(stage, os.path.basename(args.source)))
    os.symlink(os.path.dirname(os.path.abspath(args.source)), os.path.join(stage, "srcdir"))
    for i, d in enumerate(args.include):
        os.symlink(os.path.abspath(d), os.path.join(stage, "inc%d" % i))
    return stage


def unstaged_paths(args):
    """A function that gives nvcc's messages (and command) the paths the
    staged ones stand for: srcdir and incN (nvcc_stage), and the staged copy
    of the source, so that errors name the files a user edits."""
    dirs = {"srcdir": os.path.dirname(os.path.abspath(args.source))}
    dirs.update(("inc%d" % i, os.path.abspath(d)) for i, d in enumerate(args.include))
    source = os.path.basename(args.source)
    # srcdir/ or incN/ starting a path, -Isrcdir or -IincN, or the source's
    # name standing alone (not the end of a longer name)
    pattern = re.compile(r'(?<![\w./-])(?:(srcdir|inc\d+)(?=/)|-I(srcdir|inc\d+)(?![\w./-])|%s(?![\w.-]))'
                         % re.escape(source))

    def real(m):
        if m.group(1):
            return dirs[m.group(1)]
        if m.group(2):
            return "-I" + dirs[m.group(2)]
        return os.path.abspath(args.source)
    return lambda text: pattern.sub(real, text)


def run_nvcc(args, tmp, cmd, quiet=lambda line: False):
    """Runs nvcc (cmd: its arguments before the source, paths relative to
    tmp/stage) on the staged source; writes the depfile: the files the
    kernel cache's key covers (kernel_cache.inputs: the source and what it
    includes), as on a cache hit."""
    stage = nvcc_stage(args, tmp)
    flags = ["-std=c++17", "-O3", "-Xcompiler", "-Wall,-Wextra", "-Werror", "all-warnings", "-Isrcdir"]
    flags += ["-Iinc%d" % i for i in range(len(args.include))] + ["-D" + d for d in args.define]
    cmd = list(fixed_layout_prefix()) + [args.compiler] + cmd + flags + [os.path.basename(args.source)]
    text = run(args, cmd, env=nvcc_env(), cwd=stage, quiet=quiet, rewrite=unstaged_paths(args))
    kernel_cache.write_inputs_depfile(args.depfile, args.output, args.source, args.include)
    return text


def compile_cubin(args, tmp):
    arch = args.target[len("sm_"):]
    keep = os.path.join(tmp, "keep")
    os.mkdir(keep)
    text = run_nvcc(args, tmp, ["--cubin", "-gencode=arch=compute_%s,code=sm_%s" % (arch, arch),
                                "-Xptxas", "-v", "--keep", "--keep-dir", "../keep", "-o", "../module.cubin"],
                    quiet=ptxas_info_line)
    ptx_files = [f for f in os.listdir(keep) if f.endswith(".ptx")]
    if len(ptx_files) != 1:
        fail("expected one PTX file from the sm_%s compile, found %s" % (arch, ptx_files))
    with open(os.path.join(keep, ptx_files[0])) as fh:
        ptx = fh.read()
    kernels = describe_cubin(args, os.path.join(tmp, "module.cubin"), ptx, text)
    with open(args.ptx_output, "w") as fh:
        fh.write(ptx)
    return "cubin", kernels


def ptxas_info_line(line):
    return line.startswith("ptxas info") or re.match(r"\s+\d+ bytes stack frame", line)


PTX_TARGET = re.compile(r"^\.target\s+sm_(\d+)", re.M)


def assemble_cubin(args, tmp):
    """SASS for args.target from the PTX another target's compile kept
    (args.from_ptx): ptxas alone, no front end. Where two targets' PTX is the
    same but for its .target line (sm_80 and sm_86, sm_100 and sm_120 for the
    library's modules but quantized), the SASS is the same as a compile of its
    own, and the front end (cicc: about half of an sm_80 compile) runs once."""
    arch = int(args.target[len("sm_"):])
    with open(args.from_ptx) as fh:
        ptx = fh.read()
    m = PTX_TARGET.search(ptx)
    if not m or int(m.group(1)) > arch:
        fail("%s: PTX %s is not for an architecture at or below %s"
             % (args.target, os.path.basename(args.from_ptx), args.target))
    shutil.copyfile(args.from_ptx, os.path.join(tmp, "module.ptx"))
    text = run(args, [args.compiler, "--cubin", "-gencode=arch=compute_%s,code=sm_%d" % (m.group(1), arch),
                      "-Xptxas", "-v", "module.ptx", "-o", "module.cubin"],
               env=nvcc_env(), cwd=tmp, quiet=ptxas_info_line)
    kernel_cache.write_depfile(args.depfile, args.output, [os.path.abspath(args.from_ptx)])
    args.assembled_from = "compute_" + m.group(1)
    return "cubin", describe_cubin(args, os.path.join(tmp, "module.cubin"), ptx, text)


def describe_cubin(args, cubin, ptx, text):
    """The kernels of a cubin as read back from it, checked against its PTX
    and ptxas's report (text); copies the cubin to args.output."""
    with open(cubin, "rb") as fh:
        blob = fh.read()
    kernels = code_objects.cubin_kernels(blob)
    params = code_objects.ptx_params(ptx)
    report = ptxas_report(text)
    if set(kernels) != set(params) or set(kernels) != set(report):
        fail("%s: the cubin, its PTX and ptxas disagree on the kernels" % args.target)
    for name, k in kernels.items():
        r = report[name]
        seen = (k["registers"], k["local_bytes"], k["shared_bytes"])
        want = (r["registers"], r["stack"], r["smem"])
        if seen != want:
            fail("%s/%s: cubin says registers, stack, shared = %s, ptxas said %s"
                 % (args.target, name, seen, want))
        if [p[:2] for p in params[name]] != k["params"]:
            fail("%s/%s: cubin parameter layout %s differs from the PTX's %s"
                 % (args.target, name, k["params"], params[name]))
        k["spill_bytes"] = r["spill"]
        k["params"] = params[name]
    shutil.copyfile(cubin, args.output)
    return kernels


def compile_ptx(args, tmp):
    out = os.path.join(tmp, "module.ptx")
    run_nvcc(args, tmp, ["--ptx", "-arch=" + args.target, "-o", "../module.ptx"])
    with open(out) as fh:
        ptx = fh.read()
    kernels = {name: {"params": p} for name, p in code_objects.ptx_params(ptx).items()}
    shutil.copyfile(out, args.output)
    return "ptx", kernels


# --------------------------------------------------------------------- AMD

def compile_hsaco(args, tmp):
    out = os.path.join(tmp, "module.bundle")
    cmd = [args.compiler, "--genco", "--offload-arch=" + args.target, "-O3", "-std=c++17",
           "-Wall", "-Wextra", "-Werror", "-MD", "-MF" + args.depfile, "-MT" + args.output]
    cmd += ["-I" + d for d in args.include] + ["-D" + d for d in args.define]
    cmd += [args.source, "-o", out]
    run(args, cmd, env=dict(os.environ, HIP_PLATFORM="amd"))
    with open(out, "rb") as fh:
        entries = [(t, b) for t, b in code_objects.split_bundle(fh.read())
                   if t.startswith("hipv4-amdgcn")]
    if len(entries) != 1 or entries[0][0].split("--", 1)[1] != args.target:
        fail("hipcc output for %s holds %s" % (args.target, [t for t, _ in entries]))
    elf = entries[0][1]
    kernels = code_objects.hsaco_kernels(elf)
    symbols = sorted(n[:-3] for n, _v, _s, _t, _o, sh in code_objects.Elf(elf).symbols()
                     if n.endswith(".kd") and sh != 0)
    if symbols != sorted(kernels):
        fail("%s: kernel symbols %s and metadata %s disagree" % (args.target, symbols, sorted(kernels)))
    with open(args.output, "wb") as fh:
        fh.write(elf)
    return "hsaco", kernels


def compile_target(compiler, target, module, source, output, info_output, depfile,
                   includes=(), defines=(), ptx_output=None, from_ptx=None, log=sys.stderr.write):
    """Compiles `source` for `target` into `output` (and `ptx_output`, which
    sm_ targets need), writes the JSON description to `info_output` and the
    depfile, and returns the description. With `from_ptx` (sm_ targets), the
    cubin is assembled from that PTX (assemble_cubin) and `source` is only
    named. Compiler messages go to `log`. Raises CompileError."""
    args = argparse.Namespace(compiler=compiler, target=target, module=module, source=source,
                              output=output, info_output=info_output, depfile=depfile,
                              include=list(includes), define=list(defines),
                              ptx_output=ptx_output, from_ptx=from_ptx, assembled_from=None, log=log)
    front_end = target.startswith(("sm_", "compute_")) and not from_ptx
    work_dir = (nvcc_work_dir(module, target, log) if front_end
                else tempfile.TemporaryDirectory(prefix="kp-build-"))
    with work_dir as tmp:
        try:
            if from_ptx:
                if not target.startswith("sm_") or ptx_output:
                    fail("PTX assembles into an sm_ target's cubin alone, with no PTX output")
                kind, kernels = assemble_cubin(args, tmp)
            elif target.startswith("sm_"):
                if not ptx_output:
                    fail("an sm_ target needs --ptx-output")
                kind, kernels = compile_cubin(args, tmp)
            elif target.startswith("compute_"):
                kind, kernels = compile_ptx(args, tmp)
            elif target.startswith("gfx"):
                kind, kernels = compile_hsaco(args, tmp)
            else:
                fail("unknown target '%s'" % target)
        except code_objects.CodeObjectError as e:
            fail("%s/%s: %s" % (module, target, e))
    if not kernels:
        fail("no kernels found in %s for %s (a kernel is an extern \"C\" __global__ function: "
             "KP_KERNEL in kp_device.cuh)" % (module, target))
    return write_info(info_output, module, target, kind, kernels, args.assembled_from)


def write_info(info_output, module, target, kind, kernels, assembled_from=None):
    """The JSON description; a cubin assembled from another target's PTX
    names that PTX's architecture (embed_module.py embeds only PTX that a
    target's own compile kept)."""
    info = {"module": module, "target": target, "kind": kind,
            "kernels": {n: kernels[n] for n in sorted(kernels)}}
    if assembled_from:
        info["assembled_from"] = assembled_from
    with open(info_output, "w") as fh:
        json.dump(info, fh, sort_keys=True)
        fh.write("\n")
    return info


def store_ptx_entry(args, root, cubin_info):
    """Caches the PTX an sm_XY compile kept as the compute_XY target's result
    too: nvcc's --ptx for compute_XY runs the same front end on the same
    source with the same flags (byte for byte the same PTX with nvcc 13), so
    a PTX build after a cubin build of that architecture (CI's clang,
    consumer and sanitizer builds) compiles nothing."""
    target = "compute_" + args.target[len("sm_"):]
    entry = os.path.join(root, kernel_cache.key(args.compiler, target, args.module, args.source,
                                                args.include, (), False))
    # The cubin's description carries the PTX's parameter lists (compile_cubin).
    kernels = {n: {"params": k["params"]} for n, k in cubin_info["kernels"].items()}
    with tempfile.TemporaryDirectory(prefix="kp-build-") as tmp:
        info_path = os.path.join(tmp, "info.json")
        write_info(info_path, args.module, target, "ptx", kernels)
        kernel_cache.store(entry, {"object": args.ptx_output, "info": info_path})


def cached_compile(args):
    """compile_target() for the library's build, through kernel_cache when
    KP_KERNEL_CACHE names a directory."""
    outputs = {"object": args.output, "info": args.info_output, "ptx": args.ptx_output}
    root = kernel_cache.cache_dir()
    # An assembly's result depends on the PTX alone (its key hashes the PTX as the source).
    source, includes = (args.from_ptx, ()) if args.from_ptx else (args.source, args.include)
    if root:
        entry = os.path.join(root, kernel_cache.key(args.compiler, args.target, args.module,
                                                    source, includes, (), bool(args.ptx_output)))
        if kernel_cache.fetch(entry, outputs):
            kernel_cache.write_inputs_depfile(args.depfile, args.output, source, includes)
            return
    info = compile_target(args.compiler, args.target, args.module, args.source, args.output,
                          args.info_output, args.depfile, includes=args.include,
                          ptx_output=args.ptx_output, from_ptx=args.from_ptx)
    if root:
        kernel_cache.store(entry, outputs)
        if args.target.startswith("sm_") and not args.from_ptx:
            store_ptx_entry(args, root, info)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--compiler", required=True, help="nvcc or hipcc")
    p.add_argument("--target", required=True, help="sm_90, compute_75 or gfx90a")
    p.add_argument("--module", required=True)
    p.add_argument("--include", action="append", default=[])
    p.add_argument("--depfile", required=True)
    p.add_argument("--output", required=True, help="the code object")
    p.add_argument("--ptx-output", help="the PTX a cubin was built from (sm_ targets)")
    p.add_argument("--from-ptx", help="assemble the sm_ target's cubin from this PTX, which "
                   "another target's compile of the same source kept (source is then only named)")
    p.add_argument("--info-output", required=True, help="the JSON description")
    p.add_argument("source")
    args = p.parse_args()
    try:
        cached_compile(args)
    except CompileError as e:
        sys.stderr.write("compile_target.py: error: %s\n" % e)
        sys.exit(1)


if __name__ == "__main__":
    main()
