//! SQLite's own settings as knobs: every SQLite backend of a target opens its connections with
//! the same journal mode, synchronous level, locking mode, page cache, memory map and mutex,
//! reads them back, and reports them with each bench, so a comparison is between layers and
//! not between settings. A backend that cannot match says so, per setting.

use std::collections::BTreeMap;

use crate::catalog::Subject;
use crate::knobs::{KnobSpec, Knobs};

pub const JOURNAL_MODE: KnobSpec = KnobSpec::choice(
    "journal_mode",
    Some("BENCH_JOURNAL_MODE"),
    "wal",
    &["wal", "delete", "memory"],
    "SQLite journal mode of every connection (datasets are built in it)",
);
pub const SYNCHRONOUS: KnobSpec = KnobSpec::choice(
    "synchronous",
    Some("BENCH_SYNCHRONOUS"),
    "normal",
    &["off", "normal", "full"],
    "SQLite PRAGMA synchronous of every connection",
);
pub const LOCKING_MODE: KnobSpec = KnobSpec::choice(
    "locking_mode",
    Some("BENCH_LOCKING_MODE"),
    "normal",
    &["normal", "exclusive"],
    "SQLite locking mode (exclusive keeps the file locked by one connection)",
);
pub const CACHE_SIZE: KnobSpec = KnobSpec::count(
    "cache_size",
    Some("BENCH_CACHE_SIZE"),
    2000,
    1,
    10_000_000,
    "SQLite page cache per connection in KiB (PRAGMA cache_size = -N; 2000 is SQLite's default)",
);
pub const MMAP_SIZE: KnobSpec = KnobSpec::count(
    "mmap_size",
    Some("BENCH_MMAP_SIZE"),
    0,
    0,
    1 << 40,
    "bytes of the file SQLite reads through a memory map (0 = off)",
)
.step_by(64 << 20);
pub const SQLITE_MUTEX: KnobSpec = KnobSpec::choice(
    "sqlite_mutex",
    Some("BENCH_SQLITE_MUTEX"),
    "off",
    &["off", "full"],
    "off: connections open with SQLITE_OPEN_NO_MUTEX (rusqlite's and sqlx's default); full: serialized",
);

/// The settings knobs, in the order every SQLite target lists them.
pub const KNOBS: [KnobSpec; 6] = [
    JOURNAL_MODE,
    SYNCHRONOUS,
    LOCKING_MODE,
    CACHE_SIZE,
    MMAP_SIZE,
    SQLITE_MUTEX,
];

/// The names read back from a connection, in order.
pub const NAMES: [&str; 6] = [
    "journal_mode",
    "synchronous",
    "locking_mode",
    "cache_size",
    "mmap_size",
    "mutex",
];

/// What a backend reports for a setting it cannot apply or read.
pub const UNSUPPORTED: &str = "unsupported";
/// What a backend reports for a setting that has no meaning for it (turso has no SQLite mutex).
pub const NOT_APPLICABLE: &str = "n/a";

/// The SQLite settings of one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqliteSettings {
    /// `wal`, `delete` or `memory`.
    pub journal_mode: String,
    /// `off`, `normal` or `full`.
    pub synchronous: String,
    /// `normal` or `exclusive`.
    pub locking_mode: String,
    pub cache_kib: u64,
    pub mmap_size: u64,
    /// Connections open without SQLite's per-connection mutex.
    pub no_mutex: bool,
    /// Connections open read-only (SQLITE_OPEN_READONLY): set by a workload, not a knob (the
    /// script target's snapshot, when SQLite judged every statement a read).
    pub read_only: bool,
    /// SQLite's busy wait done inside `tokio::task::block_in_place` when the connection is used
    /// on a runtime worker thread: set by the middleware's `wait_aside` strategy, not a knob.
    pub wait_aside: bool,
}

impl Default for SqliteSettings {
    fn default() -> Self {
        SqliteSettings::from_knobs(&Knobs::default())
    }
}

impl SqliteSettings {
    /// The run's settings; a knob the target does not have takes its default.
    pub fn from_knobs(k: &Knobs) -> SqliteSettings {
        let word = |spec: &KnobSpec| match k.get(spec.name) {
            Some(v) => v.to_string(),
            None => spec.default_value().to_string(),
        };
        let count = |spec: &KnobSpec| {
            k.count_if(spec)
                .unwrap_or_else(|| match spec.default_value() {
                    crate::knobs::KnobValue::Count(n) => n,
                    crate::knobs::KnobValue::Word(_) => 0,
                })
        };
        SqliteSettings {
            journal_mode: word(&JOURNAL_MODE),
            synchronous: word(&SYNCHRONOUS),
            locking_mode: word(&LOCKING_MODE),
            cache_kib: count(&CACHE_SIZE),
            mmap_size: count(&MMAP_SIZE),
            no_mutex: word(&SQLITE_MUTEX) == "off",
            read_only: false,
            wait_aside: false,
        }
    }

