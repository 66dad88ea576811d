#!/usr/bin/env bash
# Hostile inputs against a benchscope binary: one case per line, each in a fresh temp folder.
#
#   tests/hostile/cases.sh [BINARY] [CASE-PATTERN]
#
# BINARY defaults to ./target/release/benchscope; CASE-PATTERN (a grep -E pattern on the case
# ids, default: all) runs a subset. For each case one line:
#
#   CASE <id> | <exit status or TIMEOUT(...)> | <first 200 chars of stdout+stderr, controls
#   as \xNN> | <decoy: unchanged/CHANGED/n.a.>
#
# followed by an indented `detail` line (elapsed time and what the case looks at: the folder's
# changes, a password found in the output, raw control bytes...). The decoy is the case's user
# folder (`user/`, also the working directory of every command): notes and a photo, plus the
# case's own inputs; its listing and every file's SHA-256 are taken before and after.
#
# Nothing touches ~: HOME, XDG_*, TMPDIR, BENCHSCOPE_DATA_DIR, BENCHSCOPE_STORE,
# BENCHSCOPE_MEASURE_LOCK and the dataset cache all point into the case's folder, and the
# harness crates (sqlx, async-sqlite, sql-middleware/turso, the turso runner) point at a path
# that does not exist, so that no bench ever starts cargo. Needs python3 (its sqlite3 module)
# and coreutils' timeout. KEEP=1 keeps the case folders (printed at the end).

set -u

BIN=${1:-./target/release/benchscope}
ONLY=${2:-.}
if [ ! -x "$BIN" ]; then
  echo "no benchscope binary at $BIN" >&2
  exit 2
fi
BIN=$(realpath "$BIN")
ROOT=$(realpath "$(mktemp -d "${TMPDIR:-/tmp}/benchscope-hostile.XXXXXX")")
PY=$ROOT/h.py
NO_HARNESS=/nonexistent/benchscope-hostile/no-harness
export LC_ALL=C.UTF-8

cleanup() {
  if [ "${KEEP:-0}" = 1 ]; then
    echo "# case folders kept in $ROOT" >&2
  else
    chmod -R u+rwX "$ROOT" 2>/dev/null
    rm -rf "$ROOT"
  fi
}
trap cleanup EXIT

# ---------------------------------------------------------------------------------------------
# Python helpers (one file, a subcommand each).
cat >"$PY" <<'PYEOF'
import hashlib, json, os, shutil, sqlite3, stat, struct, sys, tempfile

JOURNAL_MAGIC = bytes.fromhex("d9d505f920a163d7")


def snap(d):
    out = {}
    for root, dirs, files in os.walk(d, followlinks=False):
        for n in sorted(dirs + files):
            p = os.path.join(root, n)
            rel = os.path.relpath(p, d)
            st = os.lstat(p)
            kind = stat.S_IFMT(st.st_mode)
            entry = [oct(st.st_mode), st.st_size if stat.S_ISREG(st.st_mode) else 0]
            if stat.S_ISLNK(st.st_mode):
                entry.append("-> " + os.readlink(p))
            elif stat.S_ISREG(st.st_mode):
                h = hashlib.sha256()
                with open(p, "rb") as f:
                    for b in iter(lambda: f.read(1 << 20), b""):
                        h.update(b)
                entry.append(h.hexdigest())
            out[rel] = entry
    json.dump(out, sys.stdout, sort_keys=True)


def diff(a, b):
    a, b = json.load(open(a)), json.load(open(b))
    # Symlink loops' own entries are listed once: os.walk does not follow them.
    ch = ["+" + k for k in sorted(b.keys() - a.keys())]
    ch += ["-" + k for k in sorted(a.keys() - b.keys())]
    ch += ["~" + k for k in sorted(a.keys() & b.keys()) if a[k] != b[k]]
    if not ch:
        print("unchanged")
    else:
        print("CHANGED\t" + " ".join(esc_text(c) for c in ch)[:600])


def esc_text(s):
    r = []
    for c in s:
        o = ord(c)
        if o < 0x20 or o == 0x7F or 0x80 <= o <= 0x9F:
            r.append("\\x%02x" % o)
        elif c == "\\":
            r.append("\\\\")
        else:
            r.append(c)
    return "".join(r)


def esc(path, n):
    t = open(path, "rb").read().decode("utf-8", "backslashreplace")
    print(esc_text(t[: int(n)]).replace("|", "\\x7c"))


def controls(path):
    b = open(path, "rb").read()
    names = {0x1B: "ESC", 0x07: "BEL", 0x0D: "CR", 0x08: "BS", 0x9B: "CSI(C1)"}
    found = {v: b.count(bytes([k])) for k, v in names.items() if b.count(bytes([k]))}
    other = sum(1 for x in b if (x < 0x20 and x not in (0x0A, 0x09) and x not in names))
    if other:
        found["other C0"] = other
    print("raw controls in output: " + (", ".join("%s x%d" % kv for kv in found.items()) or "none"))


def hot(db, decoy):
    """A rolled-back-able hot journal beside db whose super-journal record names decoy."""
    decoy = os.path.abspath(decoy)
    c = sqlite3.connect(db, isolation_level=None)
    c.execute("PRAGMA journal_mode=DELETE")
    c.executescript(
        "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);"
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<5000)"
        " INSERT INTO t SELECT i, printf('row %d', i) FROM n;"
    )
    c.close()
    c = sqlite3.connect(db, isolation_level=None)
    # synchronous=OFF: one journal header whose record count (0xffffffff) is read from the
    # file's size, as a no-sync writer leaves it; cache_size=1: the transaction spills pages to
    # the database file, so the journal is hot (a crash in the middle of a commit).
    c.execute("PRAGMA cache_size=1")
    c.execute("PRAGMA synchronous=OFF")
    c.execute("BEGIN")
    c.execute("DELETE FROM t")
    torn = open(db, "rb").read()
    journal = open(db + "-journal", "rb").read()
    c.execute("ROLLBACK")
    c.close()
    name = decoy.encode()
    # pager.c's super-journal record, at the end of the journal: PAGER_SJ_PGNO (4 bytes), the
    # name, its length (4 bytes BE), its checksum (the sum of its bytes, 4 bytes BE), the magic.
    rec = struct.pack(">I", 0x7FFFFFFF) + name + struct.pack(">I", len(name))
    rec += struct.pack(">I", sum(name) & 0xFFFFFFFF) + JOURNAL_MAGIC
    open(db, "wb").write(torn)
    open(db + "-journal", "wb").write(journal + rec)


