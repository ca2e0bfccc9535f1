#!/usr/bin/env bash
# Builds and runs the two consumer projects in tests/consumers/, which use
# kernelpack the way other projects do, each with its own kernel
# (tests/consumers/kernels/scale.cu) built by kp-build-module:
#   pkgconfig   finds the library that BUILD_DIR installs (into a scratch
#               DESTDIR) through kernelpack.pc alone (--wrap-mode=nofallback),
#               and the staged kp-build-module through its build_module variable;
#   subproject  builds this source tree as a Meson subproject
#               (--wrap-mode=nodownload --force-fallback-for=kernelpack), for
#               the backend, targets and code format BUILD_DIR was built for,
#               choosing the backend through dependency(default_options:), and
#               uses the build tree's kp-build-module; kernelpack's own tests
#               are enabled there (unless --no-kernelpack-tests, which saves
#               their build), and `meson test --no-suite kernelpack` must run
#               the parent's test alone.
# Each reads gpu_backend from the dependency and its program checks at run
# time that the library agrees (kp_backend_name, kp_module_count,
# kp_device_count), that its module's descriptor matches the dependency's
# gpu_targets and code_format, and with a GPU runs its kernel against the
# CPU; it passes without a GPU.
# Usage: scripts/check-consumers.sh BUILD_DIR [--no-kernelpack-tests]
set -euo pipefail
source "$(dirname "$0")/common.sh"

build=$(cd "${1:?usage: check-consumers.sh BUILD_DIR [--no-kernelpack-tests]}" && pwd)
case ${2:-} in
    "") kernelpack_tests=enabled ;;
    --no-kernelpack-tests) kernelpack_tests=disabled ;;
    *) fail "unknown option '$2' (usage: check-consumers.sh BUILD_DIR [--no-kernelpack-tests])" ;;
esac
work=$(work_dir)
dest=$work/destdir
cp -r "$KP_SOURCE_ROOT/tests/consumers" "$work/consumers"

step "install $build into $dest"
DESTDIR=$dest meson install -C "$build" --quiet >/dev/null
pc=$(find "$dest" -path '*/pkgconfig/kernelpack.pc' | head -1)
[ -n "$pc" ] || fail "the install of $build has no kernelpack.pc"
pcdir=$(dirname "$pc")
libdir=$(dirname "$pcdir")
backend=$(PKG_CONFIG_PATH=$pcdir pkg-config --variable=gpu_backend kernelpack)
targets=$(PKG_CONFIG_PATH=$pcdir pkg-config --variable=gpu_targets kernelpack)
code_format=$(PKG_CONFIG_PATH=$pcdir pkg-config --variable=code_format kernelpack)
note "installed kernelpack: gpu_backend=$backend gpu_targets=$targets code_format=$code_format"

step "consumer through pkg-config"
(
    cd "$work/consumers/pkgconfig"
    export PKG_CONFIG_PATH=$pcdir PKG_CONFIG_SYSROOT_DIR=$dest
    meson setup build --wrap-mode=nofallback -Dexpected_backend="$backend"
    meson compile -C build
    LD_LIBRARY_PATH=$libdir meson test -C build --print-errorlogs
    LD_LIBRARY_PATH=$libdir build/consumer
)

step "consumer with kernelpack as a subproject (gpu_backend=$backend)"
(
    cd "$work/consumers/subproject"
    copy_source subprojects/kernelpack
    options=()
    if [ "$backend" = cuda ]; then
        options=(-Dkernelpack:nvcc_archs="$targets" -Dkernelpack:nvcc_code="$code_format")
    else
        options=(-Dkernelpack:amdgpu_targets="$targets")
    fi
    meson setup build --wrap-mode=nodownload --force-fallback-for=kernelpack \
        -Dkernelpack_backend="$backend" "${options[@]}" \
        -Dkernelpack:tests="$kernelpack_tests"
    meson compile -C build
    build/consumer
    meson test -C build --no-suite kernelpack --print-errorlogs | tee "$work/parent-tests.txt"
    ran=$(sed -n 's/^Ok: *\([0-9]*\).*/\1/p' "$work/parent-tests.txt")
    [ "$ran" = 1 ] || fail "meson test --no-suite kernelpack ran $ran tests, want only the parent's 1"
    if [ "$kernelpack_tests" = enabled ]; then
        meson test -C build --suite kernelpack --print-errorlogs
    fi
)

note "both consumer projects built and passed (backend $backend)"
