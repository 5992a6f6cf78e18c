# Sourced by ring_vs_reference.sh and instructions_per_case.sh: writes, into the current directory, the
# engine-core issue's case CASE (ring | incast | all-to-all; DCQCN, the reference's 100 Gb/s settings) as an
# Orrery scenario (case.json), its reference config (config.txt, via `orrery-cli convert`), and the two run
# configs config_ref.txt (outputs beside it) and config_ours.txt (outputs under ours/).
#   k = 8 ring:        128 hosts, each sends 10 MB to the next
#   k = 8 incast:      127 × 1 MB to host 0
#   k = 4 all-to-all:  240 × 1 MB
# Usage: write_reference_case CLI CASE
write_reference_case() {
  local cli=$1 case=$2
  python3 - "$case" <<'PY'
import json, sys
case = sys.argv[1]
if case == "ring":
    name, k, flows = "k = 8 ring", 8, [{"src": i, "dst": (i + 1) % 128, "size": "10MB", "start": "2s"} for i in range(128)]
elif case == "incast":
    name, k, flows = "k = 8 incast", 8, [{"src": i, "dst": 0, "size": "1MB", "start": "2s"} for i in range(1, 128)]
else:
    name, k, flows = "k = 4 all-to-all", 4, [{"src": i, "dst": j, "size": "1MB", "start": "2s"} for i in range(16) for j in range(16) if i != j]
json.dump({"format": "orrery-scenario", "version": 1, "name": name, "seed": 1, "topology": {"preset": f"fat-tree-k{k}"},
           "network": {"preset": "reference-100g"}, "cc": {"preset": "dcqcn-100g"}, "workload": {"kind": "flows", "flows": flows}},
          open("case.json", "w"))
PY
  "$cli" convert case.json -o config.txt --to hpcc-config > /dev/null 2>&1
  printf "0\n" > trace.txt
  mkdir -p ours
  local who dir
  for who in ref ours; do
    dir=$([ $who = ours ] && echo ours/ || echo "")
    cp config.txt config_$who.txt
    printf "TRACE_FILE trace.txt\nTRACE_OUTPUT_FILE ${dir}mix.tr\nFCT_OUTPUT_FILE ${dir}fct.txt\nPFC_OUTPUT_FILE ${dir}pfc.txt\nSIMULATOR_STOP_TIME 4.00\nQLEN_MON_FILE ${dir}qlen.txt\nQLEN_MON_START 2000000000\nQLEN_MON_END 2000000000\n" >> config_$who.txt
  done
}
