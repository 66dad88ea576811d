//! Raw rusqlite on one connection: the floor every other path is compared against.

use rusqlite::Connection;

use crate::dataset::{BenchRow, SELECT_BY_ID, bench_row};

/// Opens a connection to a dataset file the way every SQLite bench does.
pub fn open(path: &std::path::Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open(path)?;
    conn.set_prepared_statement_cache_capacity(32);
    Ok(conn)
}

/// One lookup: `prepare_cached`, `query_row`, decode.
#[inline]
pub fn lookup(conn: &Connection, id: i64) -> rusqlite::Result<BenchRow> {
    let mut stmt = conn.prepare_cached(SELECT_BY_ID)?;
    stmt.query_row([id], bench_row)
}

/// The linked SQLite library's version.
pub fn sqlite_version() -> &'static str {
    rusqlite::version()
}
