//! What every backend of `crud_overhead` replays: the seeded operation sequence, the SQL in
//! both dialects, the reference model that says what each operation must affect or return,
//! and the driver that times one pass of a bench on any backend implementing [`Crud`].
//! Compiled without SQLite so that the sqlx harness replays exactly the same thing.

use std::collections::BTreeMap;
use std::time::Instant;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::error::BenchError;
use crate::measure::Iteration;
use crate::measure::stats::LatencyHistogram;
use crate::measure::trace::ns_between;

/// The table every backend creates (and drops again).
pub const TABLE: &str = "benchscope_crud";

/// An operation of the table, each measured as its own bench per backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    Create,
    Begin,
    Insert,
    Update,
    Delete,
    Select,
    Commit,
    SelectCached,
    /// The fixed queries prepared anew every time: a SELECT's first run.
    SelectFirst,
}

impl Op {
    pub const ALL: [Op; 9] = [
        Op::Create,
        Op::Begin,
        Op::Insert,
        Op::Update,
        Op::Delete,
        Op::Select,
        Op::Commit,
        Op::SelectCached,
        Op::SelectFirst,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Op::Create => "create",
            Op::Begin => "begin",
            Op::Insert => "insert",
            Op::Update => "update",
            Op::Delete => "delete",
            Op::Select => "select",
            Op::Commit => "commit",
            Op::SelectCached => "select_cached",
            Op::SelectFirst => "select_first",
        }
    }

    /// What one operation is, as the catalog says it.
    pub fn about(self) -> &'static str {
        match self {
            Op::Create => "CREATE TABLE of the 5-column table (once per pass, after a DROP)",
            Op::Begin => {
                "BEGIN of a transaction of the mix (a pooled backend checks a connection out first)"
            }
            Op::Insert => "INSERT of one row with its id (20-char text, int, real, bool)",
            Op::Update => "UPDATE of one row's text by id",
            Op::Delete => "DELETE of one row by id",
            Op::Select => "SELECT of every row with int_col above a drawn value, every row fetched",
            Op::Commit => {
                "COMMIT of a transaction of the mix (a pooled backend gives its connection back)"
            }
            Op::SelectCached => {
                "one of five fixed queries (range, bool, COUNT LIKE, AVG BETWEEN, ORDER BY LIMIT 10) repeated"
            }
            Op::SelectFirst => {
                "one of the same five fixed queries, prepared anew every time (no statement cache): a SELECT's first run, against select_cached's cached runs"
            }
        }
    }

    fn index(self) -> usize {
        Op::ALL.iter().position(|o| *o == self).expect("in ALL")
    }
}

/// Rows per statement of the batch-insert sweep.
pub const BATCHES: [u64; 6] = [1, 10, 50, 100, 500, 1000];

/// What a bench of the target runs, as its catalog `variant` encodes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Case {
    /// One operation of the mix (or the fixed queries).
    Op(Op),
    /// The sweep's rows as multi-row INSERTs of this many rows, each its own transaction.
    Batch(u64),
    /// The sweep's rows as prepared single-row INSERTs in one transaction (the reference).
    Prepared,
}

impl Case {
    pub fn variant(self) -> u16 {
        match self {
            Case::Op(op) => op.index() as u16,
            Case::Batch(n) => 100 + BATCHES.iter().position(|b| *b == n).unwrap_or(0) as u16,
            Case::Prepared => 200,
        }
    }

    pub fn from_variant(v: u16) -> Option<Case> {
        match v {
            0..100 => Op::ALL.get(v as usize).map(|o| Case::Op(*o)),
            200 => Some(Case::Prepared),
            _ => BATCHES.get((v - 100) as usize).map(|n| Case::Batch(*n)),
        }
    }

    /// The prefix of its bench names.
    pub fn name(self) -> String {
        match self {
            Case::Op(op) => op.name().to_string(),
            Case::Batch(n) => format!("batch_{n}"),
            Case::Prepared => "prepared".to_string(),
        }
    }
}