def crit(d, group, func, n, value=None):
    """A Criterion result set: d/benchmark.json, sample.json, estimates.json."""
    n = int(n)
    os.makedirs(d, exist_ok=True)
    bid = {"group_id": group, "function_id": func, "value_str": value, "throughput": None,
           "full_id": "%s/%s" % (group, func), "directory_name": "x", "title": "x"}
    json.dump(bid, open(os.path.join(d, "benchmark.json"), "w"))
    iters = [float(2 + (i % 5)) for i in range(n)]
    times = [it * (1000.0 + (i * 7919) % 97) for i, it in enumerate(iters)]
    if not os.path.lexists(os.path.join(d, "sample.json")):
        json.dump({"sampling_mode": "Flat", "iters": iters, "times": times},
                  open(os.path.join(d, "sample.json"), "w"))
    est = lambda v: {"confidence_interval": {"confidence_level": 0.95, "lower_bound": v * 0.99,
                     "upper_bound": v * 1.01}, "point_estimate": v, "standard_error": 1.0}
    json.dump({"mean": est(1048.0), "median": est(1048.0), "median_abs_dev": est(20.0),
               "slope": None, "std_dev": est(25.0)},
              open(os.path.join(d, "estimates.json"), "w"))


def rename(src, dst, old, new):
    """Every string value equal to old (a bench's name, wherever it is) becomes new."""
    def walk(o):
        if isinstance(o, dict):
            return {k: walk(v) for k, v in o.items()}
        if isinstance(o, list):
            return [walk(v) for v in o]
        return new if o == old else o
    json.dump(walk(json.load(open(src))), open(dst, "w"), indent=1)


def appdb(db):
    """Another application's database, in rollback-journal mode."""
    c = sqlite3.connect(db)
    c.executescript("CREATE TABLE contacts(id INTEGER PRIMARY KEY, name TEXT, phone TEXT);"
                    "INSERT INTO contacts(name, phone) VALUES ('Ada', '555-0100'), ('Bob', '555-0101');")
    c.commit()
    c.close()


def tables(db):
    """Tables and journal mode of db, read from a copy (so that reading changes nothing)."""
    if not os.path.exists(db):
        print("no file")
        return
    head = open(db, "rb").read(100)
    mode = {1: "rollback", 2: "WAL"}.get(head[18] if len(head) > 18 else 0, "?")
    tmp = tempfile.mkdtemp()
    try:
        for s in ("", "-wal", "-journal"):
            if os.path.exists(db + s):
                shutil.copy(db + s, os.path.join(tmp, "c.db" + s))
        c = sqlite3.connect(os.path.join(tmp, "c.db"))
        names = [r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]
        c.close()
    except Exception as e:
        names = ["(unreadable: %s)" % e]
    finally:
        shutil.rmtree(tmp)
    print("%s, tables: %s" % (mode, " ".join(names) or "none"))


def waldb(db):
    """A WAL database whose last transactions are still in its -wal (the writer still open)."""
    c = sqlite3.connect(db, isolation_level=None)
    c.execute("PRAGMA journal_mode=WAL")
    c.execute("PRAGMA wal_autocheckpoint=0")
    c.executescript(
        "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);"
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<2000)"
        " INSERT INTO t SELECT i, printf('row %d', i) FROM n;"
    )
    sys.stdout.flush()
    os._exit(0)  # no checkpoint, no close: -wal and -shm stay beside it


def plaindb(db):
    c = sqlite3.connect(db, isolation_level=None)
    c.execute("PRAGMA journal_mode=DELETE")
    c.executescript(
        "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);"
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<2000)"
        " INSERT INTO t SELECT i, printf('row %d', i) FROM n;"
    )
    c.close()


def bigstmt(path, mib):
    """One SELECT of a string literal: a statement of more than mib MiB."""
    with open(path, "w") as f:
        f.write("SELECT length('")
        f.write("a" * (int(mib) * 1024 * 1024 + 4096))
        f.write("') AS n FROM t WHERE id = 1;\n")


def benches(db):
    t = tempfile.mkdtemp()
    p = os.path.join(t, "s.db")
    for s in ("", "-wal"):
        if os.path.exists(db + s):
            shutil.copy(db + s, p + s)
    print(sqlite3.connect(p).execute("SELECT group_concat(bench, ',') FROM bench_results").fetchone()[0])
    shutil.rmtree(t)


def cols(path, first):
    """The cells of the table rows whose first cell is `first` (columns split at 2+ spaces)."""
    import re
    lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
    head = next((l for l in lines if l.startswith("bench ")), "")
    names = re.split(r"\s{2,}", head.strip())
    rows = [re.split(r"\s{2,}", l.strip()) for l in lines if l.startswith(first + " ")]
    out = []
    for r in rows:
        d = dict(zip(names, r))
        out.append("[%s]" % ", ".join("%s=%s" % (k, d.get(k, "?")) for k in ("backend", "median/op", "mean ± sd", "min … max")))
    print("%d rows named %s: %s" % (len(rows), first, " ".join(out)))


def recordcount(db, needle):
    t = tempfile.mkdtemp()
    p = os.path.join(t, "s.db")
    for s in ("", "-wal"):
        if os.path.exists(db + s):
            shutil.copy(db + s, p + s)
    print(sum(r[0].count(needle) for r in sqlite3.connect(p).execute("SELECT record FROM runs")))
    shutil.rmtree(t)


def csvcells(path):
    import csv
    bad = []
    for row in csv.reader(open(path, newline="", encoding="utf-8", errors="replace")):
        for cell in row:
            if cell[:1] in ("=", "+", "@") or (cell[:1] == "-" and not cell[1:2].isdigit()):
                bad.append(cell)
    print("formula-like CSV cells: " + (esc_text(" ; ".join(bad))[:200] if bad else "none"))


cmd, args = sys.argv[1], sys.argv[2:]
globals()[cmd](*args)
PYEOF

