#!/usr/bin/env bash
# Build-time benchmark of launch-build (issue 7): see bench/bench.py for what it measures and
# bench/RESULTS.md for the recorded numbers. Needs the pinned toolchain (`cargo launch setup`),
# python3, and GNU time at /usr/bin/time. Example:
#   bash bench/run.sh --runs 5 --json bench/results.json
set -euo pipefail
exec python3 "$(dirname "$0")/bench.py" "$@"
