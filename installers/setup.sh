#!/usr/bin/env bash
# The first README command: install what is missing, build Orrery (Release), and open the workbench on its
# bundled demo project (out/demo/demo.orrery: 32 H100s on 2:1 oversubscribed leaves, a 4-layer GPT-3 6.7B, a sweep over
# four congestion controls). On a machine without a display it runs the demo headless instead and writes its
# results into the same project (which the workbench opens later), the comparison report (HTML and PDF), a
# screenshot of the workbench (when xvfb-run is there) and the CLI's summaries into out/demo/.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
source installers/common.sh
orrery_build -DORRERY_WERROR=OFF  # a user's compiler may warn where ours does not: never fail their build for it
cli=build/release/app/orrery-cli
workbench=build/release/app/orrery
project=out/demo/demo.orrery
mkdir -p out/demo
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] && [ -x "$workbench" ]; then
  echo "orrery: opening the workbench on $root/$project (Run > Run, F5, simulates the sweep)"
  exec "$workbench" --demo "$project"
fi

echo "orrery: no display: running the demo headless"
"$cli" validate workbench-demo
"$cli" expand workbench-demo --json > out/demo/experiments.json
"$cli" run workbench-demo --out "$project" --threads "$(nproc)" --json > out/demo/summary.json
"$cli" export timeline "$project" --experiment e0000 -o out/demo/e0000.trace.json --force
# The comparison report: which congestion control trains this job fastest, and why (printed, and as pages).
"$cli" report "$project" -o out/demo/report.html --force
"$cli" report "$project" -o out/demo/report.pdf --force > /dev/null
shot=""
if command -v xvfb-run >/dev/null 2>&1 && [ -x "$workbench" ]; then
  xvfb-run -a -s "-screen 0 1600x1000x24" "$workbench" --demo "$project" --tab results \
    --screenshot out/demo/workbench.png --after 4 >/dev/null 2>&1 && shot=", workbench.png (the workbench on it)"
fi
echo
echo "orrery: demo results in $root/out/demo: demo.orrery (the project: scenario, every run, flow, queue sample and"
echo "        timeline; open it with build/release/app/orrery out/demo/demo.orrery), summary.json (per congestion"
echo "        control), report.html and report.pdf (the comparison: which CC is best and why), experiments.json,"
echo "        e0000.trace.json (Perfetto)$shot"