# ---------------------------------------------------------------------------------------------
# Case scaffolding.

# Every case: a folder D with user/ (the decoy, and the working directory), out/ (what
# benchscope writes where it is told to) and home/.
new_case() {
  CASE_ID=${CASE_NAME:-$1}
  D=$(mktemp -d "$ROOT/$1.XXXXXX")
  U=$D/user
  O=$D/out
  mkdir -p "$U" "$O/tmp" "$D/home"
  printf 'precious notes: do not lose\n' >"$U/notes.txt"
  head -c 3000 /dev/urandom >"$U/photo.jpg"
  export HOME=$D/home XDG_CACHE_HOME=$D/home/.cache XDG_DATA_HOME=$D/home/.local/share
  export XDG_CONFIG_HOME=$D/home/.config XDG_STATE_HOME=$D/home/.local/state TMPDIR=$O/tmp
  export BENCHSCOPE_DATA_DIR=$O/data BENCHSCOPE_STORE=$O/store.sqlite
  export BENCHSCOPE_MEASURE_LOCK=$O/measure.lock
  export BENCHSCOPE_SQLX_HARNESS=$NO_HARNESS BENCHSCOPE_ASYNC_SQLITE_HARNESS=$NO_HARNESS
  export BENCHSCOPE_SQL_MIDDLEWARE_TURSO_HARNESS=$NO_HARNESS BENCHSCOPE_TURSO_RUNNER=$NO_HARNESS
  export CARGO=/bin/false NO_COLOR=1 TERM=dumb
  unset BENCHSCOPE_PROCESSES BENCHSCOPE_NO_STORE BENCHSCOPE_KEEP_CPUS_AWAKE BENCHSCOPE_SILENCE_S \
    BENCHSCOPE_RUNNER_NICE BENCHSCOPE_CPU_LATENCY_DEVICE BENCHSCOPE_CACHE_DIR BENCHSCOPE_POSTGRES_URL
  for v in $(env | grep -oE '^BENCH_[A-Z_]+'); do unset "$v"; done
  DETAIL=""
  cd "$U" || exit 1
}

# The tiny settings of a run (lookup targets) and of a script run.
tiny() { echo --time 0.05 --warmup 0 --samples 3 --min-samples 2 --processes 1 --cache-dir "$O/cache"; }
TINY_LOOKUP="--rows 200 --lookups 50"
# Every script bench of this binary's own runner (no harness crate, no PostgreSQL), by name.
SCRIPT_BENCHES="--bench rusqlite --bench middleware/inline --bench middleware/spawn_blocking
  --bench middleware/interact --bench middleware/worker --bench middleware/spin
  --bench middleware/block_in_place --bench middleware/wait_aside --bench tokio-rusqlite
  --bench r2d2_sqlite/spawn_blocking --bench r2d2_sqlite/block_in_place --bench sql-middleware"

decoy_before() { python3 "$PY" snap "$U" >"$D/before.snap"; }

# bs [--sig SIG] [--after S] [--kill-after S] [--vlimit KB] [--pty] [--] ARGS...: runs the
# binary with ARGS in user/, stdin from /dev/null (or on a pseudo-terminal of its own), under
# timeout (SIG after S seconds, KILL S more later when --kill-after is given); sets ST (the
# status as the summary shows it) and ELAPSED; what it printed is in $D/out.txt.
bs() {
  local sig=KILL after=20 kill_after="" vlimit="" pty=""
  while [ $# -gt 0 ]; do
    case $1 in
      --sig) sig=$2; shift 2 ;;
      --after) after=$2; shift 2 ;;
      --kill-after) kill_after=$2; shift 2 ;;
      --vlimit) vlimit=$2; shift 2 ;;
      --pty) pty=1; shift ;;
      --) shift; break ;;
      *) break ;;
    esac
  done
  local t0 t1 rc
  t0=$(date +%s.%N)
  {
    (
      [ -n "$vlimit" ] && ulimit -v "$vlimit"
      if [ -n "$pty" ]; then
        # On a terminal of its own (util-linux script), as a person starts it.
        exec timeout -v --preserve-status ${kill_after:+-k "$kill_after"} -s "$sig" "$after" \
          script -qefc "$(printf '%q ' "$BIN" "$@")" /dev/null </dev/null >"$D/raw.txt" 2>&1
      fi
      exec timeout -v --preserve-status ${kill_after:+-k "$kill_after"} -s "$sig" "$after" \
        "$BIN" "$@" </dev/null >"$D/raw.txt" 2>&1
    )
  } 2>/dev/null
  rc=$?
  t1=$(date +%s.%N)
  ELAPSED=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
  grep -a '^timeout: sending signal' "$D/raw.txt" >"$D/timeout.txt"
  grep -av '^timeout: sending signal' "$D/raw.txt" >"$D/out.txt"
  if [ -s "$D/timeout.txt" ]; then
    local sent
    sent=$(sed -E 's/^timeout: sending signal ([A-Z0-9]+).*/\1/' "$D/timeout.txt" | paste -sd, -)
    if grep -q 'signal KILL' "$D/timeout.txt"; then
      ST="TIMEOUT(sent $sent at ${after}s${kill_after:+ then +${kill_after}s}; killed)"
    else
      ST="TIMEOUT(sent $sent at ${after}s; then exited $rc)"
    fi
  else
    ST=$rc
  fi
}

# The pids of processes this case started that are still running: the binary (benchscope or a
# runner it started, which is the same executable) working in this case's user folder. Each
# is then killed by its pid.
leftovers() {
  local p pids=""
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/exe" 2>/dev/null)" = "$BIN" ] || continue
    [ "$(readlink "$p/cwd" 2>/dev/null)" = "$U" ] || continue
    pids="$pids ${p#/proc/}"
  done
  for p in $pids; do kill -KILL "$p" 2>/dev/null; done
  echo $pids
}

# Adds to the detail line.
note() { DETAIL="${DETAIL:+$DETAIL; }$*"; }

