use super::*;

fn one(text: &str) -> Result<Mix, ScriptError> {
    Mix::parse(&[("t.sql".into(), text.into(), 1)], &[])
}

/// A database with the tables the tests' scripts use, for SQLite to judge them on.
fn schema() -> rusqlite::Connection {
    let c = rusqlite::Connection::open_in_memory().unwrap();
    c.execute_batch(
        "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT, x, c, d);
         CREATE TABLE pgbench_accounts(aid INTEGER PRIMARY KEY, bid, abalance, filler);
         CREATE TABLE pgbench_tellers(tid INTEGER PRIMARY KEY, bid, tbalance, filler);
         CREATE TABLE pgbench_branches(bid INTEGER PRIMARY KEY, bbalance, filler);
         CREATE TABLE pgbench_history(tid, bid, aid, delta, mtime, filler);",
    )
    .unwrap();
    c
}

/// `mix` with SQLite's verdicts on it.
fn judged(mut mix: Mix) -> Result<Mix, ScriptError> {
    super::judge::judge_on(&mut schema(), &mut mix)?;
    Ok(mix)
}

/// A replay of the judged mix `text` by `clients` clients, `per_pass` transactions a sample.
fn replay_of(text: &str, clients: usize, per_pass: u64, retry: bool) -> super::replay::Replay {
    use super::replay::{Exec, Replay};
    Replay::new(
        Exec::new(judged(one(text).unwrap()).unwrap(), retry),
        clients,
        per_pass,
        1,
    )
}

/// The script report among a bench's events.
fn script_report(events: Vec<crate::protocol::Event>) -> super::report::ScriptReport {
    events
        .into_iter()
        .find_map(|e| match e {
            crate::protocol::Event::Script { report, .. } => Some(report),
            _ => None,
        })
        .expect("a script report")
}

const TPCB: &str = r#"-- pgbench's TPC-B-like transaction, on SQLite
\set aid random(1, 100000 * :scale)
\set bid random(1, 1 * :scale)
\set tid random(1, 10 * :scale)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts
  WHERE aid = :aid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime)
  VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
"#;

#[test]
fn a_tpcb_script_reads_as_statements_with_bound_parameters() {
    let mix = Mix::parse(
        &[("tpcb.sql".into(), TPCB.into(), 1)],
        &[("scale".into(), Value::Int(1))],
    )
    .unwrap();
    // Until SQLite judges them, statements other than transaction control count as writes.
    assert!(!mix.judged() && !mix.read_only());
    assert_eq!(
        mix.statements().map(|s| s.kind).collect::<Vec<_>>(),
        [
            Kind::Begin,
            Kind::Write,
            Kind::Write,
            Kind::Write,
            Kind::Write,
            Kind::Write,
            Kind::Commit
        ]
    );
    let mix = judged(mix).unwrap();
    let s = &mix.scripts[0];
    assert_eq!(s.name, "tpcb");
    let stmts: Vec<_> = s.statements().collect();
    assert_eq!(stmts.len(), 7);
    assert_eq!(
        stmts.iter().map(|s| s.kind).collect::<Vec<_>>(),
        [
            Kind::Begin,
            Kind::Write,
            Kind::Read,
            Kind::Write,
            Kind::Write,
            Kind::Write,
            Kind::Commit
        ]
    );
    // A statement spanning lines reads as one line; its place is where it starts.
    assert_eq!(
        stmts[2].text,
        "SELECT abalance FROM pgbench_accounts WHERE aid = :aid"
    );
    assert_eq!(stmts[2].at, At { line: 8, col: 1 });
    assert_eq!(
        stmts[1].sql(Placeholders::Numbered),
        "UPDATE pgbench_accounts SET abalance = abalance + ?1 WHERE aid = ?2"
    );
    assert_eq!(
        stmts[5].sql(Placeholders::Dollar),
        "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime)\n  VALUES ($1, $2, $3, $4, CURRENT_TIMESTAMP)"
    );
    // The parameters are the variables' slots, once each, in placeholder order.
    let names =
        |s: &Statement| -> Vec<&str> { s.params.iter().map(|p| mix.vars[*p].as_str()).collect() };
    assert_eq!(names(stmts[5]), ["tid", "bid", "aid", "delta"]);
    assert!(!mix.read_only());
}

