//! What every backend of `key_value` runs: the store's SQL, the keys and values from a fixed
//! seed, the suite's groups as cases, the driver that times one pass of a case on any backend
//! implementing [`Kv`], and the suite's targets. Compiled without SQLite so that the sqlx
//! harness runs exactly the same thing.

use std::time::Instant;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::error::BenchError;
use crate::measure::Iteration;
use crate::measure::stats::LatencyHistogram;
use crate::measure::trace::ns_between;

pub const TENANT: &str = "tenant-1";
pub const NAMESPACE: &str = "bench";
/// What the work check of every key_value bench sums.
pub const WORK: &str = "rows written or deleted, live keys found, bytes read back (each compared with the bytes put), expired keys absent";

/// The logical clock every operation is given (seconds): expiry is decided against it, so a
/// run never depends on the wall clock.
pub const NOW: i64 = 1_700_000_000;

pub const CREATE: &[&str] = &[
    "DROP TABLE IF EXISTS kv_store",
    "CREATE TABLE kv_store (tenant_id TEXT NOT NULL, namespace TEXT NOT NULL, key TEXT NOT NULL, value BLOB NOT NULL, expires_at INTEGER, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, PRIMARY KEY (tenant_id, namespace, key))",
    "CREATE INDEX kv_store_ttl ON kv_store (expires_at) WHERE expires_at IS NOT NULL",
];
pub const PUT: &str = "INSERT INTO kv_store (tenant_id, namespace, key, value, expires_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant_id, namespace, key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at, updated_at = excluded.updated_at";
pub const GET: &str = "SELECT value FROM kv_store WHERE tenant_id = ? AND namespace = ? AND key = ? AND (expires_at IS NULL OR expires_at > ?)";
pub const EXISTS: &str = "SELECT 1 FROM kv_store WHERE tenant_id = ? AND namespace = ? AND key = ? AND (expires_at IS NULL OR expires_at > ?)";
pub const DELETE: &str = "DELETE FROM kv_store WHERE tenant_id = ? AND namespace = ? AND key = ?";
/// A prefix scan as a range on the primary key (`key >= p AND key < p + 1`), not LIKE.
pub const SCAN: &str = "SELECT key, value FROM kv_store WHERE tenant_id = ? AND namespace = ? AND key >= ? AND key < ? AND (expires_at IS NULL OR expires_at > ?) ORDER BY key";
pub const CLEAR: &str = "DELETE FROM kv_store";

/// The suite's groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    Single,
    Batch,
    Concurrent,
    Patterns,
    Ttl,
}

impl Group {
    pub fn name(self) -> &'static str {
        match self {
            Group::Single => "single_operations",
            Group::Batch => "batch_operations",
            Group::Concurrent => "concurrent_access",
            Group::Patterns => "key_patterns",
            Group::Ttl => "ttl_operations",
        }
    }
}

/// One bench of the suite, on any backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Case {
    Put(Size),
    Get(Size),
    Delete,
    Exists,
    BulkPut,
    BulkGet,
    /// `tasks` readers at once, each on its own thread and connection.
    ConcurrentReads(u64),
    /// 80% get, 20% put, in a seeded order.
    Mixed,
    /// A prefix scan that matches this many keys among as many that do not match.
    PrefixScan(u64),
    PutWithTtl,
    /// Gets of keys whose time to live has passed: each must read as absent.
    ExpiredRead,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Size {
    Small,
    Large,
}

impl Size {
    pub fn bytes(self) -> usize {
        match self {
            Size::Small => 100,
            Size::Large => 10 * 1024,
        }
    }
    fn name(self) -> &'static str {
        match self {
            Size::Small => "100b",
            Size::Large => "10kb",
        }
    }
}

pub const TASKS: [u64; 4] = [1, 2, 4, 8];
pub const SCANS: [u64; 3] = [10, 100, 1000];

impl Case {
    /// Tasks (each with its own connection) a bench of this case runs at once.
    pub fn tasks(self) -> usize {
        match self {
            Case::ConcurrentReads(n) => n as usize,
            _ => 1,
        }
    }

    pub fn all() -> Vec<Case> {
        let mut v = vec![
            Case::Put(Size::Small),
            Case::Put(Size::Large),
            Case::Get(Size::Small),
            Case::Get(Size::Large),
            Case::Delete,
            Case::Exists,
            Case::BulkPut,
            Case::BulkGet,
        ];
        v.extend(TASKS.iter().map(|n| Case::ConcurrentReads(*n)));
        v.push(Case::Mixed);
        v.extend(SCANS.iter().map(|n| Case::PrefixScan(*n)));
        v.push(Case::PutWithTtl);
        v.push(Case::ExpiredRead);
        v
    }

