#!/usr/bin/env bash
# How the screens in assets/screens/ are captured: opens a saved report in the explorer in a
# real terminal (tmux) of the given size, presses the given keys, and writes what the pane
# shows to OUT.
#
#   assets/capture.sh REPORT COLSxROWS OUT KEY...
#
# KEY is a tmux key name (Tab, BTab, Enter, Escape, Right) or text sent as typed (`-l /spin`
# sends the characters). Needs tmux and a release build (cargo build --release); BIN= another
# binary. Its own data folder, so no earlier session is offered.
set -euo pipefail
cd "$(dirname "$0")/.."
report=$(realpath "${1:?REPORT}")
size=${2:?COLSxROWS}
out=${3:?OUT}
shift 3
bin=$(realpath "${BIN:-target/release/benchscope}")
cols=${size%x*}
rows=${size#*x}
work=$(mktemp -d)
session="benchscope-capture-$$"
tmux() { command tmux -L "$session" "$@"; }
trap 'tmux kill-server 2>/dev/null || true; rm -rf "$work"' EXIT
export BENCHSCOPE_DATA_DIR="$work/data"
# Nothing is run: no harness crate is built.
export BENCHSCOPE_SQLX_HARNESS="$work/none" BENCHSCOPE_ASYNC_SQLITE_HARNESS="$work/none" \
  BENCHSCOPE_SQL_MIDDLEWARE_TURSO_HARNESS="$work/none"
tmux new-session -d -s "$session" -x "$cols" -y "$rows" "$bin open $report; sleep 30"
sleep 2
while [ $# -gt 0 ]; do
  if [ "$1" = "-l" ]; then
    tmux send-keys -t "$session" -l "$2"
    shift 2
  else
    tmux send-keys -t "$session" "$1"
    shift
  fi
  sleep 0.3
done
sleep 1
tmux capture-pane -p -t "$session" > "$out"
echo "wrote $out ($size)"
