#!/usr/bin/env bash
# The second README command: install what is missing, build everything, run every test (ctest's summary last).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
source installers/common.sh
orrery_build
ctest --preset release