    pub fn variant(self) -> u16 {
        Case::all().iter().position(|c| *c == self).expect("in all") as u16
    }

    pub fn from_variant(v: u16) -> Option<Case> {
        Case::all().get(v as usize).copied()
    }

    /// The suite's bench name.
    pub fn name(self) -> String {
        match self {
            Case::Put(s) => format!("single_put_{}", s.name()),
            Case::Get(s) => format!("single_get_{}", s.name()),
            Case::Delete => "single_delete".into(),
            Case::Exists => "single_exists".into(),
            Case::BulkPut => "bulk_put".into(),
            Case::BulkGet => "bulk_get".into(),
            Case::ConcurrentReads(n) => format!("concurrent_reads_{n}"),
            Case::Mixed => "mixed_workload".into(),
            Case::PrefixScan(n) => format!("prefix_scan_{n}"),
            Case::PutWithTtl => "put_with_ttl".into(),
            Case::ExpiredRead => "expired_read".into(),
        }
    }

    pub fn group(self) -> Group {
        match self {
            Case::Put(_) | Case::Get(_) | Case::Delete | Case::Exists => Group::Single,
            Case::BulkPut | Case::BulkGet => Group::Batch,
            Case::ConcurrentReads(_) | Case::Mixed => Group::Concurrent,
            Case::PrefixScan(_) => Group::Patterns,
            Case::PutWithTtl | Case::ExpiredRead => Group::Ttl,
        }
    }

    /// What one operation is.
    pub fn about(self) -> &'static str {
        match self {
            Case::Put(_) => {
                "one UPSERT of a key, its own transaction (the table emptied first, untimed)"
            }
            Case::Get(_) => "one get of a live key; the bytes must be the ones put",
            Case::Delete => {
                "one DELETE of a key that exists (the keys put back before each pass, untimed)"
            }
            Case::Exists => "one existence check of a live key",
            Case::BulkPut => "one UPSERT of the `keys` keys put in one transaction",
            Case::BulkGet => "one get of the `keys` keys read in one transaction",
            Case::ConcurrentReads(_) => {
                "one get, `tasks` readers at once, each on its own thread and connection (ns/op is 1 / throughput)"
            }
            Case::Mixed => "one operation of a seeded mix of 80% gets and 20% puts",
            Case::PrefixScan(_) => {
                "one prefix scan (a range on the key) returning its matching keys and values"
            }
            Case::PutWithTtl => "one UPSERT with a time to live",
            Case::ExpiredRead => {
                "one get of a key whose time to live has passed: it must read as absent"
            }
        }
    }
}

/// A key of the store.
pub fn key(i: u64) -> String {
    format!("key/{i:07}")
}

/// The value of key `i` at `size`, from `seed`: every byte checked when read back.
pub fn value(seed: u64, i: u64, size: Size) -> Vec<u8> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ i.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut v = vec![0u8; size.bytes()];
    rng.fill(&mut v[..]);
    v
}

/// A key-value store the suite can run on. Every read returns the bytes it found.
#[allow(async_fn_in_trait)]
pub trait Kv {
    /// An empty store (the schema made on first use).
    async fn reset(&mut self) -> Result<(), BenchError>;
    async fn clear(&mut self) -> Result<(), BenchError>;
    async fn begin(&mut self) -> Result<(), BenchError>;
    async fn commit(&mut self) -> Result<(), BenchError>;
    /// Rows written (1).
    async fn put(
        &mut self,
        key: &str,
        value: &[u8],
        expires_at: Option<i64>,
    ) -> Result<u64, BenchError>;
    async fn get(&mut self, key: &str) -> Result<Option<Vec<u8>>, BenchError>;
    async fn exists(&mut self, key: &str) -> Result<bool, BenchError>;
    /// Rows deleted.
    async fn delete(&mut self, key: &str) -> Result<u64, BenchError>;
    /// Live keys in `[from, to)`, in key order, with their values.
    async fn scan(&mut self, from: &str, to: &str) -> Result<Vec<(String, Vec<u8>)>, BenchError>;
}

/// The data one bench works on, made once from the seed.
#[derive(Debug, Clone)]
pub struct Data {
    pub seed: u64,
    pub keys: Vec<String>,
    /// The values at the case's size, by key index.
    pub values: Vec<Vec<u8>>,
    /// The order reads and deletes visit the keys in.
    pub order: Vec<usize>,
    /// Mixed: per step, whether it is a put.
    pub mix: Vec<bool>,
}

