#!/usr/bin/env bash
# Instructions of the packet engine's step per packet-hop for one load-balancing/delivery pair of bench_balance
# (k = 8 fat-tree permutation of 2 MB flows, DCQCN), counted by valgrind's cachegrind and summed over the step's
# functions (orrery::net::*, run_node*) as cache_per_hop.sh sums them: what a mode costs per packet-hop against
# ECMP's, independent of this VM's speed. Needs Debian's valgrind.
# Usage: tests/bench/balance_per_hop.sh BUILD_DIR PAIR [PAIR ...]   e.g. ecmp/out_of_order adaptive/out_of_order
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR PAIR [PAIR ...]}
shift
[ $# -gt 0 ] || { echo "usage: $0 BUILD_DIR PAIR [PAIR ...]" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "$0: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
bench="$build/tests/bench/bench_balance"
[ -x "$bench" ] || { echo "$0: $bench not found: build first" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for pair in "$@"; do
  valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file="$out/cg.out" "$bench" --only "$pair" > "$out/run.txt" 2> "$out/valgrind.txt"
  hops=$(sed -n 's/^\([0-9]*\) packet-hops in all.*/\1/p' "$out/run.txt")
  [ -n "$hops" ] || { echo "$0: $pair: no packet-hop count in the run's output" >&2; cat "$out/run.txt" >&2; exit 1; }
  cg_annotate --threshold=0 "$out/cg.out" | sed -E 's/\([ 0-9.]+%\)//g; s/,//g' |
    awk -v hops="$hops" -v pair="$pair" '
      NF >= 2 && $1 ~ /^[0-9]+$/ && /orrery::net::|run_node/ { ir += $1 }
      END { printf "%-24s %.0f instructions per packet-hop (%d packet-hops)\n", pair, ir / hops, hops }'
done