    /// The PRAGMA statements that apply these settings to a connection: the locking mode first
    /// (an exclusive connection must say so before it first reads a WAL file), then the
    /// journal mode. A read-only connection cannot change its file's journal mode (SQLite
    /// answers "attempt to write a readonly database"): it is left out, and the connection
    /// runs in the mode the file was settled in (a script's snapshot is settled in the run's).
    pub fn pragmas(&self) -> Vec<(&'static str, String)> {
        let mut p = vec![
            ("locking_mode", self.locking_mode.clone()),
            ("journal_mode", self.journal_mode.clone()),
            ("synchronous", self.synchronous.clone()),
            ("cache_size", format!("-{}", self.cache_kib)),
            ("mmap_size", self.mmap_size.to_string()),
        ];
        if self.read_only {
            p.retain(|(name, _)| *name != "journal_mode");
        }
        p
    }

    /// What a connection with these settings reads back, in the form [`normalize`] gives.
    pub fn expected(&self) -> BTreeMap<String, String> {
        let mut m: BTreeMap<String, String> = self
            .pragmas()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        m.insert("journal_mode".into(), self.journal_mode.clone());
        m.insert("mutex".into(), mutex_name(self.no_mutex).into());
        m
    }

    /// One line for a run's environment.
    pub fn describe(&self) -> String {
        self.expected()
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Whether the dataset file is kept in WAL mode (else in rollback mode).
    pub fn wal(&self) -> bool {
        self.journal_mode == "wal"
    }
}

pub fn mutex_name(no_mutex: bool) -> &'static str {
    if no_mutex { "off" } else { "full" }
}

/// A value read back with `PRAGMA name`, in the form the knobs use: lowercase words, the
/// synchronous level as its name.
pub fn normalize(name: &str, value: &str) -> String {
    let v = value.trim().to_ascii_lowercase();
    if name == "synchronous" {
        return match v.as_str() {
            "0" => "off".into(),
            "1" => "normal".into(),
            "2" => "full".into(),
            "3" => "extra".into(),
            _ => v,
        };
    }
    v
}

/// Why a bench of `subject` cannot run with these settings, if it cannot: turso keeps WAL
/// mode only, and an exclusive lock cannot be shared by a pool of several connections.
pub fn skip_reason(subject: Subject, pool: usize, s: &SqliteSettings) -> Option<String> {
    let turso = matches!(
        subject,
        Subject::Turso
            | Subject::TursoMiddleware
            | Subject::Crate(crate::catalog::Shipped::SqlMiddlewareTurso)
    );
    if turso && !s.wal() {
        return Some(format!(
            "turso runs in WAL mode only (journal_mode={} asked)",
            s.journal_mode
        ));
    }
    let pooled = match subject {
        Subject::Middleware(_) | Subject::Pool(_) | Subject::SqlxSqlite => true,
        // On PostgreSQL, SQLite's locking is no concern.
        Subject::Crate(c) => c != crate::catalog::Shipped::SqlMiddlewarePostgres,
        _ => false,
    };
    // sql-middleware's pool holds 10 connections whatever the run asks.
    let pool = match subject {
        Subject::Crate(crate::catalog::Shipped::SqlMiddleware) => pool.max(10),
        _ => pool,
    };
    (pooled && pool > 1 && s.locking_mode == "exclusive").then(|| {
        format!(
            "locking_mode=exclusive keeps the file locked by one connection, so a pool of {pool} cannot share it (set concurrency to 1)"
        )
    })
}

/// The settings a bench's connections read back that differ from what the run asked for, as
/// `name: got (asked want)`.
pub fn differences(
    asked: &BTreeMap<String, String>,
    got: &BTreeMap<String, String>,
) -> Vec<crate::text::Text> {
    got.iter()
        .filter_map(|(k, v)| {
            let want = asked.get(k)?;
            (want != v && v != NOT_APPLICABLE).then(|| crate::text!("{k}: {v} (asked {want})"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knobs::resolve;

    #[test]
    fn knobs_make_pragmas_and_the_expected_read_back() {
        let k = resolve(&KNOBS, &|_| None, &[]).unwrap();
        let s = SqliteSettings::from_knobs(&k);
        assert_eq!(
            s,
            SqliteSettings::default(),
            "defaults without the knobs too"
        );
        assert_eq!(
            s.describe(),
            "cache_size=-2000 journal_mode=wal locking_mode=normal mmap_size=0 mutex=off synchronous=normal"
        );
        let k = resolve(
            &KNOBS,
            &|_| None,
            &[
                ("journal_mode".into(), "DELETE".into()),
                ("sqlite_mutex".into(), "full".into()),
                ("mmap_size".into(), "256m".into()),
            ],
        )
        .unwrap();
        let s = SqliteSettings::from_knobs(&k);
        assert!(!s.wal() && !s.no_mutex);
        assert_eq!(s.pragmas()[1], ("journal_mode", "delete".to_string()));
        assert_eq!(s.expected()["mmap_size"], "256000000");
    }

    #[test]
    fn read_backs_are_normalized_and_differences_named() {
        assert_eq!(normalize("synchronous", "1"), "normal");
        assert_eq!(normalize("journal_mode", "WAL"), "wal");
        let asked = SqliteSettings::default().expected();
        let mut got = asked.clone();
        assert!(differences(&asked, &got).is_empty());
        got.insert("locking_mode".into(), "exclusive".into());
        got.insert("mmap_size".into(), UNSUPPORTED.into());
        assert_eq!(
            differences(&asked, &got),
            vec![
                "locking_mode: exclusive (asked normal)",
                "mmap_size: unsupported (asked 0)"
            ]
        );
    }
}
