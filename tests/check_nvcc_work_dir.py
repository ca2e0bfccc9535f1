#!/usr/bin/env python3
"""nvcc runs in the fixed directory NVCC_WORK_ROOT/<module>.<arch>
(compile_target.nvcc_work_dir), since cicc's PTX depends on the source's
absolute path. Checks, with a wrapper that records where nvcc runs: two
compiles of one source from two source directories both run there and give
the same PTX; two at once take turns (the lock); the directory is removed
afterwards; and where the root cannot be had the compile still succeeds in
a private directory and says so. Exits 77 for a target nvcc does not build.

Usage: check_nvcc_work_dir.py KERNELS_DIR COMPILER TARGET INCLUDE_DIR"""
import os
import shutil
import stat
import sys
import tempfile
import threading

kernels_dir, compiler, target, include_dir = sys.argv[1:5]
if not target.startswith(("sm_", "compute_")):
    print("SKIP: %s is not an nvcc target" % target)
    sys.exit(77)
sys.path.insert(0, kernels_dir)
import compile_target  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
fixture = os.path.join(here, "fixtures", "work_dir", "kernel.cu")
module = "work_dir_check"
fixed = os.path.join(compile_target.NVCC_WORK_ROOT, "%s.%s" % (module, target.split("_", 1)[1]))
failures = []

with tempfile.TemporaryDirectory() as tmp:
    record = os.path.join(tmp, "record")
    wrapper = os.path.join(tmp, "nvcc")
    with open(wrapper, "w") as fh:  # where it ran, when it started and ended
        fh.write('#!/bin/sh\necho "start $(date +%%s%%N) $(pwd -P)" >> %s\n'
                 '"%s" "$@"; rc=$?\necho "end $(date +%%s%%N)" >> %s\nexit $rc\n'
                 % (record, compiler, record))
    os.chmod(wrapper, 0o755)

    def compile_from(name, log=None):
        """Compiles a copy of the fixture in tmp/name/...; returns its PTX."""
        src_dir = os.path.join(tmp, name)
        os.makedirs(src_dir)
        source = os.path.join(src_dir, "kernel.cu")
        shutil.copyfile(fixture, source)
        out = lambda ext: os.path.join(src_dir, "k." + ext)
        sm = target.startswith("sm_")
        compile_target.compile_target(wrapper, target, module, source, out("obj"), out("json"), out("d"),
                                      includes=[include_dir], ptx_output=out("ptx") if sm else None,
                                      log=log or sys.stderr.write)
        with open(out("ptx") if sm else out("obj")) as fh:
            return fh.read()

    def runs():
        """[(start, end, directory)] of the recorded nvcc runs, then clears the record."""
        with open(record) as fh:
            lines = [line.split() for line in fh]
        os.remove(record)
        starts = [(int(w[1]), w[2]) for w in lines if w[0] == "start"]
        ends = [int(w[1]) for w in lines if w[0] == "end"]
        return [(s, e, d) for (s, d), e in zip(starts, ends)]

    ptx = [compile_from("a"), compile_from("a-longer-directory-name")]
    for start, end, where in runs():
        if where != os.path.join(fixed, "stage"):
            failures.append("nvcc ran in %s, not %s/stage" % (where, fixed))
    if ptx[0] != ptx[1]:
        failures.append("the two source directories gave different PTX")
    if os.path.lexists(fixed):
        failures.append("%s is left behind" % fixed)

    def compile_or_fail(name):
        try:
            compile_from(name)
        except compile_target.CompileError as e:
            failures.append("a compile of two at once failed: %s" % e)

    threads = [threading.Thread(target=compile_or_fail, args=("at-once-%d" % i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    spans = sorted(runs())
    if len(spans) != 2:
        failures.append("two compiles at once made %d nvcc runs" % len(spans))
    elif spans[1][0] < spans[0][1]:
        failures.append("two compiles at once overlapped in %s" % fixed)

    # A root that cannot be created (under a regular file): a private directory.
    blocker = os.path.join(tmp, "a-file")
    open(blocker, "w").close()
    compile_target.NVCC_WORK_ROOT = os.path.join(blocker, "root")
    notes = []
    compile_from("fallback", log=notes.append)
    where = runs()[0][2]
    if where.startswith(blocker) or where == os.path.join(fixed, "stage"):
        failures.append("the fallback compile ran in %s" % where)
    if not any("private directory" in n for n in notes):
        failures.append("the fallback was not reported (log: %r)" % notes)

for f in failures:
    print("FAIL:", f)
if not failures:
    print("ok: nvcc ran in %s, one compile at a time, the same PTX from two source paths" % fixed)
sys.exit(1 if failures else 0)
