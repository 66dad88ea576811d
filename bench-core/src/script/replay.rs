//! A run of scripts as every backend replays them: each client's seeded stream of
//! transactions, busy errors retried or given up, what each statement and transaction took,
//! and the rows each backend returned, hashed and compared with the first bench's. No driver
//! here: a backend is an [`AsyncPath`] (or, for rusqlite's threads, a loop of its own over
//! [`Exec`]), so that a harness with another SQLite binding (sqlx's) runs the same replay.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::future::Future;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::error::BenchError;
use crate::measure::stats::LatencyHistogram;
use crate::measure::trace::ns_between;
use crate::measure::{Bench, IterFn, Iteration};
use crate::protocol::Event;
use crate::script::report::{KeptRows, RowsCheck, ScriptReport, StatementAcc};
use crate::script::{Client, Kind, Mix, Step, Value};

/// What the work check of a script bench counts.
pub const WORK: &str = "transactions finished or given up (on_busy=fail) in the sample";

/// Transactions per client whose results are kept to compare backends.
pub const COMPARED: usize = 1000;
/// A transaction run again this many times without getting through fails its bench.
const MAX_RETRIES: u32 = 10_000;

/// What the clients share while they run (threads of their own for rusqlite, tasks of the
/// bench's runtime for the async paths).
pub struct Exec {
    pub mix: Arc<Mix>,
    /// Each statement's SQL with numbered placeholders, by statement index.
    pub sql: Vec<Arc<str>>,
    pub retry: bool,
}

/// What one statement returned.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StmtOut {
    pub hash: u64,
    pub rows: u64,
    pub changed: u64,
}

impl StmtOut {
    /// What a BEGIN, COMMIT or ROLLBACK returns: no rows, nothing changed (hashed as every
    /// backend hashes it).
    pub fn control() -> StmtOut {
        let mut d = crate::script::digest::Digest::default();
        d.statement(0);
        StmtOut {
            hash: d.finish(),
            rows: 0,
            changed: 0,
        }
    }
}

/// What one transaction returned, statement by statement.
#[derive(Debug, Clone, PartialEq)]
pub struct TxResult {
    script: usize,
    statements: Vec<(usize, StmtOut)>,
}

/// One client's running figures.
pub struct ClientAcc {
    statements: Vec<StatementAcc>,
    transactions: u64,
    tx_sum_ns: u64,
    failed: u64,
    busy: u64,
    retries: u64,
    kept: Vec<TxResult>,
    /// Transaction latencies of the current sample.
    latencies: LatencyHistogram,
    /// Transactions finished or given up in the current sample.
    in_sample: u64,
}

impl ClientAcc {
    pub fn new(statements: usize) -> Self {
        ClientAcc {
            statements: (0..statements)
                .map(|_| StatementAcc::for_mix(statements))
                .collect(),
            transactions: 0,
            tx_sum_ns: 0,
            failed: 0,
            busy: 0,
            retries: 0,
            kept: Vec::new(),
            latencies: LatencyHistogram::new(),
            in_sample: 0,
        }
    }

    /// A transaction that got through: its statements' figures and results.
    pub fn finished(&mut self, script: usize, done: Vec<(usize, u64, StmtOut)>, ns: u64) {
        for (i, ns, out) in &done {
            self.statements[*i].record(*ns, out.rows);
        }
        self.transactions += 1;
        self.tx_sum_ns += ns;
        self.in_sample += 1;
        self.latencies.record(ns);
        if self.kept.len() < COMPARED {
            self.kept.push(TxResult {
                script,
                statements: done.into_iter().map(|(i, _, o)| (i, o)).collect(),
            });
        }
    }
}

pub struct Acc {
    pub clients: Vec<ClientAcc>,
    /// Statements this bench's backend does not run, each with its place and why.
    pub skipped: Vec<String>,
}

/// The transactions each client runs in one sample: `per_pass` shared out, the first
/// clients taking one more when it does not divide.
pub fn shares(per_pass: u64, clients: usize) -> Vec<u64> {
    let c = clients as u64;
    (0..c)
        .map(|i| per_pass / c + u64::from(i < per_pass % c))
        .collect()
}

