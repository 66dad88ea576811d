//! What benchscope does on a rusqlite connection, whichever rusqlite links it: the open flags
//! and pragmas of a run's SQLite settings and what a connection reads back, the shared dataset
//! built and checked, the lookup row decoded, the bulk_insert rows written.
//!
//! One source, compiled twice: into bench-core against its rusqlite (0.40, the line deadpool,
//! tokio-rusqlite, r2d2_sqlite and diesel share), and into harness-async-sqlite against
//! async-sqlite's (0.41, another libsqlite3-sys: one dependency graph cannot hold both), by
//! `#[path]`. So it names bench-core's items as `bench_core::` (bench-core calls itself that
//! too) and rusqlite's as `rusqlite::`, and turns rusqlite's errors into [`BenchError`] by hand.

use std::collections::BTreeMap;
use std::path::Path;

use bench_core::BenchError;
use bench_core::dataset::{
    BenchRow, CONTENT_SELECT, CREATE_TABLE, Content, DatasetKey, DatasetReady, INSERT_ROW,
    META_INSERT, META_SELECT, META_TABLE, RANGE_SELECT, SELECT_BY_ID, check, ensure_with, meta,
};
use bench_core::settings::{self, SqliteSettings};
use bench_core::workloads::bulk_insert::rows::{
    BulkRow, CHECKPOINT, DROP, SQLITE_CREATE, SQLITE_INSERT,
};
use rusqlite::{Connection, OpenFlags, params};

fn err(e: rusqlite::Error) -> BenchError {
    BenchError::driver(e)
}

/// The open flags of every rusqlite connection: read-write (read-only where the settings
/// say), URIs, and the run's mutex choice.
pub fn flags(s: &SqliteSettings) -> OpenFlags {
    let mutex = if s.no_mutex {
        OpenFlags::SQLITE_OPEN_NO_MUTEX
    } else {
        OpenFlags::SQLITE_OPEN_FULL_MUTEX
    };
    let access = if s.read_only {
        OpenFlags::SQLITE_OPEN_READ_ONLY
    } else {
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE
    };
    access | OpenFlags::SQLITE_OPEN_URI | mutex
}

/// Applies the run's pragmas to a connection (one opened by a pool, say).
pub fn apply(conn: &Connection, s: &SqliteSettings) -> rusqlite::Result<()> {
    for (name, value) in s.pragmas() {
        conn.pragma_update(None, name, value)?;
    }
    Ok(())
}

/// Prepares a connection the way every rusqlite bench does once it is open: the run's pragmas,
/// and room for the benches' cached statements.
pub fn configure(conn: &Connection, s: &SqliteSettings) -> rusqlite::Result<()> {
    apply(conn, s)?;
    conn.set_prepared_statement_cache_capacity(32);
    Ok(())
}

/// The settings a connection actually runs with, read back from it.
pub fn read_back(conn: &Connection) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for name in settings::NAMES.iter().filter(|n| **n != "mutex") {
        let value = conn
            .query_row(&format!("PRAGMA {name}"), [], |r| {
                Ok(match r.get_ref(0)? {
                    rusqlite::types::ValueRef::Integer(i) => i.to_string(),
                    rusqlite::types::ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                    other => format!("{other:?}"),
                })
            })
            .unwrap_or_else(|e| match e {
                // memdb, say, has no memory map: the pragma answers nothing.
                rusqlite::Error::QueryReturnedNoRows => settings::UNSUPPORTED.to_string(),
                e => format!("error: {e}"),
            });
        out.insert(name.to_string(), settings::normalize(name, &value));
    }
    // SAFETY: the handle is valid for as long as `conn` lives, and sqlite3_db_mutex only reads
    // the connection's mutex pointer.
    let no_mutex = unsafe { rusqlite::ffi::sqlite3_db_mutex(conn.handle()).is_null() };
    out.insert("mutex".into(), settings::mutex_name(no_mutex).into());
    out
}

/// A `SELECT id, name, score, active` row into `BenchRow`, by position.
#[inline]
pub fn bench_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<BenchRow> {
    Ok(BenchRow {
        id: r.get(0)?,
        name: r.get(1)?,
        score: r.get(2)?,
        active: r.get(3)?,
    })
}

/// One lookup as code on a rusqlite connection writes it: the statement from the
/// connection's cache, `query_row`, decode.
#[inline]
pub fn cached_lookup(c: &Connection, id: i64) -> rusqlite::Result<BenchRow> {
    let mut stmt = c.prepare_cached(SELECT_BY_ID)?;
    stmt.query_row([id], bench_row)
}

