//! Raw rusqlite on one connection: the floor every other path is compared against. Every
//! rusqlite connection of every bench is opened here, with the run's SQLite settings.

use rusqlite::{Connection, Statement};

use crate::dataset::{BenchRow, SELECT_BY_ID};
use crate::on_rusqlite::bench_row;
use crate::settings::SqliteSettings;

/// Opens a connection the way every rusqlite bench does: the run's mutex choice as open
/// flags, then its pragmas, and room for the benches' cached statements.
pub fn open(path: &std::path::Path, s: &SqliteSettings) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(path, flags(s))?;
    configure(&conn, s)?;
    Ok(conn)
}

pub use crate::on_rusqlite::{flags, read_back};

/// Applies the run's settings to an open connection (one a pool opened, say): the busy handler
/// they ask for (first, so the pragmas' own lock waits take it), then the pragmas.
pub fn apply(conn: &Connection, s: &SqliteSettings) -> rusqlite::Result<()> {
    super::wait_aside::install(conn, s)?;
    crate::on_rusqlite::apply(conn, s)
}

/// Prepares an open connection as [`open`] does: [`apply`]'s busy handler and pragmas, and
/// room for cached statements.
pub fn configure(conn: &Connection, s: &SqliteSettings) -> rusqlite::Result<()> {
    super::wait_aside::install(conn, s)?;
    crate::on_rusqlite::configure(conn, s)
}

/// The lookup statement, prepared once.
pub fn prepare(conn: &Connection) -> rusqlite::Result<Statement<'_>> {
    conn.prepare(SELECT_BY_ID)
}

/// One lookup on a statement prepared once: bind, step, decode.
#[inline]
pub fn lookup(stmt: &mut Statement<'_>, id: i64) -> rusqlite::Result<BenchRow> {
    stmt.query_row([id], bench_row)
}

/// The linked SQLite library's version.
pub fn sqlite_version() -> &'static str {
    rusqlite::version()
}