/// The prefix a scan looks for (the other half of its keys start with `scan/b/`).
pub const SCAN_PREFIX: &str = "scan/a/";

/// The first key after every key starting with `prefix`: its last byte plus one.
pub fn prefix_end(prefix: &str) -> String {
    let mut b = prefix.as_bytes().to_vec();
    if let Some(last) = b.last_mut() {
        *last += 1;
    }
    String::from_utf8(b).expect("ASCII prefix")
}

/// How many scans one pass of a prefix-scan bench runs.
pub const SCANS_PER_PASS: u64 = 10;

impl Data {
    pub fn new(case: Case, n: u64, seed: u64) -> Data {
        let size = match case {
            Case::Put(s) | Case::Get(s) => s,
            _ => Size::Small,
        };
        let count = match case {
            // Matching keys (scan/a/...) and as many others (scan/b/...).
            Case::PrefixScan(m) => 2 * m,
            _ => n,
        };
        let keys: Vec<String> = (0..count)
            .map(|i| match case {
                Case::PrefixScan(m) if i < m => format!("scan/a/{i:07}"),
                Case::PrefixScan(_) => format!("scan/b/{i:07}"),
                _ => key(i),
            })
            .collect();
        let values = (0..count).map(|i| value(seed, i, size)).collect();
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x0DE5);
        let mut order: Vec<usize> = (0..count as usize).collect();
        for i in (1..order.len()).rev() {
            order.swap(i, rng.random_range(0..=i));
        }
        let mix = (0..count).map(|_| rng.random_range(0..100) < 20).collect();
        Data {
            seed,
            keys,
            values,
            order,
            mix,
        }
    }

    /// Operations in one pass of `case`, per task.
    pub fn ops(&self, case: Case) -> u64 {
        match case {
            Case::PrefixScan(_) => SCANS_PER_PASS,
            Case::ConcurrentReads(n) => self.keys.len() as u64 * n,
            _ => self.keys.len() as u64,
        }
    }

    /// The work check of one pass: rows written or deleted, live keys found, bytes read back
    /// (each compared with what was put), absent expired keys.
    pub fn work(&self, case: Case) -> u64 {
        let bytes: u64 = self.values.iter().map(|v| v.len() as u64).sum();
        let n = self.keys.len() as u64;
        match case {
            Case::Put(_) | Case::BulkPut | Case::PutWithTtl | Case::Delete | Case::Exists => n,
            Case::Get(_) | Case::BulkGet => bytes,
            Case::ConcurrentReads(t) => bytes * t,
            Case::Mixed => self
                .order
                .iter()
                .zip(&self.mix)
                .map(|(i, put)| {
                    if *put {
                        1
                    } else {
                        self.values[*i].len() as u64
                    }
                })
                .sum(),
            Case::PrefixScan(m) => {
                let matching: u64 = self.values[..m as usize]
                    .iter()
                    .map(|v| v.len() as u64 + 1)
                    .sum();
                matching * SCANS_PER_PASS
            }
            Case::ExpiredRead => n,
        }
    }
}

/// What a pass needs ready before its clock starts: the store filled as the case reads it.
pub async fn prepare<K: Kv>(kv: &mut K, case: Case, d: &Data) -> Result<(), BenchError> {
    kv.reset().await?;
    match case {
        Case::Get(_)
        | Case::Exists
        | Case::BulkGet
        | Case::ConcurrentReads(_)
        | Case::Mixed
        | Case::PrefixScan(_) => fill(kv, d, None).await,
        Case::ExpiredRead => fill(kv, d, Some(NOW - 60)).await,
        _ => Ok(()),
    }
}

async fn fill<K: Kv>(kv: &mut K, d: &Data, expires_at: Option<i64>) -> Result<(), BenchError> {
    kv.begin().await?;
    for (k, v) in d.keys.iter().zip(&d.values) {
        kv.put(k, v, expires_at).await?;
    }
    kv.commit().await
}

fn mismatch(key: &str, got: Option<usize>, want: usize) -> BenchError {
    BenchError::Other(format!(
        "value check failed: {key} read back {} bytes that are not the {want} put",
        got.map(|n| n.to_string()).unwrap_or_else(|| "no".into())
    ))
}

/// Reads key `i` and checks its bytes; the bytes read.
async fn checked_get<K: Kv>(kv: &mut K, d: &Data, i: usize) -> Result<u64, BenchError> {
    let want = &d.values[i];
    match kv.get(&d.keys[i]).await? {
        Some(v) if v == *want => Ok(v.len() as u64),
        other => Err(mismatch(&d.keys[i], other.map(|v| v.len()), want.len())),
    }
}