# Prints the case's summary line and its detail line. With an argument `n.a.`, no decoy check.
report() {
  local decoy diff="" left
  left=$(leftovers)
  [ -n "$left" ] && note "processes of this case still running after it, killed: $left"
  if [ "${1:-}" = n.a. ]; then
    decoy=n.a.
  else
    python3 "$PY" snap "$U" >"$D/after.snap"
    decoy=$(python3 "$PY" diff "$D/before.snap" "$D/after.snap")
    case $decoy in
      CHANGED*) diff=${decoy#*$'\t'}; decoy=CHANGED ;;
    esac
  fi
  printf 'CASE %s | %s | %s | decoy: %s\n' "$CASE_ID" "$ST" \
    "$(python3 "$PY" esc "$D/out.txt" 200)" "$decoy"
  printf '    detail %s: %ss%s%s\n' "$CASE_ID" "$ELAPSED" "${diff:+; user folder: $diff}" \
    "${DETAIL:+; $DETAIL}"
}

# Whether any of the strings (each a literal) occurs in what the case printed.
printed_any() {
  local s found=""
  for s in "$@"; do
    if grep -aqF -- "$s" "$D/out.txt"; then
      found="$found $(printf '%q' "$s")"
    fi
  done
  echo "${found:- none}"
}

run_case() {
  # Each case in a subshell: its exports and cd end with it.
  local id=$1
  echo "$id" | grep -qE -- "$ONLY" || return 0
  ( CASE_NAME=$id; "case_$id" )
}

# ---------------------------------------------------------------------------------------------
# Shared inputs, made once and copied into each case that needs them.
TPL=$ROOT/template
make_templates() {
  new_case template
  mkdir -p "$TPL"
  # A real report and baseline of two benches (rusqlite, sqlite3_c), renamed per case.
  "$BIN" run single_row_lookup --bench rusqlite --bench sqlite3_c $TINY_LOOKUP $(tiny) \
    --format json -o "$TPL/report.json" --save-baseline main --baseline-dir "$TPL/baselines" \
    >"$TPL/make.log" 2>&1 || { echo "cannot make the template report:" >&2; cat "$TPL/make.log" >&2; exit 2; }
  cp "$TPL/baselines/main.json" "$TPL/baseline.json"
}

hostile_report() { # FROM-NAME TO-NAME DEST: the template report with a bench renamed
  python3 "$PY" rename "$TPL/report.json" "$3" "$1" "$2"
}

# =============================================================================================
# A. SQLite touching a file outside the run's copy: a hot journal whose super-journal names a
#    user's file. SQLite, rolling the journal back, deletes the "super-journal" when no child
#    journal names it.

case_A1_script_db_hot_journal_super_journal() {
  new_case A1
  python3 "$PY" hot "$U/user.db" "$U/notes.txt"
  printf 'SELECT count(*) FROM t;\n' >"$U/s.sql"
  decoy_before
  bs -- run script --script s.sql --db user.db --bench rusqlite --transactions 5 $(tiny)
  note "notes.txt (named by user.db-journal's super-journal record) $( [ -e "$U/notes.txt" ] && echo still there || echo DELETED)"
  report
}

case_A2_store_info_hot_journal_super_journal() {
  new_case A2
  python3 "$PY" hot "$U/results.sqlite" "$U/notes.txt"
  decoy_before
  bs -- store info --store "$U/results.sqlite"
  note "notes.txt $( [ -e "$U/notes.txt" ] && echo still there || echo DELETED)"
  # (Not opened here with python's sqlite3: unjailed, it would roll the journal back and
  # delete notes.txt itself.)
  report
}

case_A3_history_hot_journal_super_journal() {
  new_case A3
  python3 "$PY" hot "$U/results.sqlite" "$U/notes.txt"
  decoy_before
  bs -- history --store "$U/results.sqlite"
  note "notes.txt $( [ -e "$U/notes.txt" ] && echo still there || echo DELETED)"
  report
}

# =============================================================================================
# B. Files that block, fan out or never end.

# Control: --db is opened O_NONBLOCK and fstat'ed (the guard the architecture names).
case_B0_script_db_fifo_control() {
  new_case B0
  mkfifo "$U/user.db"
  printf 'SELECT 1;\n' >"$U/s.sql"
  decoy_before
  bs --after 8 -- run script --script s.sql --db user.db --bench rusqlite --transactions 5 $(tiny)
  report
}

case_B1_show_report_json_fifo() {
  new_case B1
  mkfifo "$U/REPORT.json"
  decoy_before
  bs --after 8 -- show REPORT.json
  report
}

case_B2_show_session_journal_fifo() {
  new_case B2
  mkfifo "$U/session.jsonl"
  decoy_before
  bs --after 8 -- show session.jsonl
  report
}

case_B3_compare_fifo() {
  new_case B3
  mkfifo "$U/base.json"
  cp "$TPL/report.json" "$U/current.json"
  decoy_before
  bs --after 8 -- compare base.json current.json --cache-dir "$O/cache"
  report
}

case_B4_open_session_journal_fifo() {
  new_case B4
  mkfifo "$U/session.jsonl"
  decoy_before
  export TERM=xterm
  bs --after 8 -- open session.jsonl --cache-dir "$O/cache"
  report
}

case_B5_store_import_criterion_sample_fifo() {
  new_case B5
  python3 "$PY" crit "$U/crit/single_row_lookup/rusqlite/new" single_row_lookup rusqlite 10
  rm "$U/crit/single_row_lookup/rusqlite/new/sample.json"
  mkfifo "$U/crit/single_row_lookup/rusqlite/new/sample.json"
  decoy_before
  bs --after 8 -- store import crit
  report
}

case_B6_store_import_criterion_benchmark_fifo() {
  new_case B6
  python3 "$PY" crit "$U/crit/single_row_lookup/rusqlite/new" single_row_lookup rusqlite 10
  rm "$U/crit/single_row_lookup/rusqlite/new/benchmark.json"
  mkfifo "$U/crit/single_row_lookup/rusqlite/new/benchmark.json"
  decoy_before
  bs --after 8 -- store import crit
  report
}

case_B7_store_import_session_journal_fifo() {
  new_case B7
  mkfifo "$U/session.jsonl"
  decoy_before
  bs --after 8 -- store import session.jsonl
  report
}