/// Why a statement failed, as a driver says it.
pub enum StmtError {
    /// SQLITE_BUSY or SQLITE_LOCKED (or the driver's own busy): the transaction is tried
    /// again after a backoff, or given up, as `on_busy` says.
    Busy,
    Other(String),
}

/// What a statement gives an async path: its figures, or why it failed (`Ok(Err(..))`, the
/// transaction's business), or a failure of the path itself (`Err`, the bench's).
pub type Outcome = Result<Result<StmtOut, StmtError>, BenchError>;

/// How an async backend runs one client's transactions: the connection a transaction runs
/// on, a statement on it, and a rollback after a failure. Each client is a task of the
/// bench's runtime, so the futures are `Send`.
pub trait AsyncPath: Send + Sync + 'static {
    type Conn: Send;
    fn checkout(
        &self,
        client: usize,
    ) -> impl Future<Output = Result<Self::Conn, BenchError>> + Send;
    /// Runs statement `index` of the mix (`sql` is its SQLite text).
    fn exec(
        &self,
        conn: &mut Self::Conn,
        index: usize,
        sql: Arc<str>,
        kind: Kind,
        params: Vec<Value>,
    ) -> impl Future<Output = Outcome> + Send;
    /// Whether statement `index` runs on this path (PostgreSQL skips what it cannot prepare).
    fn runs(&self, _index: usize) -> bool {
        true
    }
    fn rollback(
        &self,
        conn: &mut Self::Conn,
    ) -> impl Future<Output = Result<(), BenchError>> + Send;
}

pub fn describe(mix: &Mix, index: usize, e: impl std::fmt::Display) -> String {
    let (script, s) = mix.statement(index);
    format!("{}: {e}", script.place(s.at))
}

impl Exec {
    /// What the clients of `mix` share: each statement's SQLite text with numbered
    /// placeholders, and whether a busy transaction is retried (`on_busy=retry`).
    pub fn new(mix: Mix, retry: bool) -> Exec {
        let sql = mix
            .statements()
            .map(|s| Arc::<str>::from(s.sql(crate::script::Placeholders::Numbered)))
            .collect();
        Exec {
            mix: Arc::new(mix),
            sql,
            retry,
        }
    }

    /// After a failed attempt: the backoff before the next, or None when the transaction is
    /// given up (counted) or the bench must fail.
    pub fn after_failure(
        &self,
        f: StmtError,
        acc: &mut ClientAcc,
        attempts: &mut u32,
    ) -> Result<Option<Duration>, BenchError> {
        match f {
            StmtError::Other(m) => Err(BenchError::Invalid(m)),
            StmtError::Busy => {
                acc.busy += 1;
                if !self.retry {
                    acc.failed += 1;
                    acc.in_sample += 1;
                    return Ok(None);
                }
                *attempts += 1;
                if *attempts > MAX_RETRIES {
                    return Err(BenchError::Invalid(format!(
                        "a transaction met SQLITE_BUSY {MAX_RETRIES} times in a row; give up with on_busy=fail, or lower clients"
                    )));
                }
                acc.retries += 1;
                Ok(Some(Duration::from_micros(
                    (50u64 << (*attempts).min(8)).min(10_000),
                )))
            }
        }
    }

    /// A statement's outcome, started at `t0`: its figures kept, or why the attempt ends
    /// (another error than busy named by the statement's place).
    pub fn took(
        &self,
        index: usize,
        t0: Instant,
        r: Result<StmtOut, StmtError>,
        done: &mut Vec<(usize, u64, StmtOut)>,
    ) -> Result<(), StmtError> {
        match r {
            Ok(out) => {
                done.push((index, ns_between(t0, Instant::now()), out));
                Ok(())
            }
            Err(StmtError::Other(e)) => Err(StmtError::Other(describe(&self.mix, index, e))),
            Err(busy) => Err(busy),
        }
    }
}

/// One client's share of a sample through an async path, as a task of its own: a checkout
/// per transaction, a dispatch per statement. Gives back what it was lent.
async fn client_async<P: AsyncPath>(
    exec: Arc<Exec>,
    path: Arc<P>,
    id: usize,
    mut client: Client,
    mut acc: ClientAcc,
    n: u64,
) -> (Client, ClientAcc, Result<(), BenchError>) {
    let r = exec
        .transactions_async(&*path, id, &mut client, &mut acc, n)
        .await;
    (client, acc, r)
}

