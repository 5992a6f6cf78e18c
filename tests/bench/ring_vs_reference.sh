#!/usr/bin/env bash
# The engine-core issue's cases timed side by side (DCQCN, the reference's 100 Gb/s settings): the k = 8 ring
# (128 hosts, each sends 10 MB to the next; the default), the k = 8 incast (127 × 1 MB to host 0) or the k = 4
# all-to-all (240 × 1 MB): the reference simulator (HPCC ns-3, built as
# tests/reference/ns3-hpcc/README.md §9 says) and `orrery-cli run-hpcc` on one thread, on the same
# config.txt converted from an Orrery scenario. Prints both wall times, the ratio and whether the FCT files agree.
# Usage: tests/bench/ring_vs_reference.sh BUILD_DIR NS3_SIMULATION_DIR [ring|incast|all-to-all]   (NS3_SIMULATION_DIR holds build/scratch/third)
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR NS3_SIMULATION_DIR}
ns3=${2:?usage: $0 BUILD_DIR NS3_SIMULATION_DIR [ring|incast|all-to-all]}
case=${3:-ring}
case "$case" in ring|incast|all-to-all) ;; *) echo "$0: unknown case '$case': expected ring, incast or all-to-all" >&2; exit 2 ;; esac
cli="$(cd "$build" && pwd)/app/orrery-cli"
ns3=$(cd "$ns3" && pwd)
[ -x "$cli" ] || { echo "$0: $cli not found: build first" >&2; exit 2; }
[ -x "$ns3/build/scratch/third" ] || { echo "$0: $ns3/build/scratch/third not found: build the reference first" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
source "$here/reference_case.sh"
write_reference_case "$cli" "$case"
t0=$(date +%s.%N); LD_LIBRARY_PATH="$ns3/build" "$ns3/build/scratch/third" config_ref.txt > ref.log 2>&1; t1=$(date +%s.%N)
"$cli" run-hpcc config_ours.txt --threads 1 > ours.log 2>&1; t2=$(date +%s.%N)
python3 - "$t0" "$t1" "$t2" "$case" <<'PY'
import sys
t0, t1, t2 = map(float, sys.argv[1:4])
label = {"ring": "k = 8 ring, 128 x 10 MB", "incast": "k = 8 incast, 127 x 1 MB", "all-to-all": "k = 4 all-to-all, 240 x 1 MB"}[sys.argv[4]]
same = sorted(open("fct.txt")) == sorted(open("ours/fct.txt"))  # flows finishing in the same ns may be listed in another order
# DCQCN marks at random, so where queues build (incast, all-to-all) single flows are samples: compare the mean FCT
# (column 7, ns).
mean = lambda f: sum(int(l.split()[6]) for l in open(f)) / max(1, sum(1 for _ in open(f)))
print(f"{label}, DCQCN: reference {t1 - t0:.2f} s, orrery-cli run-hpcc (1 thread) {t2 - t1:.2f} s: {(t1 - t0) / (t2 - t1):.1f}x; "
      f"FCT files {'hold the same lines' if same else 'differ'}, mean FCT {100 * (mean('ours/fct.txt') / mean('fct.txt') - 1):+.2f} % against the reference")
PY