#[test]
fn quotes_comments_and_casts_are_not_parameters() {
    let mix = one(
        "\\set n 3\nSELECT ':n' AS \"a:b\", x AS [c:d] /* :n; */, -- :n;\n :n FROM t;\nSELECT 'it''s;' || :n",
    )
    .unwrap();
    assert!(!mix.read_only(), "not judged yet");
    // A PostgreSQL cast is no parameter (PostgreSQL runs the scripts too).
    assert!(
        one("SELECT x::int FROM t")
            .unwrap()
            .statements()
            .all(|s| s.params.is_empty())
    );
    let mix = judged(mix).unwrap();
    let s: Vec<_> = mix.statements().collect();
    assert_eq!(s.len(), 2);
    assert_eq!(s[0].params.len(), 1);
    assert_eq!(
        s[0].sql(Placeholders::Numbered)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" "),
        "SELECT ':n' AS \"a:b\", x AS [c:d] , ?1 FROM t"
    );
    assert_eq!(s[1].sql(Placeholders::Numbered), "SELECT 'it''s;' || ?1");
    assert!(mix.read_only());
}

#[test]
fn variables_come_from_set_define_or_the_client() {
    let mix = Mix::parse(
        &[
            (
                "a.sql".into(),
                "\\set k :rows / 2\nSELECT :k, :client_id".into(),
                9,
            ),
            ("b.sql".into(), "SELECT :rows".into(), 1),
        ],
        &[("rows".into(), Value::Int(1000))],
    )
    .unwrap();
    assert_eq!(mix.vars, ["client_id", "rows", "k"]);
    assert_eq!(mix.defaults, [None, Some(Value::Int(1000)), None]);
    assert_eq!(mix.total_weight(), 10);
    // A \set in one file is not a definition for another.
    let e = Mix::parse(
        &[
            ("a.sql".into(), "\\set k 1\nSELECT :k".into(), 1),
            ("b.sql".into(), "SELECT :k".into(), 1),
        ],
        &[],
    )
    .unwrap_err();
    assert_eq!((e.file.as_str(), e.at), ("b.sql", At { line: 1, col: 8 }));
}

#[test]
fn clients_replay_the_same_transactions_for_the_same_seed() {
    let mix = Mix::parse(
        &[
            ("tpcb.sql".into(), TPCB.into(), 3),
            (
                "r.sql".into(),
                "\\set a random(1, 10)\n\\sleep :a us\nSELECT :a".into(),
                1,
            ),
        ],
        &[("scale".into(), Value::Int(2))],
    )
    .unwrap();
    let replay = |seed, id| {
        let mut c = Client::new(std::sync::Arc::new(mix.clone()), seed, id);
        let mut steps = Vec::new();
        let mut out = Vec::new();
        for _ in 0..200 {
            let pick = c.next(&mut steps).unwrap();
            out.push((pick, format!("{steps:?}")));
        }
        out
    };
    let a = replay(1, 0);
    assert_eq!(a, replay(1, 0));
    assert_ne!(a, replay(1, 1), "each client draws its own stream");
    assert_ne!(a, replay(2, 0));
    // Both scripts are picked, about 3 to 1.
    let tpcb = a.iter().filter(|(p, _)| *p == 0).count();
    assert!((120..=180).contains(&tpcb), "{tpcb}");
    // Values are bound in placeholder order and within their ranges.
    let mut c = Client::new(std::sync::Arc::new(mix.clone()), 5, 0);
    let mut steps = Vec::new();
    while c.next(&mut steps).unwrap() != 0 {}
    let Step::Sql(s, v) = &steps[1] else {
        panic!("{steps:?}")
    };
    assert_eq!(s.kind, Kind::Write);
    let [Value::Int(delta), Value::Int(aid)] = v.as_slice() else {
        panic!("{v:?}")
    };
    assert!((-5000..=5000).contains(delta) && (1..=200_000).contains(aid));
    while c.next(&mut steps).unwrap() != 1 {}
    let (Step::Sleep(d), Step::Sql(_, v)) = (&steps[0], &steps[1]) else {
        panic!("{steps:?}")
    };
    assert_eq!(*v, [Value::Int(d.as_micros() as i64)]);
}

