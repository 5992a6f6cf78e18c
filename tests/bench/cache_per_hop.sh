#!/usr/bin/env bash
# Cache misses per packet-hop of the packet engine's step, simulated by valgrind's cachegrind (this VM has
# no hardware counters: `perf stat` says "not supported"). Runs bench_scale once under cachegrind with a
# 32 KiB L1d and a 2 MiB 16-way last level (a core's share of a server's cache), then sums the step's
# functions (orrery::net::*, run_node*) and divides by the run's
# packet-hops. Needs Debian's valgrind. About 50× slower than the run itself: k = 16 × 1 MB takes ~3 minutes.
# Usage: tests/bench/cache_per_hop.sh BUILD_DIR K SIZE_BYTES [PACKET_BYTES: 32 (default) or 64]
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR K SIZE_BYTES [PACKET_BYTES]}
k=${2:?usage: $0 BUILD_DIR K SIZE_BYTES [PACKET_BYTES]}
size=${3:?usage: $0 BUILD_DIR K SIZE_BYTES [PACKET_BYTES]}
packet_bytes=${4:-32}   # 32: what a batch without HPCC stores; 64: the whole line (bench_scale --packet-bytes)
command -v valgrind >/dev/null || { echo "$0: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
bench="$build/tests/bench/bench_scale"
[ -x "$bench" ] || { echo "$0: $bench not found: build first" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
valgrind --tool=cachegrind --cache-sim=yes --D1=32768,8,64 --LL=2097152,16,64 --cachegrind-out-file="$out/cg.out" \
  "$bench" --k "$k" --size "$size" --packet-bytes "$packet_bytes" > "$out/run.txt" 2> "$out/valgrind.txt"
hops=$(grep -o '[0-9.e+]* packet-hops' "$out/run.txt" | cut -d' ' -f1)
cat "$out/run.txt"
# cg_annotate rows: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw, each "N (p%)", then file:function.
cg_annotate --threshold=0 "$out/cg.out" | sed -E 's/\([ 0-9.]+%\)//g; s/,//g' |
  awk -v hops="$hops" '
    NF >= 10 && $1 ~ /^[0-9]+$/ && /orrery::net::|run_node/ {
      ir += $1; d1 += $5 + $8; ll += $6 + $9
    }
    END {
      printf "step functions: %.0f instructions per packet-hop, %.2f L1d misses and %.3f last-level misses per packet-hop\n",
             ir / hops, d1 / hops, ll / hops
    }'
