#!/usr/bin/env bash
# The first README command: install what is missing, build Orrery (Release), and run the bundled demo.
# Until the workbench lands, the demo runs headless through orrery-cli and writes its results to out/demo/:
# an incast on the reference fat-tree under the four congestion controls, simulated at packet level.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
source installers/common.sh
orrery_build
cli=build/release/app/orrery-cli
demo=presets/scenarios/demo.json
mkdir -p out/demo
"$cli" validate "$demo"
"$cli" expand "$demo" --json > out/demo/experiments.json
"$cli" fabric "$demo" --stats --json > out/demo/fabric-stats.json
"$cli" fabric "$demo" -o out/demo/fabric.dot --force
"$cli" run "$demo" --out out/demo/results.sqlite --threads "$(nproc)" --json > out/demo/summary.json
echo
echo "orrery: demo results in $root/out/demo: results.sqlite (every run, flow, PFC frame and queue sample),"
echo "        summary.json (per congestion control), experiments.json, fabric-stats.json, fabric.dot"
