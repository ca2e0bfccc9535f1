#!/usr/bin/env python3
"""The kernel cache's key (kernels/kernel_cache.py) covers a module's source
and the files it includes, followed through the headers, and nothing else:
an edit to another module or to a header nobody includes leaves the entry
valid, one to any included header does not, and a copy of the tree
elsewhere keys the same. The depfile names the same files.

Usage: check_kernel_cache.py KERNELS_DIR"""
import os
import sys
import tempfile

sys.path.insert(0, sys.argv[1])
import kernel_cache  # noqa: E402

FILES = {
    "src/a.cu": '#include "x.cuh"\n#if 0\n#  include "cond.h"\n#endif\n#include <stdint.h>\n'
                '#include "not_anywhere.h"\n#include "local.h"\n',
    "src/local.h": "// next to the source\n",
    "src/b.cu": '#include "y.h"\n',
    "inc/x.cuh": '#pragma once\n#include "y.h"\n',
    "inc/y.h": "#pragma once\n",
    "inc/cond.h": "#pragma once\n",
    "inc/unused.h": "#pragma once\n",
}
failures = []


def check(ok, what):
    print("ok  " if ok else "FAIL", what)
    if not ok:
        failures.append(what)


def make_tree(root):
    for rel, text in FILES.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as fh:
            fh.write(text)


def key(root):
    return kernel_cache.key(sys.executable, "sm_90", "a", os.path.join(root, "src/a.cu"),
                            [os.path.join(root, "inc")], (), True)


def edit(root, rel):
    with open(os.path.join(root, rel), "a") as fh:
        fh.write("// edited\n")


with tempfile.TemporaryDirectory() as tmp:
    one, two = os.path.join(tmp, "one"), os.path.join(tmp, "a", "longer", "two")
    make_tree(one)
    make_tree(two)
    covered = sorted((tag, rel) for tag, rel, _ in
                     kernel_cache.inputs(os.path.join(one, "src/a.cu"), [os.path.join(one, "inc")]))
    check(covered == [("include0", "cond.h"), ("include0", "x.cuh"), ("include0", "y.h"),
                      ("source", "a.cu"), ("source", "local.h")],
          "the key covers the source and its include closure: %s" % covered)
    base = key(one)
    check(key(two) == base, "a copy of the tree elsewhere has the same key")
    for rel in ("src/b.cu", "inc/unused.h"):
        edit(one, rel)
        check(key(one) == base, "an edit to %s (not included) keeps the key" % rel)
    for rel in ("inc/y.h", "inc/cond.h", "src/local.h", "src/a.cu"):
        before = key(one)
        edit(one, rel)
        check(key(one) != before, "an edit to %s changes the key" % rel)
    depfile = os.path.join(tmp, "a.d")
    kernel_cache.write_inputs_depfile(depfile, "a.cubin", os.path.join(one, "src/a.cu"), [os.path.join(one, "inc")])
    with open(depfile) as fh:
        text = fh.read()
    listed = {os.path.basename(w) for w in text.replace("\\\n", " ").split()[1:]}
    check(listed == {"a.cu", "local.h", "x.cuh", "y.h", "cond.h"}, "the depfile names those files: %s" % sorted(listed))

sys.exit(1 if failures else 0)
