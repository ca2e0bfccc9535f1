#!/usr/bin/env bash
# Installs a kernelpack build into a scratch DESTDIR and checks the tree a
# distribution package would ship from it:
#   - only the library, headers (the C API and the kernels' portability
#     headers under kernelpack/device/), kernelpack.pc, tools, the module
#     builder kp-build-module with its scripts (libexecdir/kernelpack) and
#     docs, under the configured prefix and libdir;
#   - the staged kp-build-module runs and finds its settings, and
#     kernelpack.pc's build_module names it;
#   - SONAME libkernelpack.so.0, the .so.0 and .so symlinks;
#   - no RPATH or RUNPATH in any installed ELF file, and the installed kp-info
#     runs against the installed library;
#   - `pkg-config --validate`, and kernelpack.pc's gpu_backend is the backend
#     the library reports;
#   - the installed library's ABI (scripts/check-abi.py);
#   - RELRO, no executable stack, no text relocations; with --hardening also
#     stack protector, _FORTIFY_SOURCE and (if LDFLAGS asked for it) BIND_NOW.
# Usage: scripts/check-install.sh BUILD_DIR [--hardening]
set -euo pipefail
source "$(dirname "$0")/common.sh"

build=$(cd "${1:?usage: check-install.sh BUILD_DIR [--hardening]}" && pwd)
hardening=${2:-}
work=$(work_dir)
dest=$work/destdir

step "install $build into $dest"
DESTDIR=$dest meson install -C "$build" --quiet >/dev/null