#[test]
fn evaluation_errors_name_the_file_and_place() {
    let mix = one("\\set z 0\n\\set q 10 / :z\nSELECT :q").unwrap();
    let mut c = Client::new(std::sync::Arc::new(mix.clone()), 1, 0);
    assert_eq!(
        c.next(&mut Vec::new()).unwrap_err(),
        "t.sql:2:11: division by zero"
    );
}

/// Every construct outside the subset, with the message a user reads: the list the docs
/// give (docs/scripts.md).
#[test]
fn refused_constructs_say_where_what_and_what_is_allowed() {
    let cases = [
        "SELECT * FROM t WHERE id = ?",
        "SELECT * FROM t WHERE id = $1",
        "SELECT * FROM t WHERE id = @id",
        "SELECT :nope",
        "\\setrandom aid 1 10",
        "\\gset",
        "\\if :x",
        "\\set 1x 3",
        "\\set client_id 3",
        "\\set x random(1, 10) > 3",
        "\\set x rand(1, 10)",
        "\\set x random(1)",
        "\\set x",
        "\\sleep",
        "\\sleep 10 min",
        "\\sleep -1",
        "\\sleep :later ms",
        "SELECT 'open",
        "SELECT \"open",
        "SELECT 1 /* open",
        "BEGIN;\nBEGIN;\nCOMMIT",
        "COMMIT",
        "BEGIN;\nSELECT 1",
        "-- nothing but a comment\n",
    ];
    let out: Vec<String> = cases
        .iter()
        .map(|c| format!("{c:?}\n  {}", one(c).unwrap_err()))
        .collect();
    insta::assert_snapshot!(out.join("\n"));
}

/// What SQLite refuses when it judges the statements, with the message a user reads.
#[test]
fn statements_sqlite_refuses_say_where_what_and_what_is_allowed() {
    let cases = [
        "ATTACH 'other.db' AS o",
        "DETACH o",
        "PRAGMA journal_mode = wal",
        "PRAGMA optimize",
        "SELECT * FROM pragma_table_info('t'); PRAGMA table_info(t); PRAGMA writable_schema = 1",
        "VACUUM",
        "VACUUM INTO '/tmp/copied.db'",
        // Its file name computed: the function and the read SQLite reports are not writes.
        "VACUUM INTO lower('/tmp/COPIED.db')",
        "VACUUM INTO (SELECT v FROM t)",
        "SELECT load_extension('/tmp/x.so')",
        "SAVEPOINT a",
        "RELEASE a",
        "BEGIN;\nROLLBACK TO a",
        "START TRANSACTION",
        "BEGIN CONCURRENT;\nCOMMIT",
        "SELECT * FROM nowhere",
        "INSERT INTO sqlite_master VALUES ('table', 'x', 'x', 0, 'CREATE TABLE x(a)')",
    ];
    let out: Vec<String> = cases
        .iter()
        .map(|c| format!("{c:?}\n  {}", judged(one(c).unwrap()).unwrap_err()))
        .collect();
    insta::assert_snapshot!(out.join("\n"));
}

/// Transaction control takes the kind SQLite's authorizer names, whatever the words.
#[test]
fn transaction_control_is_named_by_sqlite() {
    use super::judge::verdict;
    let mut c = schema();
    for (sql, kind) in [
        ("BEGIN", Kind::Begin),
        ("begin deferred transaction", Kind::Begin),
        ("COMMIT", Kind::Commit),
        ("END", Kind::Commit),
        ("ROLLBACK", Kind::Rollback),
        ("rollback transaction", Kind::Rollback),
        ("SELECT v FROM t", Kind::Read),
        ("UPDATE t SET v = 'x' WHERE id = 1", Kind::Write),
    ] {
        assert_eq!(verdict(&mut c, sql), Ok(kind), "{sql}");
    }
    // The authorizer is gone once judged: the connection takes what the guard refuses.
    c.execute_batch("PRAGMA user_version = 3").unwrap();
    let v: i64 = c
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(v, 3);
}

