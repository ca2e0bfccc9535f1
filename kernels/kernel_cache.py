"""An optional cache of compiled kernel modules, for builds that compile
the same kernels again: several build directories of one checkout, or the
packaging checks, which rebuild one target many times.

Set KP_KERNEL_CACHE to a directory to use it; unset (the default), nothing
is cached. A result is reused only when everything that can change it is
the same: the compiler (its resolved path and `--version`), the target,
module and defines, these scripts, and the contents of the module's source
and of every file it includes with #include "..." (followed through the
headers, whatever #if surrounds them: more files than the compiler reads,
never fewer). The files are hashed by content and path relative to their
root (the source's directory or an include directory), so a copy of the
source tree elsewhere (a dist tarball, a packaging build) hits the same
entries; an edit to one module's source leaves the others' entries valid.
The compiled outputs do not depend on where the tree is (the
reproducibility check verifies that), so reusing them is exact.
"""

import hashlib
import os
import re
import shutil
import subprocess
import tempfile

SCRIPTS = ("compile_target.py", "code_objects.py", "kernel_cache.py")


def cache_dir():
    return os.environ.get("KP_KERNEL_CACHE") or None


QUOTED_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)


def inputs(source, includes):
    """Every file the key covers, as (root tag, relative path, absolute path):
    the source and the closure of its quoted includes, each resolved as the
    compilers do (the including file's directory, then the source's, then
    the include directories); an include found nowhere is left to the
    compiler (a system header, or an error it reports)."""
    roots = [("source", os.path.dirname(os.path.abspath(source)))]
    roots += [("include%d" % i, os.path.abspath(d)) for i, d in enumerate(includes)]
    first = os.path.abspath(source)
    seen, todo = {first}, [first]
    while todo:
        path = todo.pop()
        with open(path, "rb") as fh:
            names = QUOTED_INCLUDE.findall(fh.read())
        for name in names:
            name = os.fsdecode(name)
            for d in [os.path.dirname(path)] + [root for _, root in roots]:
                candidate = os.path.normpath(os.path.join(d, name))
                if os.path.isfile(candidate):
                    if candidate not in seen:
                        seen.add(candidate)
                        todo.append(candidate)
                    break
    found = []
    for path in seen:  # named from the innermost root that holds it
        under = [(len(r), t, r) for t, r in roots if path.startswith(r + os.sep)] or [(0,) + roots[0]]
        _, tag, root = max(under)
        found.append((tag, os.path.relpath(path, root), path))
    return sorted(found)


def key(compiler, target, module, source, includes, defines, with_ptx):
    h = hashlib.sha256()

    def add(*parts):
        for p in parts:
            h.update(p if isinstance(p, bytes) else str(p).encode())
            h.update(b"\0")

    version = subprocess.run([compiler, "--version"], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, check=True).stdout
    add(os.path.realpath(shutil.which(compiler) or compiler), version)
    add(target, module, os.path.basename(source), with_ptx, *sorted(defines))
    here = os.path.dirname(os.path.abspath(__file__))
    for name in SCRIPTS:
        with open(os.path.join(here, name), "rb") as fh:
            add(name, fh.read())
    for tag, rel, path in inputs(source, includes):
        with open(path, "rb") as fh:
            add(tag, rel, fh.read())
    return h.hexdigest()


OUTPUTS = ("object", "info", "ptx")


def fetch(entry, outputs):
    """Copies a cached entry to `outputs` (name -> path or None); True on a hit."""
    if not os.path.isdir(entry):
        return False
    for name, path in outputs.items():
        if path and not os.path.exists(os.path.join(entry, name)):
            return False
    for name, path in outputs.items():
        if path:
            shutil.copyfile(os.path.join(entry, name), path)
    return True


def store(entry, outputs):
    """Adds the outputs to the cache; a concurrent writer of the same entry is harmless."""
    parent = os.path.dirname(entry)
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".tmp-", dir=parent)
    for name, path in outputs.items():
        if path:
            shutil.copyfile(path, os.path.join(tmp, name))
    try:
        os.rename(tmp, entry)
    except OSError:  # another build stored it first
        shutil.rmtree(tmp, ignore_errors=True)


def write_inputs_depfile(depfile, output, source, includes):
    """A depfile naming every file the key covers (inputs())."""
    write_depfile(depfile, output, [path for _, _, path in inputs(source, includes)])


def write_depfile(depfile, output, files):
    def esc(p):
        return p.replace("\\", "\\\\").replace(" ", "\\ ").replace("#", "\\#").replace("$", "$$")
    with open(depfile, "w") as fh:
        fh.write("%s: %s\n" % (esc(output), " \\\n  ".join(esc(f) for f in files)))