/// One row of the table.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub id: i64,
    pub text: String,
    pub int: i64,
    pub real: f64,
    pub flag: bool,
}

/// One step of the replayed sequence.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Begin,
    Insert(Row),
    Update { id: i64, text: String },
    Delete { id: i64 },
    Select { above: i64 },
    Commit,
}

impl Step {
    pub fn op(&self) -> Op {
        match self {
            Step::Begin => Op::Begin,
            Step::Insert(_) => Op::Insert,
            Step::Update { .. } => Op::Update,
            Step::Delete { .. } => Op::Delete,
            Step::Select { .. } => Op::Select,
            Step::Commit => Op::Commit,
        }
    }
}

fn text(rng: &mut ChaCha8Rng) -> String {
    (0..20)
        .map(|_| rng.random_range(b'a'..=b'z') as char)
        .collect()
}

fn row(rng: &mut ChaCha8Rng, id: i64) -> Row {
    Row {
        id,
        text: text(rng),
        int: rng.random_range(1..=10_000),
        // Two decimals: the same value in every engine's REAL / DOUBLE PRECISION.
        real: rng.random_range(0..100_000) as f64 / 100.0,
        flag: rng.random_bool(0.5),
    }
}

/// The mix of `ops` operations from `seed`: 40% INSERT, 25% UPDATE, 15% DELETE, 20% SELECT
/// (an UPDATE or DELETE with no row left to touch becomes an INSERT), wrapped in transactions
/// of `batch` operations. Updates and deletes pick a row that exists, so every one affects a
/// row on every backend; ids are given, never drawn from a sequence, so PostgreSQL's serial
/// and SQLite's rowid cannot disagree.
pub fn steps(ops: u64, batch: u64, seed: u64) -> Vec<Step> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut live: Vec<i64> = Vec::new();
    let mut next_id = 1;
    let mut out = vec![Step::Begin];
    for i in 0..ops {
        if i > 0 && i % batch.max(1) == 0 {
            out.push(Step::Commit);
            out.push(Step::Begin);
        }
        let draw = rng.random_range(0..100);
        let step = match draw {
            40..65 if !live.is_empty() => {
                let id = live[rng.random_range(0..live.len())];
                Step::Update {
                    id,
                    text: text(&mut rng),
                }
            }
            65..80 if !live.is_empty() => {
                let id = live.swap_remove(rng.random_range(0..live.len()));
                Step::Delete { id }
            }
            80.. => Step::Select {
                above: rng.random_range(1..=10_000),
            },
            _ => {
                live.push(next_id);
                next_id += 1;
                Step::Insert(row(&mut rng, next_id - 1))
            }
        };
        out.push(step);
    }
    out.push(Step::Commit);
    out
}

/// The batch sweep's `n` rows, ids 1..=n.
pub fn sweep_rows(n: u64, seed: u64) -> Vec<Row> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xBA7C);
    (1..=n as i64).map(|id| row(&mut rng, id)).collect()
}

/// How many times each fixed query runs per pass of `select_cached`.
pub const CACHED_REPEATS: u64 = 20;
/// The fixed queries of `select_cached`.
pub const CACHED: usize = 5;

/// The SQL dialect of a backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

/// What a query returns: rows of the table, or a count.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    Rows(Vec<Row>),
    Count(i64),
}

impl Answer {
    /// What the work check folds: rows plus the sum of their ids, or the count.
    pub fn work(&self) -> u64 {
        match self {
            Answer::Rows(rows) => rows_work(rows),
            Answer::Count(n) => *n as u64,
        }
    }
}

/// Rows plus the sum of their ids: a backend that drops or invents a row fails the check.
pub fn rows_work(rows: &[Row]) -> u64 {
    rows.iter().map(|r| 1 + r.id as u64).sum()
}