impl Exec {
    async fn transactions_async<P: AsyncPath>(
        &self,
        path: &P,
        id: usize,
        client: &mut Client,
        acc: &mut ClientAcc,
        n: u64,
    ) -> Result<(), BenchError> {
        let mut steps = Vec::new();
        for _ in 0..n {
            let script = client.next(&mut steps).map_err(BenchError::Invalid)?;
            let mut attempts = 0;
            loop {
                let start = Instant::now();
                let mut conn = path.checkout(id).await?;
                let mut done = Vec::with_capacity(steps.len());
                let mut failed = None;
                for step in &steps {
                    match step {
                        Step::Sleep(d) => tokio::time::sleep(*d).await,
                        Step::Sql(s, _) if !path.runs(s.index) => {}
                        Step::Sql(s, v) => {
                            let t0 = Instant::now();
                            let r = path
                                .exec(
                                    &mut conn,
                                    s.index,
                                    self.sql[s.index].clone(),
                                    s.kind,
                                    v.clone(),
                                )
                                .await?;
                            if let Err(f) = self.took(s.index, t0, r, &mut done) {
                                failed = Some(f);
                                break;
                            }
                        }
                    }
                }
                let Some(f) = failed else {
                    drop(conn);
                    acc.finished(script, done, ns_between(start, Instant::now()));
                    break;
                };
                path.rollback(&mut conn).await?;
                drop(conn);
                match self.after_failure(f, acc, &mut attempts)? {
                    Some(wait) => tokio::time::sleep(wait).await,
                    None => break,
                }
            }
        }
        Ok(())
    }
}

/// After a sample: its transaction latencies into the run's histogram; the transactions it
/// finished or gave up, for the work check.
pub fn sample_done(a: &mut Acc, hist: &mut LatencyHistogram) -> u64 {
    let mut work = 0;
    for c in &mut a.clients {
        hist.add(&c.latencies);
        c.latencies = LatencyHistogram::new();
        work += std::mem::take(&mut c.in_sample);
    }
    work
}

/// The replay one run of the script target shares between its benches.
pub struct Replay {
    pub exec: Arc<Exec>,
    pub clients: usize,
    /// Transactions in one sample, shared out among the clients.
    pub per_pass: u64,
    pub seed: u64,
    /// Each bench's figures, filled while it runs and reported when it ends.
    states: RefCell<BTreeMap<String, Rc<RefCell<Acc>>>>,
    /// The first bench reported: the others' results are compared with its.
    reference: RefCell<Option<(String, Vec<Vec<TxResult>>)>>,
}

impl Replay {
    pub fn new(exec: Exec, clients: usize, per_pass: u64, seed: u64) -> Replay {
        Replay {
            exec: Arc::new(exec),
            clients,
            per_pass,
            seed,
            states: RefCell::new(BTreeMap::new()),
            reference: RefCell::new(None),
        }
    }

    /// The figures of bench `name` so far.
    pub fn acc(&self, name: &str) -> Option<Rc<RefCell<Acc>>> {
        self.states.borrow().get(name).cloned()
    }

    pub fn new_acc(&self, bench: &str) -> Rc<RefCell<Acc>> {
        let n = self.exec.sql.len();
        let acc = Rc::new(RefCell::new(Acc {
            clients: (0..self.clients).map(|_| ClientAcc::new(n)).collect(),
            skipped: Vec::new(),
        }));
        self.states
            .borrow_mut()
            .insert(bench.to_string(), acc.clone());
        acc
    }
    /// Each client's replay of the mix, seeded by the run's seed and its id.
    pub fn clients_of_run(&self) -> Vec<Client> {
        (0..self.clients)
            .map(|i| Client::new(self.exec.mix.clone(), self.seed, i as u64))
            .collect()
    }

