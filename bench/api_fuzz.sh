#!/usr/bin/env bash
# The API fuzzer at length: 100,000 requests (tests/service/api_fuzz.py; ctest runs 2,000)
# against a real `tilesmith serve`, ending with its counts: requests by status class,
# crashes, 5xx, the slowest /healthz. Exits 1 when a property failed (reproducers in
# ./api_fuzz_repro unless --repro-dir says otherwise). Extra options go to api_fuzz.py:
#   bench/api_fuzz.sh [--requests N] [--seed S] [--json OUT] [--keep-going] [--no-zero-dims]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${TILESMITH_BUILD_DIR:-$root/build}"
exec python3 "$root/tests/service/api_fuzz.py" --server "$build/bin/tilesmith" \
  --requests 100000 --seed "${TILESMITH_FUZZ_SEED:-1}" --time-limit 3600 "$@"