# The measurement lock is a FIFO: opening it for writing waits for a reader. SIGINT (or
# SIGTERM) at 3 s, SIGKILL 5 s later if it is still there.
lock_fifo() {
  mkfifo "$O/measure.lock"
  decoy_before
  bs --sig "$1" --after 3 --kill-after 5 -- run single_row_lookup --bench rusqlite $TINY_LOOKUP $(tiny)
  report
}
case_B8_measure_lock_fifo_sigint() { new_case B8; lock_fifo INT; }
case_B9_measure_lock_fifo_sigterm() { new_case B9; lock_fifo TERM; }

cpu_latency_fifo() {
  mkfifo "$O/cpu_dma_latency"
  export BENCHSCOPE_CPU_LATENCY_DEVICE=$O/cpu_dma_latency
  decoy_before
  bs --sig "$1" --after 3 --kill-after 5 -- run single_row_lookup --bench rusqlite \
    --keep-cpus-awake $TINY_LOOKUP $(tiny)
  report
}
case_B10_cpu_latency_device_fifo_sigint() { new_case B10; cpu_latency_fifo INT; }
case_B11_cpu_latency_device_fifo_sigterm() { new_case B11; cpu_latency_fifo TERM; }

# A Criterion folder holding N links to itself (so N at every level below it too) beside one
# real benchmark: how often is that one benchmark read, and does the walk end?
crit_loops() { # N VERB...
  local n=$1 i
  shift
  python3 "$PY" crit "$U/crit/single_row_lookup/rusqlite/new" single_row_lookup rusqlite 10
  for i in $(seq 1 "$n"); do ln -s . "$U/crit/l$i"; done
  decoy_before
  bs --after 20 -- "$@"
  case $ST in
    TIMEOUT*) ;;
    *)
      if [ -f "$O/store.sqlite" ]; then
        note "store: $(python3 "$PY" tables "$O/store.sqlite"), bench rows: $(python3 "$PY" benches "$O/store.sqlite")"
        note "the one benchmark read $(python3 "$PY" recordcount "$O/store.sqlite" "Criterion's median") times (notes in the stored run)"
      else
        note "the one benchmark read $(grep -ao "Criterion's median" "$D/out.txt" | wc -l) times (notes in what it printed)"
      fi
      ;;
  esac
  report
}
case_B12_store_import_criterion_4_symlink_loops() { new_case B12; crit_loops 4 store import crit; }
case_B13a_show_criterion_4_symlink_loops() { new_case B13a; crit_loops 4 show crit; }
case_B13b_show_criterion_8_symlink_loops() { new_case B13b; crit_loops 8 show crit; }
case_B13c_store_import_criterion_8_symlink_loops() { new_case B13c; crit_loops 8 store import crit; }

# sample.json is a link to /dev/zero: an endless read. Under a 4 GB address-space limit.
case_B14_store_import_criterion_sample_dev_zero() {
  new_case B14
  mkdir -p "$U/crit/single_row_lookup/rusqlite/new"
  ln -s /dev/zero "$U/crit/single_row_lookup/rusqlite/new/sample.json"
  python3 "$PY" crit "$U/crit/single_row_lookup/rusqlite/new" single_row_lookup rusqlite 10
  decoy_before
  bs --after 10 --vlimit 4000000 -- store import crit
  report
}

# A large but legal Criterion sample: 200,000 samples.
case_B15_show_criterion_200k_samples() {
  new_case B15
  python3 "$PY" crit "$U/crit/single_row_lookup/rusqlite/new" single_row_lookup rusqlite 200000
  note "sample.json $(stat -c %s "$U/crit/single_row_lookup/rusqlite/new/sample.json") bytes"
  decoy_before
  bs --after 20 -- show crit
  report
}

case_B16_store_import_criterion_200k_samples() {
  new_case B16
  python3 "$PY" crit "$U/crit/single_row_lookup/rusqlite/new" single_row_lookup rusqlite 200000
  decoy_before
  bs --after 20 -- store import crit
  note "store.sqlite $(stat -c %s "$O/store.sqlite" 2>/dev/null || echo absent) bytes"
  report
}

# =============================================================================================
# C. Strings from data reaching sinks (a terminal, markdown, CSV).

OSC_TITLE=$'\e]0;pwned\a'
CLEAR=$'\e[2J'
FAKE_ROW=$'x\n| fake | 1 ns |'
FORMULA='=HYPERLINK("http://evil.example/","click")'

show_hostile() { # NAME FORMAT
  hostile_report sqlite3_c "$1" "$U/report.json"
  decoy_before
  bs -- show report.json --format "$2"
  note "$(python3 "$PY" controls "$D/out.txt")"
}

case_C1_show_table_osc_title_in_bench_name() { new_case C1; show_hostile "${OSC_TITLE}sqlite3_c" table; report; }
case_C2_show_markdown_osc_title_in_bench_name() { new_case C2; show_hostile "${OSC_TITLE}sqlite3_c" markdown; report; }
case_C3_show_csv_osc_title_in_bench_name() { new_case C3; show_hostile "${OSC_TITLE}sqlite3_c" csv; report; }
case_C4_show_table_clear_screen_in_bench_name() { new_case C4; show_hostile "${CLEAR}sqlite3_c" table; report; }

case_C5_show_markdown_newline_fake_row() {
  new_case C5
  show_hostile "$FAKE_ROW" markdown
  note "a line that is exactly '| fake | 1 ns |': $(grep -acx '| fake | 1 ns |' "$D/out.txt")"
  note "table rows cut short by the name's newline (a line '| x'): $(grep -acx '| x' "$D/out.txt")"
  report
}

case_C6_show_table_newline_fake_row() {
  new_case C6
  show_hostile "$FAKE_ROW" table
  note "lines starting '| fake |': $(grep -ac '^| fake |' "$D/out.txt")"
  report
}

case_C7_show_csv_formula_bench_name() {
  new_case C7
  show_hostile "$FORMULA" csv
  python3 "$PY" csvcells "$D/out.txt" >"$D/cells.txt"
  note "$(cat "$D/cells.txt")"
  report
}

case_C8_show_csv_plain_formula_bench_name() {
  new_case C8
  show_hostile "=1+1" csv
  python3 "$PY" csvcells "$D/out.txt" >"$D/cells.txt"
  note "$(cat "$D/cells.txt")"
  report
}