/// An `--init` file may set PRAGMAs and use savepoints as it builds its database; other files
/// and whole-file rewrites stay refused, named by the statement's place in the file.
#[test]
fn init_files_take_pragmas_and_savepoints_but_no_other_file() {
    use super::judge::run_init;
    let mut c = rusqlite::Connection::open_in_memory().unwrap();
    run_init(
        &mut c,
        "PRAGMA user_version = 7; SAVEPOINT a; CREATE TABLE x(a); INSERT INTO x VALUES (1); RELEASE a;",
    )
    .unwrap();
    let (v, n): (i64, i64) = (
        c.query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap(),
        c.query_row("SELECT count(*) FROM x", [], |r| r.get(0))
            .unwrap(),
    );
    assert_eq!((v, n), (7, 1));
    // A statement that returns rows runs too (pgbench's init scripts hold SELECTs).
    run_init(
        &mut c,
        "SELECT count(*) FROM x; INSERT INTO x SELECT a + 1 FROM x;",
    )
    .unwrap();
    let n: i64 = c
        .query_row("SELECT count(*) FROM x", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 2);
    let e = run_init(&mut c, "CREATE TABLE y(a);\nATTACH 'other.db' AS o;").unwrap_err();
    assert!(e.starts_with("statement 2: ATTACH of \"other.db\""), "{e}");
    let e = run_init(&mut c, "VACUUM INTO lower('/tmp/X.db')").unwrap_err();
    assert!(e.contains("writes a file without changing a row"), "{e}");
}

#[test]
fn script_and_define_arguments_are_checked() {
    assert_eq!(parse_script_arg("a.sql@9"), Ok(("a.sql".into(), 9)));
    assert_eq!(parse_script_arg("a.sql"), Ok(("a.sql".into(), 1)));
    assert_eq!(parse_script_arg("me@host/a.sql"), Err("invalid weight \"host/a.sql\" in --script \"me@host/a.sql\" (allowed: a whole number 1..=1000000)".into()));
    assert_eq!(
        parse_script_arg("a.sql@0").unwrap_err(),
        "invalid weight \"0\" in --script \"a.sql@0\" (allowed: a whole number 1..=1000000)"
    );
    assert_eq!(
        parse_define("scale=10"),
        Ok(("scale".into(), Value::Int(10)))
    );
    assert_eq!(
        parse_define(" p = 0.5"),
        Ok(("p".into(), Value::Double(0.5)))
    );
    assert_eq!(
        parse_define("scale").unwrap_err(),
        "invalid -D \"scale\": expected NAME=VALUE"
    );
    assert_eq!(
        parse_define("scale=ten").unwrap_err(),
        "invalid -D \"scale=ten\": \"ten\" is not a number (allowed: an integer or a decimal)"
    );
    assert_eq!(
        parse_define("a-b=1").unwrap_err(),
        "invalid -D \"a-b=1\": \"a-b\" is not a variable name (allowed: letters, digits, _)"
    );
    assert_eq!(
        parse_define("client_id=1").unwrap_err(),
        "invalid -D \"client_id=1\": client_id is set by each client"
    );
}

/// Benches of different runners are compared by the hash of what each kept: the same hash
/// is the same rows, another hash differs, other counts cannot be compared; benches a
/// runner already compared keep their check.
#[test]
fn benches_of_other_runners_are_compared_by_their_kept_hash() {
    use crate::script::report::{KeptRows, RowsCheck, ScriptReport, cross_check};
    let report = |rows: RowsCheck, per_client: Vec<u64>, xxh3: &str| ScriptReport {
        clients: per_client.len() as u64,
        transactions: 10,
        tx_mean_ns: 1.0,
        failed: 0,
        busy: 0,
        retries: 0,
        statements: Vec::new(),
        rows,
        db: "x.db".into(),
        db_sha256: "00".into(),
        kept: Some(KeptRows {
            prefixes: [1u64, 10]
                .into_iter()
                .filter(|n| per_client.iter().all(|k| k >= n))
                .map(|n| (n, format!("{xxh3}{n}")))
                .collect(),
            per_client,
            xxh3: xxh3.into(),
        }),
    };
    let reference = || RowsCheck::Reference { transactions: 10 };
    let core = report(reference(), vec![10], "aa");
    let same_runner = report(
        RowsCheck::Same {
            against: "core".into(),
            transactions: 10,
        },
        vec![10],
        "aa",
    );
    let same = report(reference(), vec![10], "aa");
    let differ = report(reference(), vec![10], "bb");
    let fewer = report(reference(), vec![7], "aa");
    let checks = cross_check(&[
        ("core", &core),
        ("mw", &same_runner),
        ("sqlx", &same),
        ("other", &differ),
        ("short", &fewer),
    ]);
    assert_eq!(checks[0], reference());
    assert_eq!(checks[1], same_runner.rows);
    assert_eq!(
        checks[2],
        RowsCheck::Same {
            against: "core".into(),
            transactions: 10
        }
    );
    assert!(
        matches!(&checks[3], RowsCheck::Differ { against, first } if against == "core" && first.contains("hash differently")),
        "{:?}",
        checks[3]
    );
    // Seven kept against ten: compared on the first one of each.
    assert_eq!(
        checks[4],
        RowsCheck::Same {
            against: "core".into(),
            transactions: 1
        }
    );
    let none = report(reference(), vec![0], "cc");
    let checks = cross_check(&[("core", &core), ("none", &none)]);
    assert!(
        matches!(&checks[1], RowsCheck::NotCompared { reason } if reason.contains("[0]") && reason.contains("[10]")),
        "{:?}",
        checks[1]
    );
}

