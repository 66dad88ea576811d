#!/usr/bin/env bash
# Soak (a measurement, not a CI test): the explorer streams one async_contention scenario for
# SECONDS (default 3600) in a real terminal (tmux, 120x40), and the explorer's resident memory
# is sampled every 10 s. Prints the RSS after the first minute, at the end, and the growth.
#
#   tests/soak/explorer-rss.sh [SECONDS] [CSV]
#
# Needs tmux and a release build (cargo build --release). Uses its own measurement lock and
# cache, so other benchscope runs on the machine are not held up by it.
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/soak/common.sh
seconds=${1:-3600}
csv=${2:-soak-rss.csv}
bin=${BIN:-target/release/benchscope}
work=$(mktemp -d)
session="benchscope-soak-$$"
# A tmux server of its own, so that nothing it sets leaks into other sessions.
tmux() { command tmux -L "$session" "$@"; }
trap 'tmux kill-server 2>/dev/null || true; rm -rf "$work"' EXIT
export BENCHSCOPE_MEASURE_LOCK="$work/measure.lock"
tmux new-session -d -s "$session" -x 120 -y 40 \
  "BENCH_DURATION=$seconds $bin --cache-dir $work/cache --snapshot-dir $work/snaps; sleep 30"
sleep 2
# async_contention is the fourth target; its second bench (spawn_blocking) keeps reads, writes
# and the canary streaming every second; enter runs it.
for k in Right Right Right; do tmux send-keys -t "$session" "$k"; sleep 0.3; done
tmux capture-pane -p -t "$session" | grep -q async_contention || { echo "not on async_contention"; tmux capture-pane -p -t "$session"; exit 1; }
tmux send-keys -t "$session" Down; sleep 0.3
tmux send-keys -t "$session" Enter
pid=$(wait_for_process "$bin --cache-dir $work/cache")
echo "t_s,rss_kib" > "$csv"
start=$(date +%s)
while kill -0 "$pid" 2>/dev/null; do
  now=$(( $(date +%s) - start ))
  rss=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo "")
  [ -n "$rss" ] && echo "$now,$rss" >> "$csv"
  [ "$now" -ge "$((seconds + 30))" ] && break
  sleep 10
done
tmux capture-pane -p -t "$session" | head -12 | sed 's/^/  /'
awk -F, 'NR > 1 && $1 >= 60 && !first {first = $2} NR > 1 {last = $2; t = $1}
  END {printf "RSS after the first minute %d KiB, at %d s %d KiB: %+.1f%%\n", first, t, last, (last - first) * 100 / first}' "$csv"