/// Checks that a cached dataset file holds exactly the dataset `key` describes.
pub fn validate(path: &Path, key: &DatasetKey) -> Result<(), BenchError> {
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY).map_err(err)?;
    let (min, max): (Option<i64>, Option<i64>) = conn
        .query_row(RANGE_SELECT, [], |r| Ok((r.get(0)?, r.get(1)?)))
        .map_err(err)?;
    let (count, content): (i64, Content) = conn
        .query_row(CONTENT_SELECT, [], |r| {
            Ok((r.get(0)?, (r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))
        })
        .map_err(err)?;
    let counts = (count, min, max);
    let journal: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .map_err(err)?;
    check(
        key,
        &mut |k| conn.query_row(META_SELECT, [k], |r| r.get(0)).map_err(err),
        counts,
        content,
        &journal,
        &mut |id| conn.query_row(SELECT_BY_ID, [id], bench_row).map_err(err),
    )
}

/// Every row of a dataset file, in id order (to check what a harness wrote).
pub fn read_rows(path: &Path) -> rusqlite::Result<Vec<BenchRow>> {
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let mut stmt = conn.prepare("SELECT id, name, score, active FROM test ORDER BY id")?;
    stmt.query_map([], bench_row)?.collect()
}

/// Writes the dataset into `path` (which must not exist), in one transaction.
pub fn write(path: &Path, key: &DatasetKey) -> rusqlite::Result<()> {
    let mut conn = Connection::open(path)?;
    conn.pragma_update(None, "journal_mode", key.journal())?;
    conn.pragma_update(None, "synchronous", "OFF")?;
    let tx = conn.transaction()?;
    tx.execute_batch(&format!("{CREATE_TABLE}; {META_TABLE};"))?;
    {
        let mut insert = tx.prepare(INSERT_ROW)?;
        let mut name = String::new();
        for id in 1..=key.rows as i64 {
            use std::fmt::Write;
            name.clear();
            let _ = write!(name, "name-{id}");
            insert.execute(params![id, name, id as f64 * 0.5, id % 2 == 0])?;
        }
        let mut meta_insert = tx.prepare(META_INSERT)?;
        for (k, v) in meta(key) {
            meta_insert.execute(params![k, v])?;
        }
    }
    tx.commit()?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    if key.wal {
        conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")?;
    }
    conn.close().map_err(|(_, e)| e)
}

/// The dataset file for `key` in `dir`, built with this rusqlite when absent or invalid.
pub fn ensure(
    dir: &Path,
    key: &DatasetKey,
    on_build: &mut dyn FnMut(&Path),
) -> Result<DatasetReady, BenchError> {
    ensure_with(dir, key, on_build, &|p| validate(p, key), &|p| {
        write(p, key).map_err(err)
    })
}

/// bulk_insert: a fresh table and an empty WAL, before the clock starts.
pub fn bulk_reset(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(&format!("{DROP}; {SQLITE_CREATE};"))?;
    conn.query_row(CHECKPOINT, [], |_| Ok(()))
}

/// bulk_insert `method=batch_text`: the rows' INSERT text run by `execute_batch` in one
/// transaction; the rows SQLite reports changed (its count of changes, read before and after).
pub fn bulk_batch_all(conn: &mut Connection, text: &str) -> rusqlite::Result<u64> {
    let before = conn.total_changes();
    let tx = conn.transaction()?;
    tx.execute_batch(text)?;
    tx.commit()?;
    Ok(conn.total_changes() - before)
}

/// bulk_insert: every row through one cached prepared statement, in one transaction; the rows
/// SQLite reports changed.
pub fn bulk_insert_all(conn: &mut Connection, rows: &[BulkRow]) -> rusqlite::Result<u64> {
    let tx = conn.transaction()?;
    let mut changed = 0u64;
    {
        let mut stmt = tx.prepare_cached(SQLITE_INSERT)?;
        for r in rows {
            let t = &r.texts;
            changed += stmt.execute(params![
                r.id,
                r.title,
                r.created_at,
                r.amount,
                r.flag,
                r.payload,
                r.meta,
                t[0],
                t[1],
                t[2],
                t[3],
                t[4],
                t[5],
                t[6],
                t[7],
                t[8]
            ])? as u64;
        }
    }
    tx.commit()?;
    Ok(changed)
}

/// A crate's way to run a closure on its rusqlite connection: tokio-rusqlite's `call`,
/// r2d2's connection in `spawn_blocking` / `block_in_place`, async-sqlite's `conn`.
#[allow(async_fn_in_trait)]
pub trait OnConn: Send {
    async fn on<T: Send + 'static>(
        &mut self,
        f: impl FnOnce(&Connection) -> Result<T, BenchError> + Send + 'static,
    ) -> Result<T, BenchError>;
}

pub mod contention;
pub mod crud;
pub mod kv;
pub mod script;

#[cfg(test)]
mod tests;
