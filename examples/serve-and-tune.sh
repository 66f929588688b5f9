#!/usr/bin/env bash
# The service on its embedded defaults, end to end: starts `tilesmith serve` (SQLite in
# ./tilesmith-data/, the host target, and the GPU's architecture when nvidia-smi shows one),
# tunes a fusion through POST /v1/tune, asks POST /v1/query for the answer and prints it and
# the URL. Then it stops the server with SIGTERM; with --serve it keeps the server in the
# foreground, printing the report's URL, until Ctrl-C (or SIGTERM) stops it cleanly.
#
#   examples/serve-and-tune.sh [TILESMITH_BINARY] [FUSION] [--serve]
#
# TILESMITH_PORT picks the port (default 8470; 0 for any free one).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
serve=""
positional=()
for arg in "$@"; do
  case "$arg" in
    --serve) serve=1 ;;
    --keep) echo "serve-and-tune.sh: --keep is now --serve (the server stays in the foreground)" >&2
            serve=1 ;;
    *) positional+=("$arg") ;;
  esac
done
tilesmith="${positional[0]:-${TILESMITH_BUILD_DIR:-$root/build}/bin/tilesmith}"
fusion="${positional[1]:-$root/configs/examples/gelu.hlo}"
targets=host
if command -v nvidia-smi >/dev/null 2>&1; then
  capability="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '. ')"
  [ -n "$capability" ] && targets="host,cuda:sm_$capability"
fi
log="$(mktemp)"
"$tilesmith" serve --port "${TILESMITH_PORT:-8470}" --targets "$targets" >"$log" 2>&2 &
server=$!
stop() {
  kill -TERM "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  rm -f "$log"
}
trap stop EXIT
for _ in $(seq 100); do
  url="$(grep -o 'http://[0-9.:]*' "$log" || true)"
  [ -n "$url" ] && break
  kill -0 "$server" 2>/dev/null || { echo "tilesmith serve did not start" >&2; exit 1; }
  sleep 0.1
done
echo "== service at $url (targets $targets)" >&2
client=("$root/examples/client.py" --url "$url")
IFS=, read -ra served <<<"$targets"
for target in "${served[@]}"; do
  echo "== tune $fusion on $target through POST /v1/tune (12 candidates, best-first)" >&2
  "${client[@]}" tune "$fusion" --target "$target" --budget 12 --strategy best-first --wait 600 |
    python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["state"], j["progress"])'
  echo "== the answer: POST /v1/query on $target" >&2
  "${client[@]}" query "$fusion" --target "$target"
done
echo "tilesmith service: $url"
[ -z "$serve" ] && exit 0

# Serving in the foreground: Ctrl-C (SIGINT) or SIGTERM stops the server, which lets the batch
# in flight commit and exits 0.
trap - EXIT
trap 'kill -TERM "$server" 2>/dev/null || true' INT TERM
echo "tilesmith report: $url/report"
echo "serving until Ctrl-C (API: $url/v1/…, docs/api.md)" >&2
status=0
while kill -0 "$server" 2>/dev/null; do
  wait "$server" && status=0 || status=$?
done
rm -f "$log"
exit "$status"