    /// A bench of an async path: each client a task of the bench's runtime (spawned per
    /// sample, so that clients run on the runtime's worker threads as request handlers do).
    pub fn async_bench<'a, P: AsyncPath>(
        &'a self,
        rt: &'a tokio::runtime::Runtime,
        name: &str,
        path: P,
        settings: BTreeMap<String, String>,
    ) -> Result<Bench<'a>, BenchError> {
        let path = Arc::new(path);
        let mut clients = self.clients_of_run();
        let acc = self.new_acc(name);
        let shares = shares(self.per_pass, self.clients);
        let iter: IterFn<'_> = Box::new(move |hist| {
            let mut a = acc.borrow_mut();
            let lent = std::mem::take(&mut a.clients);
            let start = Instant::now();
            let back = rt.block_on(async {
                let tasks: Vec<_> = std::mem::take(&mut clients)
                    .into_iter()
                    .zip(lent)
                    .zip(shares.iter())
                    .enumerate()
                    .map(|(id, ((cl, ac), n))| {
                        tokio::spawn(client_async(
                            self.exec.clone(),
                            path.clone(),
                            id,
                            cl,
                            ac,
                            *n,
                        ))
                    })
                    .collect();
                let mut back = Vec::with_capacity(tasks.len());
                for t in tasks {
                    back.push(t.await);
                }
                back
            });
            let elapsed = ns_between(start, Instant::now());
            let mut first_error = None;
            for joined in back {
                let (cl, ac, r) =
                    joined.map_err(|e| BenchError::Other(format!("a client task failed: {e}")))?;
                clients.push(cl);
                a.clients.push(ac);
                if let Err(e) = r {
                    first_error.get_or_insert(e);
                }
            }
            if let Some(e) = first_error {
                return Err(e);
            }
            Ok(Iteration::new(elapsed, sample_done(&mut a, hist)))
        });
        Ok(Bench::new(iter, self.per_pass, WORK).with_settings(settings))
    }

    fn compare(&self, name: &str, acc: &Acc) -> RowsCheck {
        let failed: u64 = acc.clients.iter().map(|c| c.failed).sum();
        let mix = &self.exec.mix;
        if !acc.skipped.is_empty() {
            return RowsCheck::NotCompared {
                reason: format!("statements skipped here: {}", acc.skipped.join("; ")),
            };
        }
        if !mix.read_only() && self.clients > 1 {
            return RowsCheck::NotCompared {
                reason: format!(
                    "{} clients write: the order their transactions reach the database differs from one backend to the next",
                    self.clients
                ),
            };
        }
        if !mix.read_only() && failed > 0 {
            return RowsCheck::NotCompared {
                reason: format!(
                    "{failed} transactions were given up (on_busy=fail), so the rows that followed differ"
                ),
            };
        }
        let mine: Vec<Vec<TxResult>> = acc.clients.iter().map(|c| c.kept.clone()).collect();
        let mut reference = self.reference.borrow_mut();
        let Some((against, theirs)) = reference.as_ref() else {
            let n = mine.iter().map(|k| k.len() as u64).sum();
            *reference = Some((name.to_string(), mine));
            return RowsCheck::Reference { transactions: n };
        };
        let mut compared = 0u64;
        for (client, (a, b)) in mine.iter().zip(theirs).enumerate() {
            for (t, (x, y)) in a.iter().zip(b).enumerate() {
                if x != y {
                    return RowsCheck::Differ {
                        against: against.clone(),
                        first: self.difference(client, t, x, y, against),
                    };
                }
                compared += 1;
            }
        }
        RowsCheck::Same {
            against: against.clone(),
            transactions: compared,
        }
    }

    fn difference(
        &self,
        client: usize,
        t: usize,
        x: &TxResult,
        y: &TxResult,
        against: &str,
    ) -> String {
        let mix = &self.exec.mix;
        let script = &mix.scripts[x.script];
        let head = format!("client {client}, transaction {} ({})", t + 1, script.name);
        if x.script != y.script {
            return format!("{head}: {against} ran {} there", mix.scripts[y.script].name);
        }
        for ((i, a), (_, b)) in x.statements.iter().zip(&y.statements) {
            if a != b {
                let (_, s) = mix.statement(*i);
                return format!(
                    "{head}, {}:{} `{}`: {} rows, {} changed; {against}: {} rows, {} changed{}",
                    script.name,
                    s.at.line,
                    s.text,
                    a.rows,
                    a.changed,
                    b.rows,
                    b.changed,
                    if a.rows == b.rows && a.changed == b.changed {
                        " (other values)"
                    } else {
                        ""
                    }
                );
            }
        }
        format!(
            "{head}: {} statements ran; {against}: {}",
            x.statements.len(),
            y.statements.len()
        )
    }
    /// What bench `bench` reports when it ends: its script report (the rows compared with
    /// the first bench reported), and an error when they differ. `db` and `sha256` name the
    /// database the scripts ran on a copy of: it is read again here, and an error says so if
    /// its bytes are not what they were before the run.
    pub fn report(&self, bench: &str, db: &std::path::Path, sha256: &str) -> Vec<Event> {
        let after = crate::script::original::sha256(db, "--db");
        let changed = match after {
            Ok(a) if a == sha256 => None,
            Ok(a) => Some(format!(
                "the database {} is not what it was before the run (sha256 {sha256} then, {a} now): another process wrote it meanwhile",
                db.display()
            )),
            Err(e) => Some(format!(
                "the database {} cannot be read again after the run: {e}",
                db.display()
            )),
        };
        let db = &db.display().to_string();
        let Some(shared) = self.states.borrow().get(bench).cloned() else {
            return Vec::new();
        };
        let acc = shared.borrow();
        let merged = |i: usize| {
            let mut m = StatementAcc::for_mix(self.exec.sql.len());
            for s in acc.clients.iter().filter_map(|c| c.statements.get(i)) {
                m.add(s);
            }
            m
        };
        let sum = |f: fn(&ClientAcc) -> u64| acc.clients.iter().map(f).sum::<u64>();
        let rows = self.compare(bench, &acc);
        let differ = match &rows {
            RowsCheck::Differ { against, first } => Some(Event::Error {
                bench: Some(bench.to_string()),
                message: format!("returned other rows than {against}: {first}"),
            }),
            _ => None,
        };
        let report = Event::Script {
            bench: bench.to_string(),
            report: ScriptReport {
                clients: self.clients as u64,
                transactions: sum(|c| c.transactions),
                tx_mean_ns: sum(|c| c.tx_sum_ns) as f64 / sum(|c| c.transactions).max(1) as f64,
                failed: sum(|c| c.failed),
                busy: sum(|c| c.busy),
                retries: sum(|c| c.retries),
                statements: crate::script::report::statements(&self.exec.mix, merged),
                rows,
                db: db.to_string(),
                db_sha256: sha256.to_string(),
                kept: Some(kept_rows(&acc)),
            },
        };
        let changed = changed.map(|message| Event::Error {
            bench: Some(bench.to_string()),
            message,
        });
        // Reported: the per-statement figures go (a mix of many statements would hold every
        // bench's at once); what later benches are compared with stays.
        drop(acc);
        for c in &mut shared.borrow_mut().clients {
            c.statements = Vec::new();
        }
        std::iter::once(report)
            .chain(differ)
            .chain(changed)
            .collect()
    }
}

