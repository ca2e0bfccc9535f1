#!/usr/bin/env python3
"""A kernel that fails to compile is reported with the paths of the files
involved: nvcc runs on a staged copy of the source with relative include
directories (compile_target.nvcc_stage), and its messages must still name
the real header and source, not the staged names (srcdir, incN).

Usage: check_compile_messages.py KERNELS_DIR COMPILER TARGET INCLUDE_DIR"""
import os
import sys
import tempfile

kernels_dir, compiler, target, include_dir = sys.argv[1:5]
sys.path.insert(0, kernels_dir)
import compile_target  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
source = os.path.join(here, "fixtures", "compile_error", "kernel.cu")
helper_dir = os.path.join(here, "fixtures", "compile_error", "include")
helper = os.path.join(helper_dir, "broken_helper.cuh")

messages = []
with tempfile.TemporaryDirectory() as tmp:
    out = lambda name: os.path.join(tmp, name)
    try:
        compile_target.compile_target(compiler, target, "compile_error", source, out("k.o"), out("k.json"),
                                      out("k.d"), includes=[include_dir, helper_dir],
                                      ptx_output=out("k.ptx") if target.startswith("sm_") else None,
                                      log=messages.append)
        sys.exit("the broken fixture compiled")
    except compile_target.CompileError as e:
        error = str(e)

text = "".join(messages)
print(text)
print("error:", error)
failures = []
if helper not in text:
    failures.append("the messages do not name the header %s" % helper)
if "name_nothing_declares" not in text:
    failures.append("the messages do not show the compiler's diagnostic")
if source not in error:
    failures.append("the error does not name the source %s" % source)
for staged in ("srcdir/", "inc0/", "inc1/"):
    if staged in text or staged in error:
        failures.append("a staged path (%s) is shown" % staged)
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
