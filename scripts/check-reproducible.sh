#!/usr/bin/env bash
# Builds the same source twice, the way a distribution does, varying what
# must not matter: the source path (and its length), the time of the build
# and SOURCE_DATE_EPOCH, TZ, the locale and the umask. Then compares the two
# installed trees byte for byte: the library with its embedded GPU code
# objects, kp-info, headers and kernelpack.pc. On a difference it names the
# compiled code objects (kernels/*.fatbin, *.ptx, *.hsaco) and generated
# module sources that differ, and shows diffoscope's report when installed.
#
# Each build: a copy of the source tree, the build directory obj/ inside it
# (as debhelper does), --buildtype=plain and dpkg-buildflags' flags, whose
# -ffile-prefix-map turns the copy's path into "." in the debug info.
# Extra arguments go to both meson setups (e.g. the backend and targets).
# Usage: scripts/check-reproducible.sh [MESON_OPTION...]
set -euo pipefail
source "$(dirname "$0")/common.sh"

# The second build always runs the compilers. The first may take its
# kernels from the kernel cache (KP_KERNEL_CACHE, as CI sets it after its
# full builds): those were compiled by yet another build, in another tree
# and environment, so a compiler output that varied would still differ from
# the second build's. That saves compiling every kernel twice here.
kernel_cache=${KP_KERNEL_CACHE:-}
unset KP_KERNEL_CACHE
work=$(work_dir)
triplet=$(multiarch)

build_copy() {  # source dir, install dir, kernel cache or "", epoch, TZ, locale, umask, meson options...
    local src=$1 inst=$2 cache=$3 epoch=$4 tz=$5 locale=$6 mask=$7
    shift 7
    copy_source "$src"
    (
        umask "$mask"
        export SOURCE_DATE_EPOCH=$epoch TZ=$tz LC_ALL=$locale
        [ -z "$cache" ] || export KP_KERNEL_CACHE=$cache
        cd "$src"
        export_distro_flags "$src"
        note "source $src, kernel cache ${cache:-none}, SOURCE_DATE_EPOCH=$epoch TZ=$tz LC_ALL=$locale umask $mask, $(date)"
        meson setup obj --buildtype=plain --prefix=/usr --libdir="lib${triplet:+/$triplet}" \
            -Dtests=disabled "$@" >obj-setup.log || { cat obj-setup.log; exit 1; }
        meson compile -C obj
        DESTDIR=$inst meson install -C obj --no-rebuild --quiet >/dev/null
    )
}

step "first build"
build_copy "$work/a/kernelpack" "$work/install-a" "$kernel_cache" 1000000000 UTC C.UTF-8 022 "$@"
sleep 1  # a later second on the clock too
step "second build"
build_copy "$work/a-longer-second-path/kp-src" "$work/install-b" "" 1700000000 XYZ-14 C 002 "$@"

step "compare the installed trees"
list() { (cd "$1" && find . \( -type f -o -type l \) | LC_ALL=C sort); }
if ! diff <(list "$work/install-a") <(list "$work/install-b"); then
    fail "the two builds installed different sets of files (see above)"
fi
differing=()
while IFS= read -r f; do
    a=$work/install-a/$f b=$work/install-b/$f
    if [ -L "$a" ]; then
        [ "$(readlink "$a")" = "$(readlink "$b")" ] || differing+=("$f")
    elif ! cmp -s "$a" "$b"; then
        differing+=("$f")
    fi
done < <(list "$work/install-a")

if [ ${#differing[@]} -eq 0 ]; then
    list "$work/install-a" | sed 's|^\./|  identical: /|'
    note "the two builds are byte-identical"
    exit 0
fi

printf '  differs: /%s\n' "${differing[@]#./}"
step "what differs"
sections() { readelf -SW "$1" 2>/dev/null | sed -n 's/^ *\[ *[0-9]*\] \([^ ]*\) .*/\1/p' | grep -v '^NULL$' || true; }
differing_sections() {  # file a, file b, label: notes each ELF section whose bytes differ
    for s in $(sections "$1"); do
        cmp -s <(readelf -x "$s" "$1" 2>&1) <(readelf -x "$s" "$2" 2>&1) || note "$3: section $s differs"
    done
}
for f in "${differing[@]}"; do
    a=$work/install-a/$f b=$work/install-b/$f
    grep -qaF "$work/a/kernelpack" "$a" && note "$f contains its build's source path"
    differing_sections "$a" "$b" "$f"
done
# Last, so that they end the log: the build's kernel outputs that differ
# (each code object, the PTX and description it was built with, the
# combined object and the generated module source), with the ELF sections
# of a differing code object. The first build may have taken a kernel's
# outputs from the kernel cache (see above), the second compiled it.
same=0
for f in "$work"/a/kernelpack/obj/kernels/*.{cubin,ptx,json,hsaco,fatbin} \
         "$work"/a/kernelpack/obj/kernels/*_module.c; do
    [ -e "$f" ] || continue
    name=kernels/$(basename "$f")
    other=$work/a-longer-second-path/kp-src/obj/$name
    if cmp -s "$f" "$other"; then
        same=$((same + 1))
        continue
    fi
    note "DIFFERENT: $name (the compiler output or its embedding is not reproducible)"
    case $f in *.cubin|*.hsaco) differing_sections "$f" "$other" "$name" ;; esac
done
note "$same other kernel outputs are the same in both builds"
if command -v diffoscope >/dev/null; then
    diffoscope --text - "$work/install-a/${differing[0]}" "$work/install-b/${differing[0]}" | head -200 || true
else
    note "install diffoscope to see the differences in detail"
fi
fail "${#differing[@]} installed file(s) differ between the two builds"
