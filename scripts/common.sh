# Functions shared by scripts/check-*.sh (sourced, not run).

KP_SOURCE_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KP_CHECK_NAME=$(basename "$0" .sh)

step() { printf '\n=== %s: %s\n' "$KP_CHECK_NAME" "$*"; }
note() { printf '%s: %s\n' "$KP_CHECK_NAME" "$*"; }
fail() { printf '%s: FAILED: %s\n' "$KP_CHECK_NAME" "$*" >&2; exit 1; }

# An empty directory for this check's builds: $KP_CHECK_ROOT/<check name>
# (default build-checks/ in the source tree, which git ignores).
work_dir() {
    local dir=${KP_CHECK_ROOT:-$KP_SOURCE_ROOT/build-checks}/$KP_CHECK_NAME
    rm -rf "$dir"
    mkdir -p "$dir"
    (cd "$dir" && pwd)
}

# Copies the source tree (without build directories) to $1: from a git
# checkout the tracked and untracked-but-not-ignored files, so uncommitted
# work is included; otherwise (an unpacked release) everything but build*/.
copy_source() {
    local dest=$1
    mkdir -p "$dest"
    if git -C "$KP_SOURCE_ROOT" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        (cd "$KP_SOURCE_ROOT" &&
         git ls-files -z --cached --others --exclude-standard |
         while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
         tar --null -T - -cf -) | tar -xf - -C "$dest"
    else
        (cd "$KP_SOURCE_ROOT" && tar --exclude='./build*' -cf - .) | tar -xf - -C "$dest"
    fi
}

# Debian's multiarch triplet (lib/<triplet> is where libraries go), or empty.
multiarch() {
    dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || ${CC:-cc} -print-multiarch 2>/dev/null || true
}

# Runs a command without network access when user namespaces allow it, as a
# package build on a Debian buildd or in Fedora's mock would.
offline() {
    if [ -z "${KP_OFFLINE_CHECKED:-}" ]; then
        KP_OFFLINE_CHECKED=1
        if unshare -rn true 2>/dev/null; then
            KP_OFFLINE=(unshare -rn)
            note "network access is cut for the build (unshare -rn)"
        else
            KP_OFFLINE=()
            note "unshare -rn is not available here: the build runs WITH network access" \
                 "(it uses none: --wrap-mode=nodownload and no download step)"
        fi
    fi
    "${KP_OFFLINE[@]}" "$@"
}

# The distribution's compiler flags (dpkg-buildflags, as debhelper sets them)
# for a build of the source tree $1: exports CFLAGS, CPPFLAGS, LDFLAGS, ...
# Falls back to the equivalent flags where dpkg-dev is not installed.
export_distro_flags() {
    local src=$1
    if command -v dpkg-buildflags >/dev/null; then
        eval "$(cd "$src" && dpkg-buildflags --export=sh)"
    else
        note "dpkg-buildflags not found; using Debian 12's default flags"
        export CFLAGS="-g -O2 -ffile-prefix-map=$src=. -fstack-protector-strong -Wformat -Werror=format-security"
        export CXXFLAGS=$CFLAGS CPPFLAGS="-Wdate-time -D_FORTIFY_SOURCE=2" LDFLAGS="-Wl,-z,relro"
    fi
    note "CFLAGS=$CFLAGS CPPFLAGS=$CPPFLAGS LDFLAGS=$LDFLAGS"
}
