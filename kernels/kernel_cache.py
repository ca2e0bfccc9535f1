"""An optional cache of compiled kernel modules, for builds that compile
the same kernels again: several build directories of one checkout, or the
packaging checks, which rebuild one target many times.

Set KP_KERNEL_CACHE to a directory to use it; unset (the default), nothing
is cached. A result is reused only when everything that can change it is
the same: the compiler (its resolved path and `--version`), the target,
module and defines, these scripts, and the contents of every source file
under the module's directory and the include directories. The files are
hashed by content and path relative to their root, so a copy of the source
tree elsewhere (a dist tarball, a packaging build) hits the same entries.
The compiled outputs do not depend on where the tree is (the
reproducibility check verifies that), so reusing them is exact.
"""

import hashlib
import os
import shutil
import subprocess
import tempfile

SOURCE_SUFFIXES = (".cu", ".cuh", ".h", ".hpp")
SCRIPTS = ("compile_target.py", "code_objects.py", "kernel_cache.py")


def cache_dir():
    return os.environ.get("KP_KERNEL_CACHE") or None


def _tree_files(root):
    """(path relative to root, absolute path) of the sources under root, sorted."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            if name.endswith(SOURCE_SUFFIXES):
                path = os.path.join(dirpath, name)
                found.append((os.path.relpath(path, root), path))
    return found


def inputs(source, includes):
    """Every file the key covers, as (root tag, relative path, absolute path)."""
    roots = [("source", os.path.dirname(os.path.abspath(source)))]
    roots += [("include%d" % i, os.path.abspath(d)) for i, d in enumerate(includes)]
    return [(tag, rel, path) for tag, root in roots for rel, path in _tree_files(root)]


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
