#!/usr/bin/env bash
# Change points on real runs: TRIES series of 30 labelled "commits" (c00 ... c29), each one
# real run of single_row_lookup's rusqlite bench recorded in a store of its own. With
# STEP=1 the runs from c15 on change cache_size to 35 KiB (about +5% on this dataset, measured
# beside the default); with STEP=0 every run is the same. Prints, per try, where `history`
# found steps and how large, and the time history took.
#
#   STEP=1 TRIES=5 tests/soak/history-steps.sh     # a step at c15: found there?
#   STEP=0 TRIES=20 tests/soak/history-steps.sh    # flat: how many tries report a step?
#   KEEP=DIR keeps the stores (DIR/store-N.sqlite) for `history` to read again.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${BENCHSCOPE_BIN:-./target/release/benchscope}
step=${STEP:-1}
tries=${TRIES:-5}
work=${KEEP:-$(mktemp -d)}
mkdir -p "$work"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
export BENCHSCOPE_DATA_DIR=$work/data
for t in $(seq 1 "$tries"); do
  store=$work/store-$t.sqlite
  for i in $(seq -w 0 29); do
    knob=2000
    if [ "$step" = 1 ] && [ "$((10#$i))" -ge 15 ]; then knob=35; fi
    "$bin" run single_row_lookup --rows 1000 --lookups 1000 --bench rusqlite --time 0.5 \
      --warmup 0.1 --knob cache_size=$knob --label "c$i" --store "$store" \
      --cache-dir "$work/cache" --format json > /dev/null 2>> "$work/runs.log"
  done
  start=$(date +%s%N)
  code=0
  "$bin" history single_row_lookup --bench rusqlite --store "$store" --format json \
    > "$work/h.json" || code=$?
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  python3 - "$work/h.json" "$t" "$ms" "$code" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))[0]
pts = [p["median"] for p in s["points"]]
steps = ", ".join(f'{st["after"]}->{st["at"]} {st["change"]*100:+.1f}% p={st["p_value"]:.3f}'
                  for st in s["steps"]) or "none"
print(f'try {sys.argv[2]}: {len(pts)} points, medians {min(pts):.0f}-{max(pts):.0f} ns; '
      f'steps: {steps}; history {sys.argv[3]} ms, exit {sys.argv[4]}')
PY
done