fn lap(start: Instant, hist: &mut LatencyHistogram) -> u64 {
    let ns = ns_between(start, Instant::now());
    hist.record(ns);
    ns
}

/// One pass of a single-task case (every case but the concurrent reads): untimed set-up,
/// then each operation timed on its own (bulk cases: the whole transaction).
pub async fn pass<K: Kv>(
    kv: &mut K,
    case: Case,
    d: &Data,
    hist: &mut LatencyHistogram,
) -> Result<Iteration, BenchError> {
    let (mut elapsed, mut work) = (0u64, 0u64);
    match case {
        Case::Put(_) | Case::PutWithTtl => {
            kv.clear().await?;
            let ttl = (case == Case::PutWithTtl).then_some(NOW + 3600);
            for (k, v) in d.keys.iter().zip(&d.values) {
                let start = Instant::now();
                work += kv.put(k, v, ttl).await?;
                elapsed += lap(start, hist);
            }
        }
        Case::Get(_) => {
            for &i in &d.order {
                let start = Instant::now();
                let w = checked_get(kv, d, i).await?;
                elapsed += lap(start, hist);
                work += w;
            }
        }
        Case::Delete => {
            fill(kv, d, None).await?;
            for &i in &d.order {
                let start = Instant::now();
                work += kv.delete(&d.keys[i]).await?;
                elapsed += lap(start, hist);
            }
        }
        Case::Exists => {
            for &i in &d.order {
                let start = Instant::now();
                let found = kv.exists(&d.keys[i]).await?;
                elapsed += lap(start, hist);
                work += u64::from(found);
            }
        }
        Case::BulkPut => {
            kv.clear().await?;
            let start = Instant::now();
            kv.begin().await?;
            for (k, v) in d.keys.iter().zip(&d.values) {
                work += kv.put(k, v, None).await?;
            }
            kv.commit().await?;
            elapsed = ns_between(start, Instant::now());
        }
        Case::BulkGet => {
            let start = Instant::now();
            kv.begin().await?;
            for &i in &d.order {
                work += checked_get(kv, d, i).await?;
            }
            kv.commit().await?;
            elapsed = ns_between(start, Instant::now());
        }
        Case::Mixed => {
            for (&i, &put) in d.order.iter().zip(&d.mix) {
                let start = Instant::now();
                let w = if put {
                    kv.put(&d.keys[i], &d.values[i], None).await?
                } else {
                    checked_get(kv, d, i).await?
                };
                elapsed += lap(start, hist);
                work += w;
            }
        }
        Case::PrefixScan(m) => {
            for _ in 0..SCANS_PER_PASS {
                let start = Instant::now();
                let rows = kv.scan(SCAN_PREFIX, &prefix_end(SCAN_PREFIX)).await?;
                elapsed += lap(start, hist);
                if rows.len() as u64 != m
                    || rows
                        .iter()
                        .zip(&d.values)
                        .any(|((_, got), want)| got != want)
                {
                    return Err(BenchError::Other(format!(
                        "prefix scan returned {} rows, expected the {m} put, with their bytes",
                        rows.len()
                    )));
                }
                work += rows.iter().map(|(_, v)| v.len() as u64 + 1).sum::<u64>();
            }
        }
        Case::ExpiredRead => {
            for &i in &d.order {
                let start = Instant::now();
                let got = kv.get(&d.keys[i]).await?;
                elapsed += lap(start, hist);
                if let Some(v) = got {
                    return Err(BenchError::Other(format!(
                        "{} expired but read back {} bytes",
                        d.keys[i],
                        v.len()
                    )));
                }
                work += 1;
            }
        }
        Case::ConcurrentReads(_) => {
            return Err(BenchError::Other(
                "concurrent reads run through `readers`, not one task".into(),
            ));
        }
    }
    Ok(Iteration::new(elapsed, work))
}

/// One task's share of a concurrent-reads pass: every key, in its own order.
pub async fn reader<K: Kv>(kv: &mut K, d: &Data, task: usize) -> Result<u64, BenchError> {
    let mut work = 0;
    let n = d.order.len();
    for j in 0..n {
        work += checked_get(kv, d, d.order[(j + task * 7919) % n]).await?;
    }
    Ok(work)
}

