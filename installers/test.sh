#!/usr/bin/env bash
# The second README command: install what is missing, build everything, run every test (ctest's summary last).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
source installers/common.sh
orrery_build -DORRERY_WERROR=ON
ctest --preset release
# The device backend's code built for Thrust's OpenMP device system (CPU cores) and checked against the CPU backend.
cmake --preset device-omp -DORRERY_WERROR=ON
cmake --build --preset device-omp --target test_device orrery-cli
ctest --preset device-omp -R '^test_device$'
