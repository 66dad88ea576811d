//! bulk_insert's table and rows (from the database_benchmark suite): 16 columns,
//! an integer, text, a datetime, a real, a bool, a blob, JSON and nine text columns; rows
//! generated from a fixed seed, so every backend inserts exactly the same data.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Table name used everywhere, PostgreSQL included: benches never touch any other table.
pub const TABLE: &str = "benchscope_bulk_insert";

pub const SQLITE_CREATE: &str = "CREATE TABLE benchscope_bulk_insert (
    id INTEGER NOT NULL, title TEXT NOT NULL, created_at TEXT NOT NULL, amount REAL NOT NULL,
    flag INTEGER NOT NULL, payload BLOB NOT NULL, meta TEXT NOT NULL,
    c1 TEXT NOT NULL, c2 TEXT NOT NULL, c3 TEXT NOT NULL, c4 TEXT NOT NULL, c5 TEXT NOT NULL,
    c6 TEXT NOT NULL, c7 TEXT NOT NULL, c8 TEXT NOT NULL, c9 TEXT NOT NULL)";
pub const POSTGRES_CREATE: &str = "CREATE TABLE benchscope_bulk_insert (
    id BIGINT NOT NULL, title TEXT NOT NULL, created_at TIMESTAMPTZ NOT NULL, amount DOUBLE PRECISION NOT NULL,
    flag BOOLEAN NOT NULL, payload BYTEA NOT NULL, meta JSONB NOT NULL,
    c1 TEXT NOT NULL, c2 TEXT NOT NULL, c3 TEXT NOT NULL, c4 TEXT NOT NULL, c5 TEXT NOT NULL,
    c6 TEXT NOT NULL, c7 TEXT NOT NULL, c8 TEXT NOT NULL, c9 TEXT NOT NULL)";
pub const DROP: &str = "DROP TABLE IF EXISTS benchscope_bulk_insert";
pub const SQLITE_INSERT: &str = "INSERT INTO benchscope_bulk_insert VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)";
pub const POSTGRES_INSERT: &str = "INSERT INTO benchscope_bulk_insert VALUES ($1, $2, $3::timestamptz, $4, $5, $6, $7::jsonb, $8, $9, $10, $11, $12, $13, $14, $15, $16)";
/// The same insert for a driver whose parameter types the server infers (tokio-postgres):
/// the timestamp and the JSON arrive as text and are cast, as sqlx's text binds are.
pub const POSTGRES_INSERT_FROM_TEXT: &str = "INSERT INTO benchscope_bulk_insert VALUES ($1, $2, $3::text::timestamptz, $4, $5, $6, $7::text::jsonb, $8, $9, $10, $11, $12, $13, $14, $15, $16)";
pub const COUNT: &str = "SELECT count(*) FROM benchscope_bulk_insert";
/// Run before the clock starts, after the table is made fresh: with a WAL, it is emptied, so
/// every sample's transaction starts from the same file state (else SQLite's automatic
/// checkpoint lands in every other sample and splits the samples into two groups). A no-op in
/// the other journal modes.
pub const CHECKPOINT: &str = "PRAGMA wal_checkpoint(TRUNCATE)";

/// A scratch database file for one bench, removed (with its WAL) when dropped.
pub struct Scratch(pub std::path::PathBuf);

impl Scratch {
    pub fn new(dir: &std::path::Path, bench: &str) -> Scratch {
        let p = dir.join(format!(
            "bulk-{}-{}.sqlite",
            bench.replace('/', "_"),
            std::process::id()
        ));
        crate::dataset::remove_db_files(&p);
        Scratch(p)
    }
}

/// Where one bench's database lives: a scratch file (removed with it), or an in-memory
/// database (memdb) its connections share.
pub enum Place {
    File(Scratch),
    Memory(std::path::PathBuf),
}

impl Place {
    /// The database of `bench` of a `kind` of target, in `dir` or in memory.
    pub fn new(dir: &std::path::Path, memory: bool, kind: &str, bench: &str) -> Place {
        if memory {
            Place::Memory(std::path::PathBuf::from(format!(
                "file:/benchscope-{kind}-{}-{}?vfs=memdb",
                std::process::id(),
                bench.replace('/', "_")
            )))
        } else {
            Place::File(Scratch::new(dir, &format!("{kind}-{bench}")))
        }
    }

    /// The path or URI every connection opens.
    pub fn path(&self) -> &std::path::Path {
        match self {
            Place::File(s) => &s.0,
            Place::Memory(p) => p,
        }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        crate::dataset::remove_db_files(&self.0);
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct BulkRow {
    pub id: i64,
    pub title: String,
    /// RFC 3339, UTC.
    pub created_at: String,
    pub amount: f64,
    pub flag: bool,
    pub payload: Vec<u8>,
    /// A JSON object, as text.
    pub meta: String,
    pub texts: [String; 9],
}

fn word(rng: &mut ChaCha8Rng, len: usize) -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    (0..len)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect()
}

/// `n` rows from `seed`: the same rows for the same arguments, on every backend.
pub fn rows(n: u64, seed: u64) -> Vec<BulkRow> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let base = 1_700_000_000i64;
    (1..=n as i64)
        .map(|id| {
            let created =
                time::OffsetDateTime::from_unix_timestamp(base + id * 37).expect("in range");
            let score: f64 = rng.random_range(0.0..1000.0);
            BulkRow {
                id,
                title: format!("title-{id}-{}", word(&mut rng, 8)),
                created_at: created
                    .format(&time::format_description::well_known::Rfc3339)
                    .expect("formats"),
                amount: (rng.random_range(0.0..100_000.0f64) * 100.0).round() / 100.0,
                flag: rng.random_bool(0.5),
                payload: (0..32).map(|_| rng.random::<u8>()).collect(),
                meta: format!(
                    r#"{{"id":{id},"score":{score:.3},"tags":["{}","{}"]}}"#,
                    word(&mut rng, 4),
                    word(&mut rng, 4)
                ),
                texts: std::array::from_fn(|_| word(&mut rng, 16)),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_deterministic_and_well_formed() {
        let a = rows(50, 7);
        assert_eq!(a, rows(50, 7));
        assert_ne!(a, rows(50, 8));
        assert_eq!(a.len(), 50);
        assert_eq!(a[0].id, 1);
        assert_eq!(a[0].created_at, "2023-11-14T22:13:57Z");
        assert!(
            a.iter()
                .all(|r| r.payload.len() == 32 && r.texts.iter().all(|t| t.len() == 16))
        );
        assert!(
            a[3].meta.starts_with(r#"{"id":4,"score":"#),
            "{}",
            a[3].meta
        );
        assert_eq!(SQLITE_INSERT.matches('?').count(), 16);
        assert_eq!(POSTGRES_INSERT.matches('$').count(), 16);
    }
}
