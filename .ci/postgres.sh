#!/usr/bin/env bash
# Starts a throwaway PostgreSQL cluster on 127.0.0.1 with a password, for the bulk_insert
# PostgreSQL bench and its tests. Installs the server from Debian's packages if missing.
# Prints `export BENCHSCOPE_POSTGRES_URL=...` and `export BENCHSCOPE_PG_DATA=...`; source it.
# Stop (and remove its files) with: .ci/postgres.sh stop "$BENCHSCOPE_PG_DATA"
set -euo pipefail

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
# The newest installed server (the client package alone also creates .../bin, without initdb).
pg_bin() {
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -rV); do
    if [ -x "$d/initdb" ] && [ -x "$d/postgres" ]; then echo "$d"; return; fi
  done
}

if [ "${1:-}" = stop ]; then
  data=$2
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$(pg_bin)/pg_ctl" -D "$data" -m fast stop >&2 || true
  else "$(pg_bin)/pg_ctl" -D "$data" -m fast stop >&2 || true; fi
  # The cluster is throwaway: its files go with it (a folder under /tmp per run otherwise).
  case "$data" in /tmp/benchscope-pg.*) rm -rf "$data" ;; esac
  exit 0
fi

if [ -z "$(pg_bin)" ]; then
  as_root apt-get update -qq >&2
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
fi
bin=$(pg_bin)
port=${BENCHSCOPE_PG_PORT:-54329}
# A port another server already listens on (a cluster left running, say): take the next free one.
port_taken() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2> /dev/null; }
while port_taken "$port"; do port=$((port + 1)); done
password=bench-$RANDOM$RANDOM
data=$(mktemp -d /tmp/benchscope-pg.XXXXXX)
pwfile=$data.pw
echo "$password" > "$pwfile"
# The server refuses to run as root: as root, run it as the postgres user.
run() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
if [ "$(id -u)" = 0 ]; then chown postgres "$data" "$pwfile"; fi
run "$bin/initdb" -D "$data" -U postgres --auth-local=trust --auth-host=scram-sha-256 --pwfile="$pwfile" >&2
run "$bin/pg_ctl" -D "$data" -w -l "$data/server.log" \
  -o "-p $port -k $data -c listen_addresses=127.0.0.1 -c fsync=on" start >&2
rm -f "$pwfile"
echo "export BENCHSCOPE_POSTGRES_URL=postgres://postgres:$password@127.0.0.1:$port/postgres"
echo "export BENCHSCOPE_PG_DATA=$data"