/// A statement's latency distribution is kept for mixes of at most PERCENTILES_UP_TO
/// statements; past that, its count, mean and rows only (memory per statement and bench).
#[test]
fn statement_percentiles_are_kept_for_mixes_up_to_a_thousand_statements() {
    use super::report::{PERCENTILES_UP_TO, StatementAcc};
    for (n, kept) in [
        (1, true),
        (PERCENTILES_UP_TO, true),
        (PERCENTILES_UP_TO + 1, false),
    ] {
        let mut a = StatementAcc::for_mix(n);
        a.record(1500, 2);
        a.record(2500, 1);
        assert_eq!((a.count, a.sum_ns, a.rows), (2, 4000, 3));
        assert_eq!(a.hist.percentiles().is_some(), kept, "{n} statements");
    }
}

/// Two benches whose replays return other rows: the second's report says they differ, names
/// the first transaction and statement that differ with both sides' counts, and errs; a
/// third that returned the reference's rows is the same. (compare() and difference() run.)
#[test]
fn a_replay_that_returns_other_rows_is_named_with_the_first_difference() {
    use crate::protocol::Event;
    use crate::script::replay::StmtOut;
    use crate::script::report::RowsCheck;
    let replay = replay_of(
        "\\set k random(1, 9)\nSELECT v FROM t WHERE id = :k;\nSELECT count(*) FROM t;",
        1,
        3,
        true,
    );
    assert!(replay.exec.mix.read_only());
    let out = |hash: u64, rows: u64| StmtOut {
        hash,
        rows,
        changed: 0,
    };
    let feed = |bench: &str, second: StmtOut| {
        let acc = replay.new_acc(bench);
        let mut a = acc.borrow_mut();
        for t in 0..3u64 {
            let last = if t == 1 { second } else { out(20 + t, 1) };
            a.clients[0].finished(0, vec![(0, 100, out(10 + t, 1)), (1, 100, last)], 300);
        }
    };
    feed("rusqlite", out(21, 1));
    feed("mw", out(99, 2));
    feed("same", out(21, 1));
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    std::fs::write(&db, b"bytes").unwrap();
    let sum = super::original::sha256(&db, "--db").unwrap();
    let rows = |events: &[Event]| -> RowsCheck {
        events
            .iter()
            .find_map(|e| match e {
                Event::Script { report, .. } => Some(report.rows.clone()),
                _ => None,
            })
            .unwrap()
    };
    let first = replay.report("rusqlite", &db, &sum);
    assert_eq!(rows(&first), RowsCheck::Reference { transactions: 3 });
    assert_eq!(first.len(), 1, "{first:?}");
    let second = replay.report("mw", &db, &sum);
    match rows(&second) {
        RowsCheck::Differ { against, first } => {
            assert_eq!(against, "rusqlite");
            assert_eq!(
                first,
                "client 0, transaction 2 (t), t:3 `SELECT count(*) FROM t`: 2 rows, 0 changed; rusqlite: 1 rows, 0 changed"
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(
        second.iter().any(|e| matches!(e, Event::Error { message, .. } if message.starts_with("returned other rows than rusqlite: client 0, transaction 2"))),
        "{second:?}"
    );
    assert_eq!(
        rows(&replay.report("same", &db, &sum)),
        RowsCheck::Same {
            against: "rusqlite".into(),
            transactions: 3
        }
    );
    // The original read again after the bench: changed bytes are an error saying so.
    std::fs::write(&db, b"other bytes").unwrap();
    let after = replay.report("same", &db, &sum);
    assert!(
        after.iter().any(|e| matches!(e, Event::Error { message, .. } if message.contains("is not what it was before the run"))),
        "{after:?}"
    );
}

/// The async replay through a path that answers busy now and then and skips one statement:
/// every transaction of every sample finished (retried after busy) or given up, the busy
/// errors counted, the statement the path does not run never sent, rows kept per client.
#[test]
fn an_async_replay_retries_or_gives_up_busy_transactions_and_counts_them() {
    use crate::script::replay::{AsyncPath, Outcome, StmtError, StmtOut};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};

    /// Busy on every fifth statement sent; statement 2 is not run on this path.
    #[derive(Default)]
    struct Flaky {
        sent: AtomicU64,
        busy: AtomicU64,
        rollbacks: AtomicU64,
        sent_2: AtomicU64,
    }
    impl AsyncPath for Arc<Flaky> {
        type Conn = ();
        async fn checkout(&self, _client: usize) -> Result<(), crate::BenchError> {
            Ok(())
        }
        async fn exec(
            &self,
            _conn: &mut (),
            index: usize,
            _sql: Arc<str>,
            _kind: Kind,
            _params: Vec<Value>,
        ) -> Outcome {
            if index == 2 {
                self.sent_2.fetch_add(1, Ordering::Relaxed);
            }
            if self.sent.fetch_add(1, Ordering::Relaxed) % 5 == 4 {
                self.busy.fetch_add(1, Ordering::Relaxed);
                return Ok(Err(StmtError::Busy));
            }
            Ok(Ok(StmtOut {
                hash: index as u64,
                rows: 1,
                changed: 0,
            }))
        }
        fn runs(&self, index: usize) -> bool {
            index != 2
        }
        async fn rollback(&self, _conn: &mut ()) -> Result<(), crate::BenchError> {
            self.rollbacks.fetch_add(1, Ordering::Relaxed);
            Ok(())
        }
    }

    let rt = crate::measure::drive::runtime(None).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    std::fs::write(&db, b"bytes").unwrap();
    let sum = super::original::sha256(&db, "--db").unwrap();
    for retry in [true, false] {
        let replay = replay_of(
            "SELECT v FROM t WHERE id = 1;\nSELECT count(*) FROM t;\nSELECT 2;",
            3,
            10,
            retry,
        );
        let path = Arc::new(Flaky::default());
        let mut bench = replay
            .async_bench(&rt, "flaky", path.clone(), Default::default())
            .unwrap();
        let mut hist = crate::measure::stats::LatencyHistogram::new();
        for _ in 0..2 {
            let it = (bench.iter)(&mut hist).unwrap();
            // Every transaction of the sample finished or given up: the work it reports.
            assert_eq!(it.work, 10, "retry {retry}");
        }
        drop(bench);
        let busy = path.busy.load(Ordering::Relaxed);
        assert!(busy > 0);
        assert_eq!(path.sent_2.load(Ordering::Relaxed), 0);
        assert_eq!(path.rollbacks.load(Ordering::Relaxed), busy);
        let report = script_report(replay.report("flaky", &db, &sum));
        assert_eq!(report.busy, busy, "retry {retry}");
        if retry {
            assert_eq!(
                (report.transactions, report.retries, report.failed),
                (20, busy, 0)
            );
        } else {
            assert_eq!((report.transactions, report.retries), (20 - busy, 0));
            assert_eq!(report.failed, busy);
        }
        assert!(report.tx_mean_ns > 0.0);
        let kept = report.kept.unwrap();
        assert_eq!(kept.per_client.iter().sum::<u64>(), report.transactions);
        // Two samples of 10 shared out among 3 clients: 4, 3, 3 each time.
        if retry {
            assert_eq!(kept.per_client, [8, 6, 6]);
        }
    }
}

/// A path's own failure (not a statement's) fails the bench, named.
#[test]
fn an_async_path_that_fails_fails_its_bench() {
    use crate::script::replay::{AsyncPath, Outcome};
    use std::sync::Arc;
    struct Broken;
    impl AsyncPath for Broken {
        type Conn = ();
        async fn checkout(&self, _client: usize) -> Result<(), crate::BenchError> {
            Ok(())
        }
        async fn exec(
            &self,
            _conn: &mut (),
            _index: usize,
            _sql: Arc<str>,
            _kind: Kind,
            _params: Vec<Value>,
        ) -> Outcome {
            Err(crate::BenchError::Driver("the pool is gone".into()))
        }
        async fn rollback(&self, _conn: &mut ()) -> Result<(), crate::BenchError> {
            Ok(())
        }
    }
    let rt = crate::measure::drive::runtime(None).unwrap();
    let replay = replay_of("SELECT 1;", 2, 4, true);
    let mut bench = replay
        .async_bench(&rt, "broken", Broken, Default::default())
        .unwrap();
    let mut hist = crate::measure::stats::LatencyHistogram::new();
    let e = (bench.iter)(&mut hist).unwrap_err().to_string();
    assert!(e.contains("the pool is gone"), "{e}");
}

/// Rows are compared between benches only where the order of writes is fixed: a writing mix
/// with one client and nothing given up. Each reason is said; a read-only mix is compared
/// whatever its clients. The mean transaction time and the kept prefixes come from what
/// the clients finished.
#[test]
fn rows_are_compared_only_where_the_order_of_writes_is_fixed() {
    use crate::script::replay::{Replay, StmtError, StmtOut};
    use crate::script::report::{RowsCheck, ScriptReport};
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    std::fs::write(&db, b"bytes").unwrap();
    let sum = super::original::sha256(&db, "--db").unwrap();
    let replay = |text: &str, clients: usize, retry: bool| replay_of(text, clients, 6, retry);
    let out = StmtOut {
        hash: 1,
        rows: 1,
        changed: 0,
    };
    // Each client finishes three transactions of 100, 200 and 600 ns; `give_up` busy errors
    // are given up on the first client.
    let run = |r: &Replay, give_up: usize| -> ScriptReport {
        let acc = r.new_acc("b");
        assert!(r.acc("b").is_some() && r.acc("nothing").is_none());
        let mut a = acc.borrow_mut();
        for c in &mut a.clients {
            for ns in [100, 200, 600] {
                c.finished(0, vec![(0, ns, out)], ns);
            }
        }
        for _ in 0..give_up {
            let mut attempts = 0;
            let next = r
                .exec
                .after_failure(StmtError::Busy, &mut a.clients[0], &mut attempts)
                .unwrap();
            assert!(next.is_none());
        }
        drop(a);
        script_report(r.report("b", &db, &sum))
    };
    const WRITE: &str = "UPDATE t SET v = 'x' WHERE id = 1;";
    const READ: &str = "SELECT v FROM t WHERE id = 1;";
    let not_compared = |r: ScriptReport| match r.rows {
        RowsCheck::NotCompared { reason } => reason,
        other => panic!("{other:?}"),
    };
    let two_writers = not_compared(run(&replay(WRITE, 2, true), 0));
    assert!(two_writers.starts_with("2 clients write"), "{two_writers}");
    let gave_up = not_compared(run(&replay(WRITE, 1, false), 2));
    assert!(
        gave_up.starts_with("2 transactions were given up"),
        "{gave_up}"
    );
    let one_writer = run(&replay(WRITE, 1, true), 0);
    assert_eq!(one_writer.rows, RowsCheck::Reference { transactions: 3 });
    assert_eq!(one_writer.tx_mean_ns, 300.0);
    let readers = run(&replay(READ, 2, false), 1);
    assert_eq!(readers.rows, RowsCheck::Reference { transactions: 6 });
    assert_eq!((readers.transactions, readers.failed), (6, 1));
    let kept = readers.kept.unwrap();
    assert_eq!(kept.per_client, [3, 3]);
    let lengths: Vec<u64> = kept.prefixes.iter().map(|(n, _)| *n).collect();
    assert_eq!(lengths, [1, 2]);
}

/// A `\set` expression may name only variables known where it stands, as a statement may: an
/// unknown one is refused at its place, naming what is allowed.
#[test]
fn a_set_expression_names_only_variables_known_where_it_stands() {
    let e = one("\\set a :nope + 1\nSELECT :a").unwrap_err().to_string();
    assert!(
        e.starts_with("t.sql:1:8: undefined variable :nope; allowed: variables set earlier in the file by \\set, given with -D NAME=VALUE, or built in (client_id"),
        "{e}"
    );
    let mix = one("\\set a 1\n\\set b :a + 1\nSELECT :b").unwrap();
    assert_eq!(mix.vars, ["client_id", "a", "b"]);
}

/// A statement is its text between parameters, each run of text one piece (what a backend's
/// SQL is written from), and each distinct parameter one slot however often it appears.
#[test]
fn a_statement_is_runs_of_text_between_its_parameters() {
    let mix = one("\\set a 1\nSELECT :a + 1, 'it''s :a' /* c */ FROM t\nWHERE id = :a").unwrap();
    let s = mix.scripts[0].statements().next().unwrap();
    assert_eq!(
        s.pieces,
        [
            Piece::Text("SELECT ".into()),
            Piece::Param(0),
            Piece::Text(" + 1, 'it''s :a'   FROM t\nWHERE id = ".into()),
            Piece::Param(0),
        ]
    );
    assert_eq!(s.params, [1]);
    assert_eq!(s.text, "SELECT :a + 1, 'it''s :a' FROM t WHERE id = :a");
}

/// A parameter is `:` and a name (letters, digits, `_`, not a digit first): `:_x` is one;
/// `:1` or a bare `:` is not a name, and is refused as SQLite's other parameter forms are (SQLite
/// would take `:1` for a parameter of its own and bind it NULL). `::` is a cast, and a `]`
/// closes a bracketed name at once (SQLite has no escape inside brackets).
#[test]
fn a_parameter_is_a_colon_and_a_name() {
    let mix = one("\\set _x 1\nSELECT :_x, CAST(1 AS TEXT)::text").unwrap();
    let s = mix.scripts[0].statements().next().unwrap();
    assert_eq!(s.params, [1]);
    assert_eq!(mix.vars, ["client_id", "_x"]);
    for (sql, found) in [
        ("SELECT :1", ":1"),
        ("SELECT 1 : 2", ":"),
        ("SELECT ?1", "?1"),
    ] {
        let e = one(sql).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "t.sql:1:{}: the parameter {found}; allowed: :name, bound from a \\set or -D variable",
                sql.find(&found[..1]).unwrap() + 1
            ),
            "{sql}"
        );
    }
    let mix = one("SELECT 1 AS [a]]; SELECT 2").unwrap();
    let texts: Vec<&str> = mix.scripts[0]
        .statements()
        .map(|s| s.text.as_str())
        .collect();
    assert_eq!(texts, ["SELECT 1 AS [a]]", "SELECT 2"]);
}

/// A statement longer than a runner's event line can carry is refused when the script is read,
/// at its `file:line`, not measured and lost when its report cannot be sent; so is a mix whose
/// statements together are too long.
#[test]
fn a_statement_too_long_for_the_runner_s_report_is_refused_where_it_is() {
    let long = format!("SELECT 1;\nSELECT '{}';\n", "x".repeat(MAX_STATEMENT_BYTES));
    let e = one(&long).unwrap_err().to_string();
    assert!(e.starts_with("t.sql:2:1: "), "{e}");
    assert!(
        e.contains("a statement of 1048585 bytes") && e.contains("at most 1 MiB"),
        "{e}"
    );
    // Just within: read.
    let fits = format!("SELECT '{}';", "x".repeat(MAX_STATEMENT_BYTES - 11));
    assert!(one(&fits).is_ok());
    let half = format!("SELECT '{}';\n", "y".repeat(MAX_STATEMENT_BYTES - 100));
    let e = one(&format!("{half}{half}{half}")).unwrap_err().to_string();
    assert!(
        e.starts_with("t.sql:3:1: ") && e.contains("more than 2 MiB in all"),
        "{e}"
    );
}
