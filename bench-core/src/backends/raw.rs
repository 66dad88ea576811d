//! Raw rusqlite on one connection: the floor every other path is compared against. Every
//! rusqlite connection of every bench is opened here, with the run's SQLite settings.

use std::collections::BTreeMap;

use rusqlite::{Connection, OpenFlags, Statement};

use crate::dataset::{BenchRow, SELECT_BY_ID, bench_row};
use crate::settings::{self, SqliteSettings};

/// Opens a connection the way every rusqlite bench does: the run's mutex choice as open
/// flags, then its pragmas, and room for the benches' cached statements.
pub fn open(path: &std::path::Path, s: &SqliteSettings) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(path, flags(s))?;
    apply(&conn, s)?;
    conn.set_prepared_statement_cache_capacity(32);
    Ok(conn)
}

/// The open flags of every rusqlite connection: read-write, URIs, and the run's mutex choice.
pub fn flags(s: &SqliteSettings) -> OpenFlags {
    let mutex = if s.no_mutex {
        OpenFlags::SQLITE_OPEN_NO_MUTEX
    } else {
        OpenFlags::SQLITE_OPEN_FULL_MUTEX
    };
    OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_URI
        | mutex
}

/// Applies the run's pragmas to a connection (one opened by a pool, say).
pub fn apply(conn: &Connection, s: &SqliteSettings) -> rusqlite::Result<()> {
    for (name, value) in s.pragmas() {
        conn.pragma_update(None, name, value)?;
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knobs::resolve;

    #[test]
    fn connections_run_with_the_settings_asked_for() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sqlite");
        for overrides in [
            vec![],
            vec![
                ("journal_mode", "delete"),
                ("synchronous", "full"),
                ("cache_size", "4000"),
                ("mmap_size", "1m"),
                ("sqlite_mutex", "full"),
            ],
            vec![("journal_mode", "memory"), ("synchronous", "off")],
        ] {
            let o: Vec<(String, String)> = overrides
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            let s = SqliteSettings::from_knobs(&resolve(&settings::KNOBS, &|_| None, &o).unwrap());
            let conn = open(&path, &s).unwrap();
            assert_eq!(read_back(&conn), s.expected(), "{overrides:?}");
        }
    }
}