/// Every statement of the workload in one dialect, the batch INSERTs included.
#[derive(Debug, Clone)]
pub struct Sql {
    pub dialect: Dialect,
    pub create: String,
    pub drop: String,
    pub insert: String,
    pub update: String,
    pub delete: String,
    pub select: String,
    /// The fixed queries, and whether each returns a count (else rows).
    pub cached: [(String, bool); CACHED],
    /// Multi-row INSERTs by rows per statement.
    batch: BTreeMap<usize, String>,
}

const COLUMNS: &str = "id, text_col, int_col, real_col, bool_col";

impl Sql {
    pub fn new(dialect: Dialect) -> Sql {
        let (types, truth) = match dialect {
            Dialect::Sqlite => (
                "id INTEGER PRIMARY KEY, text_col TEXT NOT NULL, int_col INTEGER NOT NULL, real_col REAL NOT NULL, bool_col INTEGER NOT NULL",
                "1",
            ),
            Dialect::Postgres => (
                "id BIGSERIAL PRIMARY KEY, text_col TEXT NOT NULL, int_col BIGINT NOT NULL, real_col DOUBLE PRECISION NOT NULL, bool_col BOOLEAN NOT NULL",
                "TRUE",
            ),
        };
        let p = |i: usize| match dialect {
            Dialect::Sqlite => "?".to_string(),
            Dialect::Postgres => format!("${i}"),
        };
        let rows_of = |cond: &str| format!("SELECT {COLUMNS} FROM {TABLE} {cond}");
        Sql {
            dialect,
            create: format!("CREATE TABLE {TABLE} ({types})"),
            drop: format!("DROP TABLE IF EXISTS {TABLE}"),
            insert: Self::values(dialect, 1),
            update: format!("UPDATE {TABLE} SET text_col = {} WHERE id = {}", p(1), p(2)),
            delete: format!("DELETE FROM {TABLE} WHERE id = {}", p(1)),
            select: rows_of(&format!("WHERE int_col > {}", p(1))),
            cached: [
                (rows_of("WHERE int_col BETWEEN 4000 AND 4500"), false),
                (rows_of(&format!("WHERE bool_col = {truth}")), false),
                (
                    format!("SELECT COUNT(*) FROM {TABLE} WHERE text_col LIKE 'a%'"),
                    true,
                ),
                (
                    format!(
                        "SELECT AVG(real_col), COUNT(*) FROM {TABLE} WHERE int_col BETWEEN 2000 AND 4000"
                    ),
                    true,
                ),
                (rows_of("ORDER BY real_col DESC, id LIMIT 10"), false),
            ],
            batch: BTreeMap::new(),
        }
    }

    /// One INSERT of `n` rows' values.
    fn values(dialect: Dialect, n: usize) -> String {
        let mut s = format!("INSERT INTO {TABLE} ({COLUMNS}) VALUES ");
        for r in 0..n {
            if r > 0 {
                s.push_str(", ");
            }
            match dialect {
                Dialect::Sqlite => s.push_str("(?, ?, ?, ?, ?)"),
                Dialect::Postgres => {
                    let b = r * 5;
                    s.push_str(&format!(
                        "(${}, ${}, ${}, ${}, ${})",
                        b + 1,
                        b + 2,
                        b + 3,
                        b + 4,
                        b + 5
                    ));
                }
            }
        }
        s
    }

    /// The statements a bench of `case` uses, its batch INSERTs for the sweep's `rows` ready.
    pub fn for_case(dialect: Dialect, case: Case, rows: usize) -> Sql {
        let batch = match case {
            Case::Batch(n) => n as usize,
            _ => 1,
        };
        Sql::new(dialect).with_batch(rows, batch)
    }

    /// The same, with the multi-row INSERTs for chunks of `batch` rows out of `rows` ready.
    pub fn with_batch(mut self, rows: usize, batch: usize) -> Sql {
        for n in [batch.min(rows), rows % batch.max(1)] {
            if n > 0 {
                self.batch
                    .entry(n)
                    .or_insert_with(|| Self::values(self.dialect, n));
            }
        }
        self
    }

