#!/usr/bin/env bash
# Runs every GPU test program, the README example and a small kp-bench of an
# existing build under compute-sanitizer's memcheck, racecheck, initcheck
# and synccheck, on a machine with an NVIDIA GPU (Meson not needed there).
# The tests run in their reduced-size mode (KP_TEST_SKIP_BIG: the gigabyte
# 64-bit-indexing cases are skipped; their kernels run on smaller tensors).
#   scripts/gpu-sanitize.sh BUILD_DIR [LOG_DIR] [JOBS]
# Programs run JOBS at a time (default 4). Prints a line per tool and
# program with an error, then one summary line per tool; exits non-zero if
# any tool reports an error or a program fails under it.
set -u
build=${1:?build dir}
logs=${2:-$build/sanitize-logs}
jobs=${3:-4}
sanitizer=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
[ -x "$sanitizer" ] || { echo "gpu-sanitize: compute-sanitizer not found" >&2; exit 2; }
mkdir -p "$logs"
export KP_TEST_SKIP_BIG=1

programs=()
for t in "$build"/tests/test_gpu_* "$build"/tests/example_minimal "$build"/tools/kp-bench; do
    [ -f "$t" ] && [ -x "$t" ] && programs+=("$t")
done

run_one() {  # tool, program
    local tool=$1 prog=$2 name args=()
    name=$(basename "$prog")
    [ "$name" = kp-bench ] && args=(--elements 65536 --iters 1 --warmup 1)
    "$sanitizer" --tool "$tool" --print-limit 50 --error-exitcode 99 \
        "$prog" "${args[@]}" >"$logs/$tool.$name.log" 2>&1
    echo $? >"$logs/$tool.$name.rc"
}
export -f run_one
export sanitizer logs

for tool in memcheck racecheck initcheck synccheck; do
    for p in "${programs[@]}"; do printf '%s\0%s\0' "$tool" "$p"; done
done | xargs -0 -n 2 -P "$jobs" bash -c 'run_one "$0" "$1"'

status=0
for tool in memcheck racecheck initcheck synccheck; do
    errors=0 failed=0 ran=0
    for p in "${programs[@]}"; do
        name=$(basename "$p")
        log=$logs/$tool.$name.log rc=$(cat "$logs/$tool.$name.rc" 2>/dev/null || echo missing)
        ran=$((ran + 1))
        # "ERROR SUMMARY: N errors" / "RACECHECK SUMMARY: ... (N errors, M warnings)"
        n=$(grep -Eo '(ERROR SUMMARY: [0-9]+ error|\([0-9]+ error)' "$log" | grep -Eo '[0-9]+' | tail -1)
        n=${n:-0}
        if [ "$rc" != 0 ] && [ "$rc" != 77 ]; then
            failed=$((failed + 1))
            echo "$tool: $name exited $rc ($n errors); see $log"
            grep -m 5 -E '^=========  *(Invalid|Uninitialized|Race|Barrier|Error)|^[0-9]+%:' "$log"
        fi
        errors=$((errors + n))
    done
    echo "compute-sanitizer $tool: $ran programs, $errors errors, $failed failed"
    [ $errors -eq 0 ] && [ $failed -eq 0 ] || status=1
done
exit $status
