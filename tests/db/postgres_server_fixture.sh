#!/usr/bin/env bash
# One private PostgreSQL server for a whole ctest run (the `postgres` fixture of
# tests/CMakeLists.txt), so that tests run as separate processes share it instead of each
# starting its own (tests/db/postgres_test_server.h reads its URL from STATE/url).
#
#   postgres_server_fixture.sh start STATE   initdb + start on a free 127.0.0.1 port
#   postgres_server_fixture.sh stop STATE    stop exactly that server, remove its data
#
# Without the server binaries it says so and leaves no URL: each test then skips.
set -euo pipefail
action="$1"
state="$(realpath -m "$2")"
cd /  # the postgres user may not enter the caller's folder
bin="${TILESMITH_POSTGRES_BIN:-/usr/lib/postgresql/15/bin}"
as_postgres=()
if [ "$(id -u)" -eq 0 ]; then as_postgres=(runuser -u postgres --); fi

stop() {
  if [ -f "$state/data/postmaster.pid" ]; then
    "${as_postgres[@]}" "$bin/pg_ctl" -D "$state/data" -m fast -w stop > /dev/null || true
  fi
  rm -rf "$state"
}

case "$action" in
  start)
    stop
    if [ ! -x "$bin/initdb" ] || [ ! -x "$bin/pg_ctl" ]; then
      echo "no PostgreSQL server binaries in $bin: the PostgreSQL tests skip" >&2
      exit 0
    fi
    mkdir -p "$state"
    if [ "${#as_postgres[@]}" -gt 0 ]; then chown postgres "$state"; fi
    "${as_postgres[@]}" "$bin/initdb" -D "$state/data" -A trust -U tilesmith -E UTF8 --no-sync \
      > "$state/initdb.log" 2>&1
    for attempt in 1 2 3; do
      port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
      if "${as_postgres[@]}" "$bin/pg_ctl" -D "$state/data" -l "$state/server.log" -w \
          -o "-p $port -k $state -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
          start > /dev/null; then
        echo "postgresql://tilesmith@127.0.0.1:$port/postgres" > "$state/url"
        echo "PostgreSQL test server on 127.0.0.1:$port"
        exit 0
      fi
    done
    echo "the PostgreSQL test server would not start; see $state/server.log" >&2
    exit 1
    ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop STATE" >&2; exit 2 ;;
esac