/// The hash of a bench's kept results, client by client (see [`KeptRows`]).
fn kept_rows(acc: &Acc) -> KeptRows {
    let all = |n: usize| {
        use std::hash::Hasher;
        let mut h = twox_hash::XxHash3_64::with_seed(0);
        for c in &acc.clients {
            let kept = &c.kept[..n.min(c.kept.len())];
            h.write_u64(kept.len() as u64);
            for tx in kept {
                h.write_u64(tx.script as u64);
                h.write_u64(tx.statements.len() as u64);
                for (i, out) in &tx.statements {
                    h.write_u64(*i as u64);
                    h.write_u64(out.hash);
                    h.write_u64(out.rows);
                    h.write_u64(out.changed);
                }
            }
        }
        format!("{:016x}", h.finish())
    };
    let least = acc.clients.iter().map(|c| c.kept.len()).min().unwrap_or(0);
    KeptRows {
        per_client: acc.clients.iter().map(|c| c.kept.len() as u64).collect(),
        xxh3: all(usize::MAX),
        prefixes: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000]
            .into_iter()
            .filter(|n| *n <= least)
            .map(|n| (n as u64, all(n)))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exec(text: &str, retry: bool) -> Exec {
        Exec::new(
            Mix::parse(&[("t.sql".into(), text.into(), 1)], &[]).unwrap(),
            retry,
        )
    }

    fn out(hash: u64) -> StmtOut {
        StmtOut {
            hash,
            rows: 1,
            changed: 0,
        }
    }

    #[test]
    fn a_sample_is_shared_out_with_the_first_clients_taking_the_rest() {
        assert_eq!(shares(10, 3), [4, 3, 3]);
        assert_eq!(shares(9, 3), [3, 3, 3]);
        assert_eq!(shares(2, 3), [1, 1, 0]);
        assert_eq!(shares(7, 1), [7]);
        for per_pass in 0..40u64 {
            for clients in 1..9usize {
                let s = shares(per_pass, clients);
                assert_eq!(s.len(), clients);
                assert_eq!(s.iter().sum::<u64>(), per_pass, "{per_pass} {clients}");
                assert!(
                    s.windows(2).all(|w| w[0] >= w[1] && w[0] - w[1] <= 1),
                    "{s:?}"
                );
            }
        }
    }

    #[test]
    fn a_finished_transaction_is_counted_timed_and_kept_up_to_the_bound() {
        let mut acc = ClientAcc::new(1);
        for (i, ns) in [300u64, 500, 700].into_iter().enumerate() {
            acc.finished(0, vec![(0, ns / 2, out(i as u64))], ns);
        }
        assert_eq!(
            (acc.transactions, acc.tx_sum_ns, acc.in_sample),
            (3, 1500, 3)
        );
        assert_eq!(acc.kept.len(), 3);
        assert_eq!(acc.kept[2].statements, [(0, out(2))]);
        for _ in 0..COMPARED {
            acc.finished(0, vec![(0, 1, out(9))], 2);
        }
        assert_eq!(acc.kept.len(), COMPARED);
        assert_eq!(acc.transactions, 3 + COMPARED as u64);
    }

    /// Busy with on_busy=fail: given up and counted; with retry: a backoff doubling from
    /// 100 us up to 10 ms, until MAX_RETRIES in a row fail the bench; other errors fail it.
    #[test]
    fn a_failed_attempt_is_given_up_retried_or_fatal_as_on_busy_says() {
        let mut acc = ClientAcc::new(1);
        let mut attempts = 0;
        let fail = exec("SELECT 1;", false);
        assert!(matches!(
            fail.after_failure(StmtError::Busy, &mut acc, &mut attempts),
            Ok(None)
        ));
        assert_eq!(
            (acc.busy, acc.failed, acc.in_sample, acc.retries, attempts),
            (1, 1, 1, 0, 0)
        );
        let e = fail.after_failure(StmtError::Other("boom".into()), &mut acc, &mut attempts);
        assert!(matches!(e, Err(BenchError::Invalid(m)) if m == "boom"));

        let retry = exec("SELECT 1;", true);
        let mut acc = ClientAcc::new(1);
        let waits: Vec<u64> = (0..10)
            .map(|_| {
                let w = retry.after_failure(StmtError::Busy, &mut acc, &mut attempts);
                w.unwrap().unwrap().as_micros() as u64
            })
            .collect();
        assert_eq!(
            waits,
            [100, 200, 400, 800, 1600, 3200, 6400, 10_000, 10_000, 10_000]
        );
        assert_eq!(
            (acc.busy, acc.retries, acc.failed, acc.in_sample),
            (10, 10, 0, 0)
        );
        attempts = MAX_RETRIES - 1;
        assert!(
            retry
                .after_failure(StmtError::Busy, &mut acc, &mut attempts)
                .is_ok()
        );
        let e = retry.after_failure(StmtError::Busy, &mut acc, &mut attempts);
        assert!(
            matches!(&e, Err(BenchError::Invalid(m)) if m.contains("SQLITE_BUSY 10000 times in a row")),
            "{:?}",
            e.map(|_| ())
        );
    }

    #[test]
    fn a_statement_error_names_its_place() {
        let e = exec("SELECT 1;\n\nSELECT 2;", true);
        assert_eq!(describe(&e.mix, 1, "boom"), "t.sql:3:1: boom");
        let mut done = Vec::new();
        let r = e.took(
            1,
            Instant::now(),
            Err(StmtError::Other("no".into())),
            &mut done,
        );
        assert!(matches!(r, Err(StmtError::Other(m)) if m == "t.sql:3:1: no"));
        assert!(e.took(0, Instant::now(), Ok(out(5)), &mut done).is_ok());
        assert_eq!(done.len(), 1);
        assert_eq!((done[0].0, done[0].2), (0, out(5)));
    }
}