# A live run beside an imported Criterion folder whose function name is a formula; the CSV
# export of the run.
case_C9_export_csv_formula_from_imported_criterion() {
  new_case C9
  python3 "$PY" crit "$U/crit/single_row_lookup/x/new" single_row_lookup "=1+1" 10
  python3 "$PY" crit "$U/crit/single_row_lookup/y/new" single_row_lookup "$FORMULA" 10
  decoy_before
  bs -- run single_row_lookup --bench rusqlite $TINY_LOOKUP $(tiny) --import-criterion crit \
    --export-csv "$O/r.csv"
  if [ -f "$O/r.csv" ]; then note "$(python3 "$PY" csvcells "$O/r.csv")"; else note "no r.csv written"; fi
  report
}

case_C10_compare_baseline_osc_title_in_bench_name() {
  new_case C10
  python3 "$PY" rename "$TPL/baseline.json" "$U/base.json" sqlite3_c "${OSC_TITLE}sqlite3_c"
  hostile_report sqlite3_c "${OSC_TITLE}sqlite3_c" "$U/current.json"
  decoy_before
  bs -- compare base.json current.json --cache-dir "$O/cache"
  note "$(python3 "$PY" controls "$D/out.txt")"
  report
}

case_C11_show_criterion_escape_in_group_and_function() {
  new_case C11
  python3 "$PY" crit "$U/crit/g/f/new" "${CLEAR}group" "${OSC_TITLE}func" 10
  decoy_before
  bs -- show crit
  note "$(python3 "$PY" controls "$D/out.txt")"
  report
}

case_C12_history_label_with_escape() {
  new_case C12
  decoy_before
  "$BIN" run single_row_lookup --bench rusqlite $TINY_LOOKUP $(tiny) --label "${OSC_TITLE}${CLEAR}v1" \
    >"$D/run.log" 2>&1
  note "the label on the command line: status $?"
  # Another writer of the store may still put one there: history reads it as text.
  "$BIN" run single_row_lookup --bench rusqlite $TINY_LOOKUP $(tiny) --label v1 >"$D/run.log" 2>&1
  python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("UPDATE runs SET label=?", (sys.argv[2],)); c.commit()' \
    "$O/store.sqlite" "${OSC_TITLE}${CLEAR}v1"
  bs -- history
  note "$(python3 "$PY" controls "$D/out.txt")"
  report
}

case_C13_show_two_benches_of_one_name() {
  new_case C13
  hostile_report sqlite3_c rusqlite "$U/report.json"
  decoy_before
  bs -- show report.json
  note "$(python3 "$PY" cols "$D/out.txt" rusqlite)"
  report
}

case_C14_store_import_two_benches_of_one_name() {
  new_case C14
  hostile_report sqlite3_c rusqlite "$U/report.json"
  decoy_before
  bs -- store import report.json
  [ -f "$O/store.sqlite" ] && note "bench rows in the store: $(python3 "$PY" benches "$O/store.sqlite")"
  report
}

# =============================================================================================
# D. Secrets in a store URL: does the password, in any spelling, reach the output?

secret_case() { # VERB URL PASSWORD-SPELLINGS...
  local verb=$1 url=$2
  shift 2
  decoy_before
  if [ "$verb" = info ]; then
    bs --after 20 -- store info --store "$url"
  else
    bs --after 20 -- history --store "$url"
  fi
  note "password spellings printed:$(printed_any "$@")"
  report
}

URL1='postgres://u:pa ss@127.0.0.1:1/db'
URL2=$'postgres://u:pa\tss@127.0.0.1:1/db'
URL3='postgresql://u:p%20w@host:badport/db'
URL4="host=127.0.0.1 port=1 user=u password='p w'"
URL5='postgres://u@/db?host=/nonexistent&password=p%20w'

case_D1_store_info_password_with_space() { new_case D1; secret_case info "$URL1" 'pa ss' 'pa%20ss' 'pa+ss'; }
case_D2_store_info_password_with_tab() { new_case D2; secret_case info "$URL2" $'pa\tss' 'pa%09ss' 'pa\tss' 'pa\x09ss'; }
case_D3_store_info_percent_password_bad_port() { new_case D3; secret_case info "$URL3" 'p%20w' 'p w'; }
case_D4_store_info_keyword_form() { new_case D4; secret_case info "$URL4" 'p w' "'p w'"; }
case_D5_store_info_password_in_query() { new_case D5; secret_case info "$URL5" 'p%20w' 'p w'; }
case_D6_history_password_with_space() { new_case D6; secret_case history "$URL1" 'pa ss' 'pa%20ss' 'pa+ss'; }
case_D7_history_password_with_tab() { new_case D7; secret_case history "$URL2" $'pa\tss' 'pa%09ss' 'pa\tss' 'pa\x09ss'; }
case_D8_history_percent_password_bad_port() { new_case D8; secret_case history "$URL3" 'p%20w' 'p w'; }
case_D9_history_keyword_form() { new_case D9; secret_case history "$URL4" 'p w' "'p w'"; }
case_D10_history_password_in_query() { new_case D10; secret_case history "$URL5" 'p%20w' 'p w'; }

# =============================================================================================
# E. Edges.

# A variable set to a value its flag refuses: a clear error (status 2, naming the variable) or
# a panic? VAR=VALUE, then the command.
env_case() { # VAR VALUE ARGS... (PTY=1: on a terminal)
  local var=$1 val=$2
  shift 2
  export "$var=$val"
  decoy_before
  bs --after 20 ${PTY:+--pty} -- "$@"
  if grep -aq "panicked" "$D/out.txt"; then note "PANIC"; fi
  note "names the variable: $(grep -aqF -- "$var" "$D/out.txt" && echo yes || echo no)"
  [ -n "${SECRET:-}" ] && note "password printed:$(printed_any "$SECRET")"
  report
}

lookup_run() { echo run single_row_lookup --bench rusqlite $TINY_LOOKUP $(tiny); }
lookup_run_noknobs() { echo run single_row_lookup --bench rusqlite $(tiny); }

