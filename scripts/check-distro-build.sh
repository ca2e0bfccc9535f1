#!/usr/bin/env bash
# Builds kernelpack the way Linux distributions do, without network access:
#   1. debhelper's meson setup (--buildtype=plain --wrap-mode=nodownload
#      --prefix=/usr --libdir=lib/<multiarch>) with dpkg-buildflags'
#      hardening flags (hardening=+all) and -Dauto_features=enabled (as
#      Fedora's %meson); build; tests with every timeout multiplied by 10
#      (CK_TIMEOUT_MULTIPLIER=10 meson test -t 10: slow build machines); no
#      probing of the build machine's GPUs; then
#      scripts/check-install.sh --hardening on the result;
#   2. the same with -Dauto_features=disabled: builds, and has no tests;
#   3. without Check (pkg-config pointed at an empty directory):
#      -Dtests=disabled and the default -Dtests=auto both configure.
# Extra arguments go to every meson setup (e.g. the backend and one target).
# Usage: scripts/check-distro-build.sh [MESON_OPTION...]
set -euo pipefail
source "$(dirname "$0")/common.sh"

work=$(work_dir)
triplet=$(multiarch)
export LC_ALL=C.UTF-8
export DEB_BUILD_MAINT_OPTIONS=${DEB_BUILD_MAINT_OPTIONS:-hardening=+all}
export_distro_flags "$KP_SOURCE_ROOT"
distro_setup=(--wrap-mode=nodownload --buildtype=plain --prefix=/usr --sysconfdir=/etc
              --localstatedir=/var --libdir="lib${triplet:+/$triplet}" --werror)

test_count() { meson introspect --tests "$1" | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))'; }

step "auto_features=enabled: configure, build, test (offline)"
offline meson setup "$work/enabled" "$KP_SOURCE_ROOT" "${distro_setup[@]}" -Dauto_features=enabled "$@"
offline meson compile -C "$work/enabled" 2>&1 | tee "$work/enabled/compile.log"
# hipcc without --offload-arch would run rocm_agent_enumerator on the build host.
if grep -q rocm_agent_enumerator "$work/enabled/meson-logs/meson-log.txt" "$work/enabled/compile.log"; then
    fail "the build probed the build machine's GPUs (rocm_agent_enumerator)"
fi
CK_TIMEOUT_MULTIPLIER=10 offline meson test -C "$work/enabled" -t 10 --print-errorlogs
scripts_dir=$KP_SOURCE_ROOT/scripts
"$scripts_dir/check-install.sh" "$work/enabled" --hardening

step "auto_features=disabled: configure, build (offline)"
offline meson setup "$work/disabled" "$KP_SOURCE_ROOT" "${distro_setup[@]}" -Dauto_features=disabled "$@"
offline meson compile -C "$work/disabled"
n=$(test_count "$work/disabled")
[ "$n" = 0 ] || fail "auto_features=disabled still defines $n tests"

step "without Check: tests=disabled and tests=auto configure"
mkdir -p "$work/empty-pkgconfig"
export PKG_CONFIG_LIBDIR=$work/empty-pkgconfig PKG_CONFIG_PATH=
if pkg-config --exists check; then
    fail "pkg-config still finds check with PKG_CONFIG_LIBDIR=$PKG_CONFIG_LIBDIR; cannot test a build without it"
fi
offline meson setup "$work/nocheck-disabled" "$KP_SOURCE_ROOT" "${distro_setup[@]}" -Dtests=disabled "$@"
offline meson setup "$work/nocheck-auto" "$KP_SOURCE_ROOT" "${distro_setup[@]}" "$@"
for d in nocheck-disabled nocheck-auto; do
    n=$(test_count "$work/$d")
    [ "$n" = 0 ] || fail "$d: $n tests defined although Check is not found"
done
grep -q 'Run-time dependency check found: NO' "$work/nocheck-auto/meson-logs/meson-log.txt" ||
    fail "nocheck-auto: the log does not show Check as not found"

note "distribution builds OK"