/// A bench over its store handles (one per task), `keep` alive as long as it: the store
/// prepared once, then single-task passes, or every task's reads at once, each on its own
/// thread; its operations and work per pass from `data`.
pub fn bench<'a, K: Kv + Send + 'a>(
    rt: &'a tokio::runtime::Runtime,
    mut handles: Vec<K>,
    case: Case,
    data: Data,
    keep: impl Send + 'a,
) -> Result<crate::measure::Bench<'a>, BenchError> {
    rt.block_on(prepare(&mut handles[0], case, &data))?;
    let (ops, work) = (data.ops(case), data.work(case));
    let iter: crate::measure::IterFn<'a> = Box::new(move |hist| {
        let _keep = &keep;
        if !matches!(case, Case::ConcurrentReads(_)) {
            return rt.block_on(pass(&mut handles[0], case, &data, hist));
        }
        let data = &data;
        // The clock runs from the first reader's start to the last one's end, after every
        // thread is up: spawning the threads is not part of the reads.
        let barrier = std::sync::Barrier::new(handles.len());
        let results: Vec<Result<(Instant, Instant, u64), BenchError>> = std::thread::scope(|s| {
            let running: Vec<_> = handles
                .iter_mut()
                .enumerate()
                .map(|(i, kv)| {
                    let barrier = &barrier;
                    s.spawn(move || {
                        barrier.wait();
                        let start = Instant::now();
                        let work = rt.block_on(reader(kv, data, i))?;
                        Ok((start, Instant::now(), work))
                    })
                })
                .collect();
            running
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(BenchError::Other("a reader panicked".into())))
                })
                .collect()
        });
        let (mut first, mut last, mut work) = (None::<Instant>, None::<Instant>, 0);
        for r in results {
            let (start, end, w) = r?;
            first = Some(first.map_or(start, |f| f.min(start)));
            last = Some(last.map_or(end, |l| l.max(end)));
            work += w;
        }
        let elapsed = match (first, last) {
            (Some(a), Some(b)) => ns_between(a, b),
            _ => 0,
        };
        Ok(Iteration::new(elapsed, work))
    });
    Ok(crate::measure::Bench::new(iter, work, WORK).with_ops(ops))
}

/// A suite target: what it asks of which backends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Target {
    /// Median per operation under this many ns.
    Under(f64),
    /// At least this many operations a second.
    AtLeast(f64),
    /// Speedup against one task of at least 0.8 x the tasks (linear scaling).
    Linear,
}

/// The suite's target for `case`, for the in-memory backend or a SQLite one: every target its
/// README states. In memory: a single put, get, delete or existence check under 1 µs, batches at
/// 1M ops/s or more, the mixed workload at 500K ops/s or more, a prefix scan of 1000 keys under
/// 100 µs, a put with a TTL under 2 µs; on SQLite: every single operation under 100 µs and
/// batches at 10K ops/s or more; concurrent reads scaling linearly on both. The suite states no
/// target for the other cases (the smaller scans, an expired read, one reader).
pub fn target(case: Case, memory: bool) -> Option<Target> {
    let single = |memory_ns: f64| Target::Under(if memory { memory_ns } else { 100e3 });
    match case {
        Case::Put(_) | Case::Get(_) | Case::Delete | Case::Exists => Some(single(1e3)),
        Case::BulkPut | Case::BulkGet => Some(Target::AtLeast(if memory { 1e6 } else { 1e4 })),
        Case::ConcurrentReads(n) if n > 1 => Some(Target::Linear),
        Case::Mixed if memory => Some(Target::AtLeast(500e3)),
        Case::PrefixScan(1000) if memory => Some(Target::Under(100e3)),
        Case::PutWithTtl if memory => Some(Target::Under(2e3)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variants_round_trip_and_names_are_the_suites() {
        for c in Case::all() {
            assert_eq!(Case::from_variant(c.variant()), Some(c));
        }
        let names: Vec<String> = Case::all().iter().map(|c| c.name()).collect();
        assert_eq!(names.len(), 18);
        assert!(names.contains(&"single_get_10kb".to_string()));
        assert!(names.contains(&"concurrent_reads_8".to_string()));
    }

    #[test]
    fn data_is_fixed_by_the_seed() {
        let a = Data::new(Case::Get(Size::Large), 20, 3);
        let b = Data::new(Case::Get(Size::Large), 20, 3);
        assert_eq!(a.values, b.values);
        assert_eq!(a.values[0].len(), 10 * 1024);
        assert_ne!(a.values[0], a.values[1]);
        assert_eq!(a.work(Case::Get(Size::Large)), 20 * 10 * 1024);
        let s = Data::new(Case::PrefixScan(10), 0, 3);
        assert_eq!(s.keys.len(), 20);
        assert!(s.keys[9].starts_with("scan/a/") && s.keys[10].starts_with("scan/b/"));
        assert_eq!(s.work(Case::PrefixScan(10)), 10 * 101 * SCANS_PER_PASS);
    }
}