case_E01_env_processes_abc() { new_case E01; env_case BENCHSCOPE_PROCESSES abc $(lookup_run | sed 's/--processes 1//'); }
case_E02_env_processes_0() { new_case E02; env_case BENCHSCOPE_PROCESSES 0 $(lookup_run | sed 's/--processes 1//'); }
case_E03_env_processes_999() { new_case E03; env_case BENCHSCOPE_PROCESSES 999 $(lookup_run | sed 's/--processes 1//'); }
case_E04_env_processes_abc_flag_1() { new_case E04; env_case BENCHSCOPE_PROCESSES abc $(lookup_run); }
case_E05_env_rows_minus_1() { new_case E05; env_case BENCH_ROWS -1 $(lookup_run_noknobs) --lookups 50; }
case_E06_env_rows_abc_flag_200() { new_case E06; env_case BENCH_ROWS abc $(lookup_run); }
case_E07_env_runner_nice_x_explorer() { new_case E07; export TERM=xterm; PTY=1; env_case BENCHSCOPE_RUNNER_NICE x --cache-dir "$O/cache"; }
case_E08_env_runner_nice_x_run() { new_case E08; env_case BENCHSCOPE_RUNNER_NICE x $(lookup_run); }
case_E09_env_silence_x() { new_case E09; env_case BENCHSCOPE_SILENCE_S x $(lookup_run); }
case_E10_env_silence_inf() { new_case E10; env_case BENCHSCOPE_SILENCE_S inf $(lookup_run); }
case_E11_env_silence_1e30() { new_case E11; env_case BENCHSCOPE_SILENCE_S 1e30 $(lookup_run); }
case_E12_env_silence_1e19() { new_case E12; env_case BENCHSCOPE_SILENCE_S 1e19 $(lookup_run); }
case_E13_env_keep_cpus_awake_maybe() { new_case E13; env_case BENCHSCOPE_KEEP_CPUS_AWAKE maybe $(lookup_run); }
case_E14_env_no_store_maybe() { new_case E14; unset BENCHSCOPE_STORE; env_case BENCHSCOPE_NO_STORE maybe $(lookup_run); }
case_E15_env_cache_dir_is_a_file() { new_case E15; : >"$O/afile"; env_case BENCHSCOPE_CACHE_DIR "$O/afile" run single_row_lookup --bench rusqlite $TINY_LOOKUP --time 0.05 --warmup 0 --samples 3 --min-samples 2 --processes 1; }
case_E16_env_data_dir_is_a_file() { new_case E16; : >"$O/afile"; unset BENCHSCOPE_STORE; env_case BENCHSCOPE_DATA_DIR "$O/afile" $(lookup_run); }
case_E17_env_measure_lock_is_a_folder() { new_case E17; mkdir -p "$O/lockdir"; env_case BENCHSCOPE_MEASURE_LOCK "$O/lockdir" $(lookup_run); }
case_E18_env_cpu_latency_device_missing() { new_case E18; env_case BENCHSCOPE_CPU_LATENCY_DEVICE "$O/none" $(lookup_run) --keep-cpus-awake; }
case_E19_env_postgres_url_garbage() { new_case E19; SECRET=hunter2; env_case BENCHSCOPE_POSTGRES_URL 'postgres://u:hunter2@[::1' $(lookup_run); }
case_E20_env_trace_maybe() { new_case E20; env_case BENCH_TRACE maybe $(lookup_run); }

# Every knob's variable at a value its flag refuses, each on its own target.
KNOB_ENV_CASES=(
  "single_row_lookup rusqlite BENCH_LOOKUPS 0"
  "single_row_lookup rusqlite BENCH_CONCURRENCY 0"
  "single_row_lookup rusqlite BENCH_LOOKUPS_PER_CHECKOUT -5"
  "single_row_lookup rusqlite BENCH_SPIN_US 100001"
  "single_row_lookup rusqlite BENCH_TRACE_EVERY 0"
  "single_row_lookup rusqlite BENCH_SQLX_STATEMENT_CACHE 1e3"
  "single_row_lookup rusqlite BENCH_POOL bogus"
  "single_row_lookup rusqlite BENCH_VALUES bogus"
  "single_row_lookup rusqlite BENCH_JOURNAL_MODE truncate"
  "single_row_lookup rusqlite BENCH_SYNCHRONOUS extra"
  "single_row_lookup rusqlite BENCH_LOCKING_MODE shared"
  "single_row_lookup rusqlite BENCH_CACHE_SIZE 99999999999999999999"
  "single_row_lookup rusqlite BENCH_MMAP_SIZE -1"
  "single_row_lookup rusqlite BENCH_SQLITE_MUTEX on"
  "bulk_insert rusqlite BENCH_METHOD bogus"
  "async_contention inline BENCH_DATABASES 0"
  "async_contention inline BENCH_READERS 65"
  "async_contention inline BENCH_WRITE_DELAY_MS -1"
  "async_contention inline BENCH_WORKERS 0"
  "async_contention inline BENCH_DURATION 0"
  "async_contention inline BENCH_STORAGE disk"
  "async_contention inline BENCH_WRITER both"
  "async_contention inline BENCH_WRITE_ROWS 0"
  "crud_overhead create/rusqlite BENCH_OPS 0"
  "crud_overhead create/rusqlite BENCH_BATCH 0"
  "crud_overhead create/rusqlite BENCH_SWEEP_ROWS 0"
  "key_value single_put_100b/memory BENCH_KEYS 0"
  "script rusqlite BENCH_CLIENTS 0"
  "script rusqlite BENCH_TRANSACTIONS -1"
  "script rusqlite BENCH_ON_BUSY never"
)

knob_env_case() { # INDEX
  local target bench var val
  read -r target bench var val <<<"${KNOB_ENV_CASES[$1]}"
  if [ "$target" = script ]; then
    python3 "$PY" plaindb "$U/user.db"
    printf 'SELECT v FROM t WHERE id = 1;\n' >"$U/s.sql"
    env_case "$var" "$val" run script --script s.sql --db user.db --bench "$bench" $(tiny)
  else
    env_case "$var" "$val" run "$target" --bench "$bench" $(tiny)
  fi
}

# One case function per knob variable (E30...).
for i in "${!KNOB_ENV_CASES[@]}"; do
  read -r _t _b _v _x <<<"${KNOB_ENV_CASES[$i]}"
  n=$((30 + i))
  eval "case_E${n}_env_${_v}() { new_case E${n}_${_v}; knob_env_case $i; }"
done