    /// The INSERT of `n` rows, if [`Sql::with_batch`] made it.
    pub fn try_batch(&self, n: usize) -> Option<&str> {
        self.batch.get(&n).map(String::as_str)
    }

    /// The INSERT of `n` rows (made by [`Sql::with_batch`]).
    pub fn batch(&self, n: usize) -> &str {
        self.batch
            .get(&n)
            .map(String::as_str)
            .expect("batch statements are made before a pass")
    }
}

/// A backend that can replay the workload. Every method executes its statement and fetches
/// and decodes every row it returns; the driver times each call.
#[allow(async_fn_in_trait)]
pub trait Crud {
    /// Drops the table if it exists.
    async fn drop_table(&mut self, sql: &Sql) -> Result<(), BenchError>;
    async fn create_table(&mut self, sql: &Sql) -> Result<(), BenchError>;
    async fn begin(&mut self) -> Result<(), BenchError>;
    async fn commit(&mut self) -> Result<(), BenchError>;
    /// Rows affected.
    async fn insert(&mut self, sql: &Sql, row: &Row) -> Result<u64, BenchError>;
    async fn update(&mut self, sql: &Sql, id: i64, text: &str) -> Result<u64, BenchError>;
    async fn delete(&mut self, sql: &Sql, id: i64) -> Result<u64, BenchError>;
    async fn select(&mut self, sql: &Sql, above: i64) -> Result<Vec<Row>, BenchError>;
    /// Fixed query `q` of [`Sql::cached`], from the statement cache, or (`fresh`) prepared
    /// anew, the cache left out.
    async fn cached(&mut self, sql: &Sql, q: usize, fresh: bool) -> Result<Answer, BenchError>;
    /// One multi-row INSERT of `rows` outside any transaction; rows affected.
    async fn insert_values(&mut self, sql: &Sql, rows: &[Row]) -> Result<u64, BenchError>;
}

/// What one step does on any backend: its work (rows affected, or rows and ids read).
async fn run_step<C: Crud>(c: &mut C, sql: &Sql, step: &Step) -> Result<u64, BenchError> {
    Ok(match step {
        Step::Begin => c.begin().await.map(|_| 1)?,
        Step::Commit => c.commit().await.map(|_| 1)?,
        Step::Insert(r) => c.insert(sql, r).await?,
        Step::Update { id, text } => c.update(sql, *id, text).await?,
        Step::Delete { id } => c.delete(sql, *id).await?,
        Step::Select { above } => rows_work(&c.select(sql, *above).await?),
    })
}

/// A fresh, empty table.
pub async fn reset<C: Crud>(c: &mut C, sql: &Sql) -> Result<(), BenchError> {
    c.drop_table(sql).await?;
    c.create_table(sql).await
}

/// Replays the whole mix untimed: the table `select_cached` queries.
pub async fn fill<C: Crud>(c: &mut C, sql: &Sql, steps: &[Step]) -> Result<(), BenchError> {
    reset(c, sql).await?;
    for s in steps {
        run_step(c, sql, s).await?;
    }
    Ok(())
}

