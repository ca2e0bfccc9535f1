#!/usr/bin/env bash
# Makes the release tarball with `meson dist`, which archives the committed
# files of this git checkout (uncommitted changes are refused unless
# --allow-dirty is given) and then configures, builds, tests and installs
# the unpacked tarball. Then checks that the tarball holds sources only: no
# compiled code objects (fatbin, PTX, cubin, HSACO bundles), objects,
# libraries or build directories.
# Extra arguments go to meson setup, and so to the build of the tarball
# (e.g. the backend and one target).
# Usage: scripts/check-dist.sh [--allow-dirty] [MESON_OPTION...]
set -euo pipefail
source "$(dirname "$0")/common.sh"

dist_args=(--formats xztar)
if [ "${1:-}" = --allow-dirty ]; then dist_args+=(--allow-dirty); shift; fi
git -C "$KP_SOURCE_ROOT" rev-parse --is-inside-work-tree >/dev/null 2>&1 ||
    fail "meson dist needs a git checkout; $KP_SOURCE_ROOT is not one"
work=$(work_dir)

step "meson dist (builds and tests the tarball)"
meson setup "$work/build" "$KP_SOURCE_ROOT" "$@" >"$work/setup.log" || { cat "$work/setup.log"; exit 1; }
meson dist -C "$work/build" "${dist_args[@]}"
tarball=$(ls "$work"/build/meson-dist/kernelpack-*.tar.xz)
note "tarball: $tarball ($(du -h "$tarball" | cut -f1))"

step "the tarball holds sources only"
mkdir "$work/unpacked"
tar -xJf "$tarball" -C "$work/unpacked"
top=$(ls "$work/unpacked")
cd "$work/unpacked/$top"
errors=0
for f in meson.build meson_options.txt LICENSE README.md src/kernelpack.symbols \
         tests/consumers/consumer.c scripts/check-abi.py kernels/compile_target.py; do
    [ -f "$f" ] || { note "missing from the tarball: $f"; errors=$((errors + 1)); }
done
while IFS= read -r -d '' f; do
    case $f in
        *.fatbin | *.ptx | *.cubin | *.hsaco | *.co | *.o | *.a | *.so | *.so.* | *.pyc)
            note "built file in the tarball: $f"; errors=$((errors + 1)); continue ;;
    esac
    magic=$(head -c 24 "$f" | od -An -tx1 | tr -d ' \n')
    case $magic in
        7f454c46*) what="an ELF file" ;;
        50ed55ba*) what="a CUDA fat binary" ;;
        5f5f434c414e475f4f46464c4f41445f42554e444c455f5f*) what="a clang offload bundle" ;;
        *) what= ;;
    esac
    if [ -z "$what" ] && grep -qE '^\.version [0-9]+\.[0-9]+' "$f" && grep -qE '^\.target sm_' "$f"; then
        what="PTX"
    fi
    if [ -n "$what" ]; then note "$f is $what"; errors=$((errors + 1)); fi
done < <(find . -type f -print0)
dirs=$(find . -type d \( -name 'build*' -o -name __pycache__ -o -name meson-private \) | head)
if [ -n "$dirs" ]; then note "build directories in the tarball: $dirs"; errors=$((errors + 1)); fi
[ $errors -eq 0 ] || fail "$errors problem(s) in $tarball"
note "$(find . -type f | wc -l) source files, no compiled code; the tarball built and passed its tests"