# The results store at a path that does not exist yet: is one created (and its folders)?
store_missing() { # VERB...
  decoy_before
  bs -- "$@"
  note "nope/: $(find "$U/nope" 2>/dev/null | sed "s|$U/||" | paste -sd' ' - || true)"
  report
}
case_E60_store_info_missing_path() { new_case E60; store_missing store info --store nope/deeper/results.sqlite; }
case_E61_history_missing_path() { new_case E61; store_missing history --store nope/deeper/results.sqlite; }
case_E62_report_html_missing_path() { new_case E62; store_missing report --html "$O/site" --store nope/deeper/results.sqlite; }

# Another application's SQLite file as the store: are benchscope's tables added to it?
store_foreign() { # VERB...
  python3 "$PY" appdb "$U/app.db"
  note "app.db before: $(python3 "$PY" tables "$U/app.db")"
  decoy_before
  bs -- "$@"
  note "after: $(python3 "$PY" tables "$U/app.db")"
  report
}
case_E63_store_info_foreign_sqlite() { new_case E63; store_foreign store info --store app.db; }
case_E64_history_foreign_sqlite() { new_case E64; store_foreign history --store app.db; }
case_E65_report_html_foreign_sqlite() { new_case E65; store_foreign report --html "$O/site" --store app.db; }

# --init building a large table, SIGINT at 4 s: is anything left beside new.db?
case_E66_init_interrupted_by_sigint() {
  new_case E66
  cat >"$U/init.sql" <<'EOF'
CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50000000)
INSERT INTO t SELECT i, randomblob(200) FROM n;
EOF
  printf 'SELECT v FROM t WHERE id = 1;\n' >"$U/s.sql"
  decoy_before
  bs --sig INT --after 4 --kill-after 6 -- run script --script s.sql --db new.db --init init.sql \
    --bench rusqlite $(tiny)
  sleep 1
  report
}

# An --init file that creates no table: a comment alone, a PRAGMA alone, a SELECT alone.
init_no_table() { # INIT-TEXT
  printf '%s\n' "$1" >"$U/init.sql"
  printf 'SELECT 1;\n' >"$U/s.sql"
  decoy_before
  bs -- run script --script s.sql --db new.db --init init.sql --bench rusqlite $(tiny)
  note "new.db: $( [ -e "$U/new.db" ] && echo "$(stat -c %s "$U/new.db") bytes" || echo absent)"
  report
}
case_E67a_init_only_a_comment() { new_case E67a; init_no_table '-- nothing here'; }
case_E67b_init_only_a_pragma() { new_case E67b; init_no_table 'PRAGMA user_version = 7;'; }
case_E67c_init_only_a_select() { new_case E67c; init_no_table 'SELECT 1;'; }

# A script of one statement longer than 16 MiB.
case_E68_statement_over_16_mib() {
  new_case E68
  python3 "$PY" plaindb "$U/user.db"
  python3 "$PY" bigstmt "$U/big.sql" 17
  decoy_before
  bs --after 20 -- run script --script big.sql --db user.db --bench rusqlite --transactions 2 $(tiny)
  note "recorded in the store: $(grep -aq '^recorded' "$D/out.txt" && echo yes || echo no)"
  note "out/ after: $(du -sh "$O" | cut -f1) ($(find "$O" -type f -size +1M -printf '%P=%s ' | head -c 300))"
  report
}

case_E69_bench_empty_pattern() {
  new_case E69
  decoy_before
  bs --after 20 -- run single_row_lookup --bench '' $TINY_LOOKUP $(tiny)
  note "benches started (lines with a result mark): $(grep -acE '^[✓✗] ' "$D/out.txt")"
  report
}

case_E70_time_for_bad_regex() {
  new_case E70
  decoy_before
  bs -- run single_row_lookup --bench rusqlite --time-for '(=1' $TINY_LOOKUP $(tiny)
  note "names --time-for: $(grep -acF -- '--time-for' "$D/out.txt"); names --bench: $(grep -acF -- '--bench' "$D/out.txt")"
  report
}

# The front end's environment and flags disagree on where the store is and whether to record.
case_E71_env_no_store_1_with_flag_store() {
  new_case E71
  unset BENCHSCOPE_STORE
  env_case BENCHSCOPE_NO_STORE 1 $(lookup_run) --store "$O/s2.sqlite"
}

# =============================================================================================
# F. Regression: a read-only script on a user's WAL / rollback database, through every bench
#    that runs in this binary's runner.

readonly_script() { # MAKER [EXTRA...]
  local maker=$1
  shift
  python3 "$PY" "$maker" "$U/user.db"
  printf '\\set id random(1, 2000)\nSELECT v FROM t WHERE id = :id;\n' >"$U/s.sql"
  decoy_before
  bs --after 20 -- run script --script s.sql --db user.db $SCRIPT_BENCHES \
    --transactions 20 "$@" $(tiny)
  note "finished: $(grep -ac '^✓' "$D/out.txt"), failed: $(grep -ac '^✗' "$D/out.txt")"
  note "first failure: $(grep -a -m1 '^✗' "$D/out.txt" | cut -c1-160)"
  report
}
case_F1_readonly_script_wal_db() { new_case F1; readonly_script waldb; }
case_F2_readonly_script_rollback_db() { new_case F2; readonly_script plaindb; }
case_F3_readonly_script_wal_db_journal_delete() { new_case F3; readonly_script waldb --knob journal_mode=delete; }
case_F4_readonly_script_rollback_db_journal_delete() { new_case F4; readonly_script plaindb --knob journal_mode=delete; }
case_F5_readonly_script_rollback_db_journal_memory() { new_case F5; readonly_script plaindb --knob journal_mode=memory; }
case_F6_readonly_script_rollback_db_locking_exclusive() { new_case F6; readonly_script plaindb --knob locking_mode=exclusive; }
case_F7_readonly_script_wal_db_locking_exclusive() { new_case F7; readonly_script waldb --knob locking_mode=exclusive; }

# =============================================================================================

( make_templates )
[ -f "$TPL/report.json" ] || exit 2
echo "# benchscope $("$BIN" --version 2>&1) at $BIN; cases in $ROOT" >&2
for f in $(declare -F | awk '{print $3}' | grep '^case_' | sort -V); do
  run_case "${f#case_}"
done