options=$(meson introspect --buildoptions "$build" | python3 -c '
import json, sys
opts = {o["name"]: o["value"] for o in json.load(sys.stdin)}
print(*[opts[k] for k in ("prefix", "libdir", "bindir", "includedir", "datadir", "libexecdir",
                          "default_library", "tools", "gpu_backend")])')
read -r prefix libdir bindir includedir datadir libexecdir default_library tools option_backend <<<"$options"
version=$(meson introspect --projectinfo "$build" | python3 -c 'import json, sys; print(json.load(sys.stdin)["version"])')
abs() { case $1 in /*) echo "$1" ;; *) echo "$prefix/$1" ;; esac; }
libdir=$(abs "$libdir") bindir=$(abs "$bindir") includedir=$(abs "$includedir") datadir=$(abs "$datadir")
libexecdir=$(abs "$libexecdir")
note "prefix $prefix, libdir $libdir, default_library $default_library, version $version"

errors=0
problem() { printf '%s: %s\n' "$KP_CHECK_NAME" "$*" >&2; errors=$((errors + 1)); }
is_elf() { [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ]; }

step "installed files"
expected_files() {
    case $default_library in
        shared) echo "$libdir/libkernelpack.so.$version" "$libdir/libkernelpack.so.0" "$libdir/libkernelpack.so" ;;
        static) echo "$libdir/libkernelpack.a" ;;
        both) echo "$libdir/libkernelpack.so.$version" "$libdir/libkernelpack.so.0" "$libdir/libkernelpack.so" \
                   "$libdir/libkernelpack.a" ;;
    esac
    echo "$libdir/pkgconfig/kernelpack.pc" "$datadir/doc/kernelpack/LICENSE" "$datadir/doc/kernelpack/README.md"
    for h in "$KP_SOURCE_ROOT"/include/kernelpack/*.h; do echo "$includedir/kernelpack/$(basename "$h")"; done
    if [ "$tools" = True ]; then echo "$bindir/kp-info"; fi
    echo "$bindir/kp-build-module" "$includedir/kernelpack/device/kp_device.cuh" \
         "$includedir/kernelpack/device/kp_kernel_abi.h"
    for f in build_module.py compile_target.py embed_module.py code_objects.py kernel_cache.py \
             kp_build_config.json; do
        echo "$libexecdir/kernelpack/$f"
    done
}
for f in $(expected_files); do
    [ -e "$dest$f" ] || [ -L "$dest$f" ] || problem "missing: $f"
done
while IFS= read -r f; do
    case $f in
        "$libdir"/libkernelpack.so* | "$libdir/libkernelpack.a" | "$libdir/pkgconfig/kernelpack.pc" | \
        "$includedir"/kernelpack/*.h | "$includedir"/kernelpack/device/* | "$bindir"/kp-* | \
        "$libexecdir"/kernelpack/* | "$datadir"/doc/kernelpack/*) ;;
        *) problem "unexpected installed file: $f" ;;
    esac
done < <(cd "$dest" && find . \( -type f -o -type l \) | sed 's|^\.||' | LC_ALL=C sort)
(cd "$dest" && find . \( -type f -o -type l \) | sed 's|^\./|  /|' | LC_ALL=C sort)

shared=
if [ "$default_library" != static ]; then
    shared=$dest$libdir/libkernelpack.so.$version
    step "SONAME and symlinks"
    soname=$(readelf -d "$shared" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
    [ "$soname" = libkernelpack.so.0 ] || problem "SONAME is '$soname', want libkernelpack.so.0"
    [ "$(readlink "$dest$libdir/libkernelpack.so.0")" = "libkernelpack.so.$version" ] ||
        problem "libkernelpack.so.0 does not point to libkernelpack.so.$version"
    [ "$(readlink "$dest$libdir/libkernelpack.so")" = libkernelpack.so.0 ] ||
        problem "libkernelpack.so does not point to libkernelpack.so.0"
    note "SONAME $soname"
fi
if [ "$default_library" != shared ]; then
    step "static library namespace"
    # Internal functions are hidden in the shared library, but a static
    # archive exposes every global name to the program it is linked into.
    stray=$(nm -g --defined-only "$dest$libdir/libkernelpack.a" | awk 'NF == 3 && $3 !~ /^kp_/ {print $3}')
    [ -z "$stray" ] || problem "global names without the kp_ prefix in libkernelpack.a: $stray"
fi

step "ELF files: no RPATH/RUNPATH, RELRO, no executable stack, no text relocations"
ldflags=" ${LDFLAGS:-} "
while IFS= read -r f; do
    is_elf "$f" || continue
    case $f in *.a) continue ;; esac
    name=${f#"$dest"}
    dyn=$(readelf -dW "$f")
    segments=$(readelf -lW "$f")
    if grep -qE '\((RPATH|RUNPATH)\)' <<<"$dyn"; then
        problem "$name has $(grep -E '\((RPATH|RUNPATH)\)' <<<"$dyn" | sed 's/.*(\(.*\)).*: \[\(.*\)\]/\1 \2/')"
    fi
    grep -q GNU_RELRO <<<"$segments" || problem "$name has no RELRO segment"
    if grep -E 'GNU_STACK' <<<"$segments" | grep -q 'RWE'; then problem "$name has an executable stack"; fi
    if grep -qE '\(TEXTREL\)' <<<"$dyn"; then problem "$name has text relocations"; fi
    if [ "$hardening" = --hardening ]; then
        undefined=$(nm -D --undefined-only "$f")
        grep -q '__stack_chk_fail' <<<"$undefined" || problem "$name: no stack protector (__stack_chk_fail)"
        grep -qE '__[a-z0-9_]+_chk\b' <<<"$undefined" || problem "$name: no _FORTIFY_SOURCE functions (__*_chk)"
        case $ldflags in
            *-z,now* | *"-z now"*) grep -qE 'BIND_NOW|FLAGS_1.*NOW' <<<"$dyn" || problem "$name: LDFLAGS ask for -z now but it is not BIND_NOW" ;;
        esac
    fi
    note "checked $name"
done < <(find "$dest" -type f | LC_ALL=C sort)

step "pkg-config"
pc=$dest$libdir/pkgconfig/kernelpack.pc
pkg-config --validate "$pc" || problem "pkg-config --validate failed for kernelpack.pc"
export PKG_CONFIG_PATH=$dest$libdir/pkgconfig PKG_CONFIG_SYSROOT_DIR=$dest
flags=$(pkg-config --cflags --libs kernelpack)
note "pkg-config --cflags --libs kernelpack: $flags"
grep -q -- '-lkernelpack' <<<"$flags" || problem "pkg-config --libs lacks -lkernelpack"
pc_backend=$(pkg-config --variable=gpu_backend kernelpack)
pc_targets=$(pkg-config --variable=gpu_targets kernelpack)
note "gpu_backend=$pc_backend gpu_targets=$pc_targets"
case $pc_backend in cuda | rocm) ;; *) problem "kernelpack.pc: gpu_backend='$pc_backend'" ;; esac
[ -n "$pc_targets" ] || problem "kernelpack.pc: empty gpu_targets"
if [ "$option_backend" != auto ] && [ "$option_backend" != "$pc_backend" ]; then
    problem "configured with gpu_backend=$option_backend but kernelpack.pc says $pc_backend"
fi
pc_builder=$(PKG_CONFIG_SYSROOT_DIR='' pkg-config --variable=build_module kernelpack)
[ "$pc_builder" = "$bindir/kp-build-module" ] ||
    problem "kernelpack.pc: build_module='$pc_builder', want $bindir/kp-build-module"
unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR

step "the staged kp-build-module finds its scripts and settings"
"$dest$bindir/kp-build-module" --help >/dev/null || problem "kp-build-module --help failed"
settings=$("$dest$bindir/kp-build-module" --print-config) || problem "kp-build-module --print-config failed"
printf '%s\n' "$settings" | sed 's/^/  /'
grep -q "\"backend\": \"$pc_backend\"" <<<"$settings" ||
    problem "kp-build-module builds for another backend than kernelpack.pc ($pc_backend)"
grep -q "\"include\": \"$dest$includedir/kernelpack/device\"" <<<"$settings" ||
    problem "kp-build-module does not use the installed kernelpack/device headers"
# Users' kernels include kp_device.cuh alone: what it includes in quotes must
# be installed next to it.
while IFS= read -r h; do
    [ -f "$dest$includedir/kernelpack/device/$h" ] || problem "kernelpack/device/ includes $h, not installed there"
done < <(sed -n 's/^#include "\(.*\)"/\1/p' "$dest$includedir"/kernelpack/device/*)

if [ "$tools" = True ]; then
    step "installed kp-info runs against the installed library"
    info=$(LD_LIBRARY_PATH=$dest$libdir "$dest$bindir/kp-info") || problem "installed kp-info failed"
    printf '%s\n' "$info" | sed 's/^/  /'
    grep -q "backend $pc_backend\$" <<<"$(head -1 <<<"$info")" ||
        problem "kp-info reports another backend than kernelpack.pc ($pc_backend)"
fi
if [ "$tools" = True ] && [ -n "$shared" ]; then
    resolved=$(LD_LIBRARY_PATH=$dest$libdir ldd "$dest$bindir/kp-info" | awk '/libkernelpack/ {print $3}')
    [ "$resolved" = "$dest$libdir/libkernelpack.so.0" ] ||
        problem "kp-info loads libkernelpack from '$resolved', not the installed one"
fi

if [ -n "$shared" ]; then
    step "ABI of the installed library"
    python3 "$KP_SOURCE_ROOT/scripts/check-abi.py" "$shared" || problem "ABI check failed (see above)"
fi

[ $errors -eq 0 ] || fail "$errors problem(s) in the install tree of $build"
note "install tree OK"
