#!/usr/bin/env bash
# Runs the GPU test programs and kp-info of an existing build directory on a
# machine with a GPU, without needing Meson there. Usage:
#   scripts/gpu-suite.sh BUILD_DIR [LOG_DIR]
# Prints one line per program and a closing "N passed, N failed" line.
set -u
build=${1:?build dir}
logs=${2:-$build/gpu-logs}
mkdir -p "$logs"
"$build/tools/kp-info" | tee "$logs/kp-info.txt"
pass=0 fail=0 skip=0
for t in "$build"/tests/test_gpu_* "$build"/tests/example_minimal "$build"/tools/kp-bench; do
    [ -f "$t" ] && [ -x "$t" ] || continue
    name=$(basename "$t")
    args=()
    [ "$name" = kp-bench ] && args=(--elements 1048576 --iters 2)  # as the kp_bench_smoke test
    start=$(date +%s%N)
    "$t" "${args[@]}" >"$logs/$name.log" 2>&1
    rc=$?
    ms=$((($(date +%s%N) - start) / 1000000))
    case $rc in
        0) pass=$((pass + 1)); res=OK ;;
        77) skip=$((skip + 1)); res=SKIP ;;
        *) fail=$((fail + 1)); res="FAIL ($rc)" ;;
    esac
    printf '%-28s %-10s %7d ms  %s\n' "$name" "$res" "$ms" "$(grep -E '^[0-9]+%:' "$logs/$name.log" | tail -1)"
    [ "$res" = OK ] || tail -20 "$logs/$name.log"
done
echo "gpu suite: $pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
