#!/usr/bin/env bash
# Benchmark (a measurement, not a CI test): how fast the explorer answers keys while a heavy run
# goes on. Opens the explorer in a real terminal (tmux, 200x60) with the given arguments, marks
# MARKS benches from the top of the catalog (space moves to the next; 0: the bench under the
# cursor), starts the run, waits until its runner is up (and WAIT more seconds), then reads the
# explorer's CPU time (user + system, /proc) over WINDOW seconds while KEYS keys are pressed
# (down and up in the catalog, one every 0.25 s). The explorer logs each key's time from its
# arrival to the end of its frame, and when that frame ended; the script notes when it pressed
# each key, so it also prints the time from the press (sent to tmux) to the frame,
# which counts the wait before the key reached the explorer's loop (a loop thread waiting for
# a core). It prints their medians and maxima, the explorer's CPU, and the run's status line.
#
#   tests/soak/explorer-keys.sh MARKS [WAIT] -- EXPLORER-ARGS...
#
# e.g. every key_value bench:       tests/soak/explorer-keys.sh 180 5 -- --target key_value --time 0.2
#      a dataset build:              tests/soak/explorer-keys.sh 0 1 -- --rows 3000000
#      1000 databases:               tests/soak/explorer-keys.sh 0 5 -- --target async_contention --databases 1000
#
# Needs tmux and a release build (cargo build --release); BIN= another binary. Uses its own
# cache (CACHE= to keep one), data folder and measurement lock.
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/soak/common.sh
marks=${1:?MARKS}
wait_s=${2:-5}
shift 2 || shift 1
[ "${1:-}" = "--" ] && shift
keys=${KEYS:-40}
bin=$(realpath "${BIN:-target/release/benchscope}")
work=$(mktemp -d)
cache=${CACHE:-$work/cache}
session="benchscope-keys-$$"
tmux() { command tmux -L "$session" "$@"; }
trap 'tmux kill-server 2>/dev/null || true; rm -rf "$work"' EXIT
export BENCHSCOPE_MEASURE_LOCK="$work/measure.lock"
export BENCHSCOPE_DATA_DIR="$work/data" BENCHSCOPE_KEY_LOG="$work/keys.log"
tmux new-session -d -s "$session" -x 200 -y 60 "$bin $* --cache-dir $cache; sleep 60"
pid=$(wait_for_process "$bin .*--cache-dir $cache")
sleep 2
for _ in $(seq 1 "$marks"); do tmux send-keys -t "$session" Space; done
sleep 0.5
tmux send-keys -t "$session" Enter
runner=$(wait_for_runner "$pid") || { tmux capture-pane -p -t "$session" | head -20; exit 1; }
sleep "$wait_s"
# Keys logged from here on only.
: > "$work/keys.log"
: > "$work/sent.log"
hz=$(getconf CLK_TCK)
# Time the explorer's loop thread spent runnable but waiting for a core (schedstat, ns).
waited() { awk '{print $2}' "/proc/$1/task/$1/schedstat"; }
e0=$(ticks "$pid"); w0=$(waited "$pid"); s0=$(date +%s.%N)
# Keys go through one tmux client in control mode started beforehand, and the time of each
# press is bash's own clock: no process is started per key, as none is when a person types.
exec {control}> >(command tmux -L "$session" -C attach -t "$session" > /dev/null)
sleep 0.5
for i in $(seq 1 "$keys"); do
  echo "${EPOCHREALTIME/./}" >> "$work/sent.log"
  if [ $((i % 2)) = 1 ]; then echo "send-keys -t $session Down" >&"$control"; else echo "send-keys -t $session Up" >&"$control"; fi
  sleep 0.25
done
sleep 0.5
exec {control}>&-
e1=$(ticks "$pid"); w1=$(waited "$pid"); s1=$(date +%s.%N)
alive=no
[ -e "/proc/$runner" ] && alive=yes
tmux capture-pane -p -t "$session" > "$work/screen.txt"
awk -v e="$((e1 - e0))" -v t="$(echo "$s1 - $s0" | bc)" -v hz="$hz" -v alive="$alive" \
  -v w="$((w1 - w0))" 'BEGIN {
  printf "explorer while the run goes on: %.2f%% of a core over %.1f s (runner still running at the end: %s)\n", e / hz / t * 100, t, alive
  printf "its loop thread waited for a core: %.1f ms in all over that time\n", w / 1e6
}'
# Each line of the log: key to frame, the part in update, the thread's CPU time meanwhile (us).
sort -n "$work/keys.log" | awk '{v[NR] = $1; c[NR] = $3} END {
  if (NR == 0) { print "no key logged"; exit 1 }
  printf "key to frame, %d keys: median %.1f ms, max %.1f ms (CPU of the slowest: %.2f ms)\n", NR, v[int((NR + 1) / 2)] / 1000, v[NR] / 1000, c[NR] / 1000
}'
# From the press to the frame: the n-th key sent against the n-th frame logged.
paste -d' ' "$work/sent.log" <(awk '{print $4}' "$work/keys.log") | awk '$2 != "" {print $2 - $1}' \
  | sort -n | awk -v sent="$keys" '{v[NR] = $1} END {
  if (NR == 0) { print "no key logged"; exit 1 }
  printf "press to frame, %d of %d keys: median %.1f ms, max %.1f ms\n", NR, sent, v[int((NR + 1) / 2)] / 1000, v[NR] / 1000
}'
# What the screen said at the end (the run's progress line and status).
grep -E "running|building|dataset|bench [0-9]+/|[0-9]+/[0-9]+ benches" "$work/screen.txt" | head -3 | cut -c1-200 | sed 's/^/  /' || true
if [ -n "${SCREEN:-}" ]; then cp "$work/screen.txt" "$SCREEN"; fi
if [ -n "${KEYLOG:-}" ]; then cp "$work/keys.log" "$KEYLOG"; cp "$work/sent.log" "$KEYLOG.sent"; fi