/// One pass of a bench: the table made fresh (untimed), then the case's operations, each
/// timed on its own (one latency each into `hist`); the pass's time is the sum of those.
/// `select_cached` expects a table [`fill`]ed before its first pass and leaves it alone.
pub async fn pass<C: Crud>(
    c: &mut C,
    sql: &Sql,
    case: Case,
    steps: &[Step],
    sweep: &[Row],
    hist: &mut LatencyHistogram,
) -> Result<Iteration, BenchError> {
    let (mut elapsed, mut work) = (0u64, 0u64);
    let lap = |start: Instant, hist: &mut LatencyHistogram| {
        let ns = ns_between(start, Instant::now());
        hist.record(ns);
        ns
    };
    match case {
        Case::Op(Op::Create) => {
            c.drop_table(sql).await?;
            let start = Instant::now();
            c.create_table(sql).await?;
            elapsed += lap(start, hist);
            work = 1;
        }
        Case::Op(op @ (Op::SelectCached | Op::SelectFirst)) => {
            for _ in 0..CACHED_REPEATS {
                for q in 0..CACHED {
                    let start = Instant::now();
                    let answer = c.cached(sql, q, op == Op::SelectFirst).await?;
                    elapsed += lap(start, hist);
                    work += answer.work();
                }
            }
        }
        Case::Op(op) => {
            reset(c, sql).await?;
            for s in steps {
                if s.op() == op {
                    let start = Instant::now();
                    let w = run_step(c, sql, s).await?;
                    elapsed += lap(start, hist);
                    work += w;
                } else {
                    run_step(c, sql, s).await?;
                }
            }
        }
        Case::Batch(n) => {
            reset(c, sql).await?;
            let start = Instant::now();
            for chunk in sweep.chunks(n as usize) {
                work += c.insert_values(sql, chunk).await?;
            }
            elapsed = ns_between(start, Instant::now());
        }
        Case::Prepared => {
            reset(c, sql).await?;
            let start = Instant::now();
            c.begin().await?;
            for r in sweep {
                work += c.insert(sql, r).await?;
            }
            c.commit().await?;
            elapsed = ns_between(start, Instant::now());
        }
    }
    Ok(Iteration::new(elapsed, work))
}

/// What a correct backend's pass of `case` does, from a model of the table: operations per
/// pass and the work check's sum. Every backend, rusqlite included, must match it.
pub fn expected(case: Case, steps: &[Step], sweep: &[Row]) -> (u64, u64) {
    match case {
        Case::Op(Op::Create) => (1, 1),
        Case::Op(Op::SelectCached | Op::SelectFirst) => {
            let table = model(steps);
            let work: u64 = (0..CACHED).map(|q| cached_answer(&table, q).work()).sum();
            (CACHED as u64 * CACHED_REPEATS, work * CACHED_REPEATS)
        }
        Case::Op(op) => {
            let mut table = BTreeMap::new();
            let (mut n, mut work) = (0, 0);
            for s in steps {
                let w = model_step(&mut table, s);
                if s.op() == op {
                    n += 1;
                    work += w;
                }
            }
            (n, work)
        }
        Case::Batch(_) | Case::Prepared => (sweep.len() as u64, sweep.len() as u64),
    }
}

fn model_step(table: &mut BTreeMap<i64, Row>, s: &Step) -> u64 {
    match s {
        Step::Begin | Step::Commit => 1,
        Step::Insert(r) => u64::from(table.insert(r.id, r.clone()).is_none()),
        Step::Update { id, text } => match table.get_mut(id) {
            Some(r) => {
                r.text = text.clone();
                1
            }
            None => 0,
        },
        Step::Delete { id } => u64::from(table.remove(id).is_some()),
        Step::Select { above } => {
            let rows: Vec<Row> = table.values().filter(|r| r.int > *above).cloned().collect();
            rows_work(&rows)
        }
    }
}

/// The table after the whole mix.
pub fn model(steps: &[Step]) -> BTreeMap<i64, Row> {
    let mut table = BTreeMap::new();
    for s in steps {
        model_step(&mut table, s);
    }
    table
}

