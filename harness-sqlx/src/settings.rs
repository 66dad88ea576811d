//! The run's SQLite settings on sqlx connections: every pragma through sqlx's connect options
//! (which apply them to each connection the pool opens), the mutex as sqlx's `serialized`, and
//! what a connection reads back.

use std::collections::BTreeMap;

use bench_core::BenchError;
use bench_core::settings::{self, SqliteSettings};
use sqlx::Row;
use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection};

/// `options` with the run's settings.
pub fn apply(mut options: SqliteConnectOptions, s: &SqliteSettings) -> SqliteConnectOptions {
    for (name, value) in s.pragmas() {
        options = options.pragma(name, value);
    }
    options.serialized(!s.no_mutex).read_only(s.read_only)
}

/// The settings a sqlx connection runs with, read back from it.
pub async fn read_back(
    conn: &mut SqliteConnection,
) -> Result<BTreeMap<String, String>, BenchError> {
    let mut out = BTreeMap::new();
    for name in settings::NAMES.iter().filter(|n| **n != "mutex") {
        let row = sqlx::query(sqlx::AssertSqlSafe(format!("PRAGMA {name}")))
            .fetch_optional(&mut *conn)
            .await
            .map_err(BenchError::driver)?;
        // A setting the database cannot have (an in-memory database has no memory map)
        // answers with no row, as rusqlite's read-back reports it.
        let value = match row {
            Some(row) => settings::normalize(
                name,
                &row.try_get::<String, _>(0)
                    .or_else(|_| row.try_get::<i64, _>(0).map(|i| i.to_string()))
                    .map_err(BenchError::driver)?,
            ),
            None => settings::UNSUPPORTED.to_string(),
        };
        out.insert(name.to_string(), value);
    }
    let mut handle = conn.lock_handle().await.map_err(BenchError::driver)?;
    // SAFETY: the handle is locked for this call, and sqlite3_db_mutex only reads the
    // connection's mutex pointer.
    let no_mutex =
        unsafe { libsqlite3_sys::sqlite3_db_mutex(handle.as_raw_handle().as_ptr()).is_null() };
    out.insert("mutex".into(), settings::mutex_name(no_mutex).into());
    Ok(out)
}
