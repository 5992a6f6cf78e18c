#!/usr/bin/env bash
# The first README command: install what is missing, build Orrery (Release), and run the bundled demo.
# Until the workbench lands, the demo runs headless through orrery-cli and writes its results to out/demo/.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
source installers/common.sh
orrery_build
cli=build/release/app/orrery-cli
demo=presets/scenarios/demo.json
mkdir -p out/demo
"$cli" validate "$demo"
"$cli" expand "$demo"
"$cli" expand "$demo" --json > out/demo/experiments.json
"$cli" fabric "$demo" --stats --json > out/demo/fabric-stats.json
"$cli" fabric "$demo" -o out/demo/fabric.dot --force
"$cli" fabric "$demo" -o out/demo/fabric.graphml --force
echo
echo "orrery: demo results in $root/out/demo: experiments.json (the sweep), fabric-stats.json, fabric.dot, fabric.graphml"
