#!/usr/bin/env bash
# Instructions the engine spends on the engine-core issue's cases (reference_case.sh: the k = 8 ring, the k = 8
# incast, the k = 4 all-to-all), counted by callgrind on `orrery-cli run-hpcc … --threads 1`, whole process.
# This VM's wall times move by up to 30 % with its phase; instruction counts move by less than 0.1 % from run to
# run, so they are what engine/runtime/README.md compares changes by. Prints, per case, the instructions, the
# events handled, instructions per event, and an md5 of the output files (fct, pfc, qlen), so that a change
# meant to keep results can be checked byte for byte at the same time.
# Usage: tests/bench/instructions_per_case.sh BUILD_DIR [ring|incast|all-to-all|all]   (needs valgrind)
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR [ring|incast|all-to-all|all]}
which=${2:-all}
case "$which" in ring|incast|all-to-all) cases=$which ;; all) cases="ring incast all-to-all" ;;
  *) echo "$0: unknown case '$which': expected ring, incast, all-to-all or all" >&2; exit 2 ;; esac
cli="$(cd "$build" && pwd)/app/orrery-cli"
[ -x "$cli" ] || { echo "$0: $cli not found: build first" >&2; exit 2; }
command -v valgrind > /dev/null || { echo "$0: valgrind not found (apt-get install valgrind)" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
source "$here/reference_case.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for c in $cases; do
  mkdir -p "$work/$c" && cd "$work/$c"
  write_reference_case "$cli" "$c"
  valgrind --tool=callgrind --callgrind-out-file=callgrind.out --log-file=valgrind.log "$cli" run-hpcc config_ours.txt --threads 1 > run.log 2>&1
  instructions=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' valgrind.log)
  events=$(sed -n 's/.* \([0-9]*\) events in .*/\1/p' run.log)
  [ -n "$instructions" ] && [ -n "$events" ] || { echo "$0: $c: could not read the instruction or event count ($work/$c/run.log)" >&2; trap - EXIT; exit 1; }
  files=$(cat ours/fct.txt ours/pfc.txt ours/qlen.txt | md5sum | cut -c1-12)
  awk -v c="$c" -v i="$instructions" -v e="$events" -v f="$files" 'BEGIN {
    printf "%-10s %8.3f G instructions, %10d events, %5.0f instructions/event, output files md5 %s\n", c, i / 1e9, e, i / e, f }'
done
