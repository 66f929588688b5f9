#!/usr/bin/env bash
# A session with `tilesmith serve` through curl: health, devices, a query that misses,
# a tune that waits for its result, the query again (now answered from the database), a
# batch, the kernel's measurements, a job in the background and its cancellation, metrics.
#
#   examples/curl-session.sh [URL]        (default http://127.0.0.1:8470)
#
# Start a server first, e.g. `build/bin/tilesmith serve`. With --token-file, export
# TILESMITH_TOKEN=<token> and the requests carry it. Needs curl and python3 (to build JSON).
set -euo pipefail
url="${1:-http://127.0.0.1:8470}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
fusion="$root/configs/examples/gelu.hlo"
auth=()
[ -n "${TILESMITH_TOKEN:-}" ] && auth=(-H "Authorization: Bearer $TILESMITH_TOKEN")
call() {  # METHOD PATH [JSON]
  echo "\$ curl -X $1 $url$2${3:+ -d '…'}" >&2
  if [ $# -ge 3 ]; then
    curl -sS "${auth[@]}" -X "$1" "$url$2" -H 'Content-Type: application/json' --data-binary "$3"
  else
    curl -sS "${auth[@]}" -X "$1" "$url$2"
  fi
  echo
}
request() {  # python dict literal with FUSION standing for the file's text
  python3 -c "import json,sys; FUSION=open(sys.argv[1]).read(); print(json.dumps($1))" "$fusion"
}

call GET /healthz
call GET /v1/devices
call POST /v1/query "$(request '{"fusion": FUSION, "target": "host"}')"
call POST /v1/tune "$(request '{"fusion": FUSION, "target": "host", "budget": 4, "wait": True, "timeout_s": 300}')"
call POST /v1/query "$(request '{"fusion": FUSION, "target": "host"}')"
call POST /v1/query:batch "$(request '{"target": "host", "queries": [{"fusion": FUSION}, {"fusion": "HloModule m\nENTRY e {\n  ROOT p = f32[8] parameter(0)\n}"}]}')"
fingerprint=$(call POST /v1/query "$(request '{"fusion": FUSION}')" 2>/dev/null |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["fingerprint"])')
call GET "/v1/kernels?target=host"
call GET "/v1/kernels/$fingerprint" |
  python3 -c 'import json,sys; k=json.load(sys.stdin); print(k["name"], len(k["measurements"]), "measurements, best", k["best"][0]["config"])'
job=$(call POST /v1/tune "$(request '{"fusion": FUSION, "target": "host", "budget": 40, "strategy": "random"}')" |
  tee /dev/stderr | python3 -c 'import json,sys; print(json.load(sys.stdin)["job"]["id"])')
sleep 1
call GET "/v1/jobs/$job"
call DELETE "/v1/jobs/$job"
call GET /metrics | grep -E '^tilesmith_(jobs|candidates_total|database_bytes)'