/// What fixed query `q` returns on `table`, as [`Sql::cached`] words it.
pub fn cached_answer(table: &BTreeMap<i64, Row>, q: usize) -> Answer {
    let rows =
        |f: &dyn Fn(&Row) -> bool| Answer::Rows(table.values().filter(|r| f(r)).cloned().collect());
    match q {
        0 => rows(&|r| (4000..=4500).contains(&r.int)),
        1 => rows(&|r| r.flag),
        2 => Answer::Count(table.values().filter(|r| r.text.starts_with('a')).count() as i64),
        3 => Answer::Count(
            table
                .values()
                .filter(|r| (2000..=4000).contains(&r.int))
                .count() as i64,
        ),
        _ => {
            let mut all: Vec<Row> = table.values().cloned().collect();
            all.sort_by(|a, b| b.real.total_cmp(&a.real).then(a.id.cmp(&b.id)));
            all.truncate(10);
            Answer::Rows(all)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mix_is_fixed_by_its_seed_and_every_update_and_delete_finds_its_row() {
        let a = steps(2000, 100, 7);
        assert_eq!(a, steps(2000, 100, 7));
        assert_ne!(a, steps(2000, 100, 8));
        let count = |op: Op| a.iter().filter(|s| s.op() == op).count();
        assert_eq!(count(Op::Begin), 20);
        assert_eq!(count(Op::Commit), 20);
        let ops = count(Op::Insert) + count(Op::Update) + count(Op::Delete) + count(Op::Select);
        assert_eq!(ops, 2000);
        for op in [Op::Insert, Op::Update, Op::Delete, Op::Select] {
            assert!(count(op) > 200, "{op:?}: {}", count(op));
        }
        // Each update and delete affects exactly one row of the model.
        for op in [Op::Update, Op::Delete, Op::Insert] {
            assert_eq!(
                expected(Case::Op(op), &a, &[]),
                (count(op) as u64, count(op) as u64)
            );
        }
    }

    #[test]
    fn select_first_runs_where_a_cache_can_be_left_out_and_says_where_not() {
        let spec = super::super::spec();
        let skipped: Vec<&str> = spec
            .benches
            .iter()
            .filter(|b| super::super::first_skip(b).is_some())
            .map(|b| b.name)
            .collect();
        assert_eq!(
            skipped,
            [
                "select_first/postgres",
                "select_first/diesel",
                "select_first/sql-middleware/postgres"
            ]
        );
        let firsts = spec
            .benches
            .iter()
            .filter(|b| b.name.starts_with("select_first/"))
            .count();
        // rusqlite, 7 strategies, turso, sqlx on SQLite and PostgreSQL, 8 crates.
        assert_eq!(firsts, 19);
    }

    #[test]
    fn variants_round_trip() {
        let mut cases: Vec<Case> = Op::ALL.iter().map(|o| Case::Op(*o)).collect();
        cases.extend(BATCHES.iter().map(|n| Case::Batch(*n)));
        cases.push(Case::Prepared);
        for c in cases {
            assert_eq!(Case::from_variant(c.variant()), Some(c), "{c:?}");
        }
        assert_eq!(Case::from_variant(99), None);
        assert_eq!(Case::from_variant(150), None);
    }

    #[test]
    fn statements_in_both_dialects() {
        let s = Sql::new(Dialect::Sqlite).with_batch(25, 10);
        assert_eq!(
            s.batch(5),
            "INSERT INTO benchscope_crud (id, text_col, int_col, real_col, bool_col) VALUES (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?), (?, ?, ?, ?, ?)"
        );
        assert_eq!(s.batch(10).matches('(').count(), 11);
        let p = Sql::new(Dialect::Postgres).with_batch(1000, 1000);
        assert!(
            p.batch(1000)
                .ends_with("($4996, $4997, $4998, $4999, $5000)")
        );
        assert_eq!(
            p.update,
            "UPDATE benchscope_crud SET text_col = $1 WHERE id = $2"
        );
        assert!(p.cached[1].0.ends_with("bool_col = TRUE"));
        assert!(p.create.contains("BIGSERIAL"));
    }

    #[test]
    fn the_model_answers_the_fixed_queries() {
        let s = steps(500, 50, 3);
        let table = model(&s);
        assert!(!table.is_empty());
        let Answer::Rows(top) = cached_answer(&table, 4) else {
            panic!("rows")
        };
        assert_eq!(top.len(), 10.min(table.len()));
        assert!(top.windows(2).all(|w| w[0].real >= w[1].real));
        let (n, work) = expected(Case::Op(Op::SelectCached), &s, &[]);
        assert_eq!(n, 100);
        assert!(work > 0);
    }
}
