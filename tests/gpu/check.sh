#!/usr/bin/env bash
# The one-shot check for the first GPU Orrery runs on (issue 85): builds the engine for the card it finds, runs
# test_device there (the CPU backend is the reference, every comparison byte for byte), then the device
# benchmarks, each with the CPU backend's figures for the same inputs in the same run, so every ratio is measured
# side by side on one machine. Sized to finish in under 8 minutes on one H100 or H200.
#
# Without a usable GPU (no nvidia-smi, or it lists none) the same steps run on Thrust's OpenMP device system
# (the device-omp preset) with the benchmarks scaled down, so the script itself is tested on any machine; it says
# which it ran on. Outputs: $OUT when set, else build/gpu-check/: check.log (every step, its exit status and wall
# time, the figures), one file per step with its whole output, summary.txt.
#
#   tests/gpu/check.sh            # everything
#   CHECK_SKIP_BUILD=1 tests/gpu/check.sh   # reuse the build folder (already built for this machine)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$root/build/gpu-check}
mkdir -p "$out"
log="$out/check.log"
: > "$log"
say() { echo "$*" | tee -a "$log"; }
failures=0

# step NAME SECONDS COMMAND...: runs it with a time limit, its output to NAME.txt, its status and wall time to the log.
step() {
    local name=$1 limit=$2
    shift 2
    say "== $name: $*"
    local t0 t1 rc
    t0=$(date +%s.%N)
    timeout "$limit" "$@" > "$out/$name.txt" 2>&1
    rc=$?
    t1=$(date +%s.%N)
    say "   exit $rc after $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s$([ $rc -eq 124 ] && echo " (stopped at the $limit s limit)")"
    [ $rc -eq 0 ] || failures=$((failures + 1))
    return $rc
}

# The card: name, compute capability (the CUDA architecture to build for), memory.
card=""
if command -v nvidia-smi > /dev/null 2>&1; then
    card=$(nvidia-smi --query-gpu=name,compute_cap,memory.total --format=csv,noheader 2>/dev/null | head -1)
fi
if [ -n "$card" ]; then
    arch=$(echo "$card" | cut -d, -f2 | tr -d ' .')
    gpus=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
    preset=engine-only
    configure=(cmake --preset engine-only -DORRERY_WITH_CUDA=ON -DORRERY_DEVICE_SYSTEM=CUDA "-DCMAKE_CUDA_ARCHITECTURES=$arch")
    say "GPU: $card ($gpus of them); building for sm_$arch"
else
    gpus=0
    preset=device-omp
    configure=(cmake --preset device-omp)
    say "no GPU found (nvidia-smi lists none): the device backend on Thrust's OpenMP device system, benchmarks scaled down"
fi
say "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB; commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
build="$root/build/$preset"
threads=$(nproc)

cd "$root" || exit 1
if [ -z "${CHECK_SKIP_BUILD:-}" ]; then
    step configure 300 "${configure[@]}" || { say "configure failed: see $out/configure.txt"; exit 1; }
    step build 1200 cmake --build "$build" --target test_device bench_device orrery-cli -j "$threads" || { say "build failed: see $out/build.txt"; exit 1; }
fi

# Correctness first: every reference scenario, permutations and incasts, byte for byte against the CPU backend.
step test_device 600 "$build/tests/test_device"
grep -E "^(PASS|FAIL|SKIP|Totals)" "$out/test_device.txt" | grep -v "^PASS" | tee -a "$log"

# Speed, the device beside the CPU backend in one run (the same inputs, results compared).
if [ "$gpus" -gt 0 ]; then
    step sweep500 900 "$build/tests/bench/bench_device" --case sweep500 --cpu yes --repeats 1 --threads "$threads"
    step k60 900 "$build/tests/bench/bench_device" --case k64 --k 60 --cpu yes --repeats 1 --threads "$threads"
else
    step sweep64 600 "$build/tests/bench/bench_device" --case sweep64 --cpu yes --repeats 1 --threads "$threads"
    step k16 600 "$build/tests/bench/bench_device" --case k64 --k 16 --cpu yes --repeats 1 --threads "$threads"
fi
say "One experiment split over several devices (issue 85, item 1) is not built yet: not measured."

{
    echo "card: ${card:-none (OpenMP device system)}"
    echo "failed steps: $failures"
    for f in "$out"/sweep*.txt "$out"/k*.txt; do
        [ -f "$f" ] || continue
        echo "-- $(basename "$f" .txt)"
        grep -E "experiments;|device backend:|CPU backend:|device / CPU" "$f"
    done
} > "$out/summary.txt"
cat "$out/summary.txt" | tee -a "$log"
exit $((failures > 0))
