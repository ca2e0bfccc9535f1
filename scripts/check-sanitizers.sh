#!/usr/bin/env bash
# Builds kernelpack with AddressSanitizer and UndefinedBehaviorSanitizer and
# runs the unit suite (and the abi and headers suites, which come for free).
# Any report fails the run: UBSan is built with -fno-sanitize-recover=all and
# ASan stops at the first error; LeakSanitizer is on. The gpu suite is left
# out: it skips without a GPU, and with one the vendor runtimes need
# ASAN_OPTIONS=protect_shadow_gap=0 and report their own leaks.
# Extra arguments go to meson setup (e.g. the backend and one target).
# Usage: scripts/check-sanitizers.sh [MESON_OPTION...]
set -euo pipefail
source "$(dirname "$0")/common.sh"

work=$(work_dir)
extra=()
# clang does not link the sanitizer runtimes into shared libraries, so
# -Wl,--no-undefined (b_lundef) would fail there.
case $(basename "${CC:-cc}") in *clang*) extra+=(-Db_lundef=false) ;; esac

step "configure and build with -Db_sanitize=address,undefined"
meson setup "$work/build" "$KP_SOURCE_ROOT" --werror -Db_sanitize=address,undefined \
    -Dc_args=-fno-sanitize-recover=all -Dcpp_args=-fno-sanitize-recover=all "${extra[@]}" "$@"
meson compile -C "$work/build"

step "unit, abi and headers suites under the sanitizers"
export ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
meson test -C "$work/build" --suite unit --suite abi --suite headers --print-errorlogs
step "unit suite again in one process per program (CK_FORK=no), so LeakSanitizer sees every test"
CK_FORK=no meson test -C "$work/build" --suite unit --print-errorlogs
if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$work/build/meson-logs/testlog.txt"; then
    fail "a sanitizer report is in $work/build/meson-logs/testlog.txt"
fi
note "unit suite clean under ASan and UBSan"
