#!/usr/bin/env bash
# Kernel-argument parity between a CUDA build and a ROCm build of the same
# sources: every kernel's HSACO argument list (offsets, sizes, alignment) on
# every AMD target must match its PTX .param list. Then shows the check
# catches a mismatch: a fixture with one argument of another size on AMD
# must fail it, and only on that kernel.
# Usage: scripts/check-kernel-args.sh CUDA_BUILD_DIR ROCM_BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/common.sh"
[ $# -eq 2 ] || fail "usage: $0 CUDA_BUILD_DIR ROCM_BUILD_DIR"
cuda=$1 rocm=$2

step "every kernel, every AMD target, against the PTX"
python3 "$KP_SOURCE_ROOT/tests/check_kernel_args.py" --cuda "$cuda/kernels" --rocm "$rocm/kernels"

step "a fixture with one argument of another size fails the check"
work=$(work_dir)
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
fixture=$KP_SOURCE_ROOT/tests/fixtures/parity_broken.cu
mkdir -p "$work/cuda" "$work/rocm"
compile() {  # dir, compiler, target, extension, extra args...
    local dir=$1 compiler=$2 target=$3 ext=$4
    shift 4
    python3 "$KP_SOURCE_ROOT/kernels/compile_target.py" --compiler "$compiler" --target "$target" \
        --module fixture --include "$KP_SOURCE_ROOT/kernels/common" --depfile "$dir/fixture.d" \
        --output "$dir/fixture.$target.$ext" --info-output "$dir/fixture.$target.json" "$@" "$fixture"
}
compile "$work/cuda" "$nvcc" sm_90 cubin --ptx-output "$work/cuda/fixture.sm_90.ptx"
compile "$work/rocm" hipcc gfx90a hsaco
if python3 "$KP_SOURCE_ROOT/tests/check_kernel_args.py" --cuda "$work/cuda" --rocm "$work/rocm" \
        > "$work/report.txt"; then
    cat "$work/report.txt"
    fail "the check accepted a kernel whose argument sizes differ between vendors"
fi
cat "$work/report.txt"
grep -q 'FAIL: fixture/parity_broken on gfx90a: argument 1 at offset 8, 4 bytes; the PTX has offset 8, 8 bytes' \
    "$work/report.txt" || fail "the check did not name parity_broken's argument 1"
if grep -q 'parity_ok' "$work/report.txt"; then
    fail "the check flagged parity_ok, whose arguments match"
fi
note "the broken fixture fails the check, the matching kernel passes"
