#!/usr/bin/env bash
# How long `history` takes over a store of 10,000 runs. One real run (rusqlite and
# middleware/spin, labelled "seed") is recorded, then copied 9,999 times inside the store
# (labels c00001 ... c09999, each bench's median jittered by up to 2%): two series of 10,000
# points, each its own commit, the worst case for the change-point search. Then `history`
# and `history --format json` run five times each and their wall times are printed.
#
#   tests/soak/history-10k.sh                                # an embedded SQLite store
#   STORE=postgres://user:pw@127.0.0.1:5432/db tests/soak/history-10k.sh   # an empty database
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${BENCHSCOPE_BIN:-./target/release/benchscope}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export BENCHSCOPE_DATA_DIR=$work/data
store=${STORE:-$work/store.sqlite}
"$bin" run single_row_lookup --rows 1000 --lookups 1000 --bench rusqlite --bench middleware/spin \
  --time 0.2 --warmup 0.05 --label seed --store "$store" --cache-dir "$work/cache" \
  --format json > /dev/null
cols="recorded_at, machine_id, machine_name, cpu, cores, kernel, steal, commit_sha, dirty,
  target, knobs, build_profile, profiled, record"
case $store in
  postgres*)
    psql -q "$store" <<SQL
INSERT INTO runs (run_key, label, source, $cols)
  SELECT 'copy-' || i, 'c' || lpad(i::text, 5, '0'), 'copied from run ' || id, $cols
  FROM runs, generate_series(1, 9999) AS i WHERE label = 'seed' ORDER BY i;
INSERT INTO bench_results
  SELECT r.id, b.bench, b.status, b.median_ns * (1 + random() / 50), b.ci_low_ns,
         b.ci_high_ns, b.samples
  FROM runs r, runs s JOIN bench_results b ON b.run_id = s.id
  WHERE s.label = 'seed' AND r.run_key LIKE 'copy-%';
SQL
    ;;
  *)
    python3 - "$store" "$cols" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
cols = sys.argv[2]
db.executescript(f"""
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 9999)
INSERT INTO runs (run_key, label, source, {cols})
  SELECT 'copy-' || i, printf('c%05d', i), 'copied from run ' || id, {cols}
  FROM runs, n WHERE label = 'seed' ORDER BY i;
INSERT INTO bench_results
  SELECT r.id, b.bench, b.status, b.median_ns * (1 + (abs(random()) % 1000) / 50000.0),
         b.ci_low_ns, b.ci_high_ns, b.samples
  FROM runs r, runs s JOIN bench_results b ON b.run_id = s.id
  WHERE s.label = 'seed' AND r.run_key LIKE 'copy-%';
""")
db.commit()
PY
    ;;
esac
"$bin" store info --store "$store"
for format in table json; do
  for i in 1 2 3 4 5; do
    start=$(date +%s%N)
    # 0, or 3 when a newest step is a regression; anything else is a failure of history.
    status=0
    "$bin" history single_row_lookup --store "$store" --format $format > "$work/out" || status=$?
    [ "$status" -eq 0 ] || [ "$status" -eq 3 ] || { echo "history exited $status"; exit 1; }
    [ -s "$work/out" ] || { echo "history printed nothing"; exit 1; }
    echo "history --format $format: $(( ($(date +%s%N) - start) / 1000000 )) ms"
  done
done
grep -c "" "$work/out" | sed 's/^/lines of the last output: /'
