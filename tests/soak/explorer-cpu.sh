#!/usr/bin/env bash
# Benchmark (a measurement, not a CI test): the explorer's own CPU while a run measures, with
# many finished columns on screen. Makes a report of RUNS runs of 30 single_row_lookup benches,
# opens it in the explorer in a real terminal (tmux, 340x80: every column and row drawn), starts
# a run of rusqlite for SECONDS in one runner process (the one followed), and reads the CPU time (user + system) of the explorer process
# and of its runner from /proc over the middle of that run. Prints both as % of one core, then
# the time from a key's arrival to the end of its frame for 40 keys pressed during the run.
#
#   tests/soak/explorer-cpu.sh [SECONDS] [RUNS]
#
# Needs tmux and a release build (cargo build --release). Uses its own cache and measurement
# lock. REPORT=FILE reuses a report made before (the slow part).
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/soak/common.sh
seconds=${1:-20}
runs=${2:-10}
# Operations per sample of the run measured: 1000 lookups of rusqlite make a sample every few
# milliseconds (the most the explorer is sent), 20000 one every 50-60 ms.
lookups=${LOOKUPS:-1000}
bin=$(realpath "${BIN:-target/release/benchscope}")
work=$(mktemp -d)
session="benchscope-cpu-$$"
tmux() { command tmux -L "$session" "$@"; }
trap 'tmux kill-server 2>/dev/null || true; rm -rf "$work"' EXIT
export BENCHSCOPE_MEASURE_LOCK="$work/measure.lock"
# A data folder of its own: no earlier session is offered for reopening at start.
export BENCHSCOPE_DATA_DIR="$work/data" BENCHSCOPE_KEY_LOG="$work/keys.log"
# No harness crate is built in the background while measuring (none of its benches runs).
export BENCHSCOPE_SQLX_HARNESS="$work/no-harness" BENCHSCOPE_ASYNC_SQLITE_HARNESS="$work/no-harness" \
  BENCHSCOPE_SQL_MIDDLEWARE_TURSO_HARNESS="$work/no-harness"
benches=(rusqlite sqlite3_c middleware/inline middleware/spawn_blocking middleware/interact
  middleware/worker middleware/spin middleware/block_in_place turso_raw middleware/turso
  tokio-rusqlite r2d2_sqlite/spawn_blocking r2d2_sqlite/block_in_place diesel sql-middleware
  pool_acquire pool_acquire/workers prepare interact/inline interact/spawn_blocking
  interact/interact interact/worker interact/spin interact/block_in_place marshalling decode
  param_convert turso/prepare turso/decode tokio-rusqlite/dispatch)
report=${REPORT:-}
if [ -z "$report" ]; then
  report="$work/columns.json"
  args=()
  for b in "${benches[@]}"; do args+=(--bench "$b"); done
  echo "making $runs runs of ${#benches[@]} benches..." >&2
  "$bin" run single_row_lookup "${args[@]}" --repeat "$runs" --rows 1000 --lookups 100 \
    --time 0.05 --warmup 0 --samples 10 --min-samples 5 --cache-dir "$work/cache" \
    --format json -o "$report" > /dev/null 2>&1
fi
tmux new-session -d -s "$session" -x 340 -y 80 \
  "$bin open $report --cache-dir $work/cache --rows 1000 --lookups $lookups --time $seconds --warmup 0 --samples 100000 --min-samples 1 --processes 1; sleep 30"
pid=$(wait_for_process "$bin open $report --cache-dir $work/cache")
sleep 3
hz=$(getconf CLK_TCK)
# Idle, the report open: the reference.
i0=$(ticks "$pid"); t0=$(date +%s.%N); sleep 5; i1=$(ticks "$pid"); t1=$(date +%s.%N)
# Focus the comparison so its cells and detail are drawn, then back, and run rusqlite.
tmux send-keys -t "$session" Enter
runner=$(wait_for_runner "$pid") || { tmux capture-pane -p -t "$session" | head -20; exit 1; }
sleep 3
window=$((seconds - 10))
[ "$window" -ge 5 ] || { echo "SECONDS must be at least 15"; exit 2; }
e0=$(ticks "$pid"); r0=$(ticks "$runner"); s0=$(date +%s.%N)
sleep "$window"
[ -e "/proc/$runner" ] || { echo "the runner ended early:"; tmux capture-pane -p -t "$session" | head -40; exit 1; }
e1=$(ticks "$pid"); r1=$(ticks "$runner"); s1=$(date +%s.%N)
# Key to frame while the run goes on: 40 moves in the catalog, each drawn at once; the
# explorer logs each key's time from its arrival to the end of its frame.
for _ in $(seq 1 20); do
  tmux send-keys -t "$session" Down; sleep 0.1
  tmux send-keys -t "$session" Up; sleep 0.1
done
sleep 0.5
tmux capture-pane -p -t "$session" > "$work/screen.txt"
columns=$(grep -c . "$work/screen.txt" || true)
awk -v i="$((i1 - i0))" -v ti="$(echo "$t1 - $t0" | bc)" -v e="$((e1 - e0))" \
  -v r="$((r1 - r0))" -v t="$(echo "$s1 - $s0" | bc)" -v hz="$hz" -v runs="$runs" \
  -v n="${#benches[@]}" 'BEGIN {
  printf "explorer idle, %d columns of %d benches open: %.2f%% of a core (%.1f s)\n", runs, n, i / hz / ti * 100, ti
  printf "explorer while a run measures:          %.2f%% of a core (%.1f s)\n", e / hz / t * 100, t
  printf "runner over the same time:               %.1f%% of a core\n", r / hz / t * 100
}'
sort -n "$work/keys.log" | awk '{v[NR] = $1} END {
  printf "key to frame while the run measures, %d keys: median %.1f ms, max %.1f ms\n", NR, v[int((NR + 1) / 2)] / 1000, v[NR] / 1000
}'
# What was on screen (the comparison's header): every column drawn, or the figures above
# are of an explorer that showed nothing.
grep -m1 "bench (\* base)" "$work/screen.txt" | sed 's/^/  /' | cut -c1-340 | grep . \
  || { echo "no comparison on screen: the figures above measured nothing"; exit 1; }
[ -s "$work/keys.log" ] || { echo "no key was timed"; exit 1; }
