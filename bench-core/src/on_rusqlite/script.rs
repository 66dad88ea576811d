//! A script's statement on a rusqlite connection, for every backend whose SQL runs through
//! rusqlite (bench-core's, and async-sqlite's in its harness): values bound, every row read
//! and hashed, busy errors told apart.

use bench_core::script::digest::{Cell, Digest};
use bench_core::script::replay::{StmtError, StmtOut};
use bench_core::script::{Kind, Value};
use rusqlite::Connection;

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

/// Runs one statement on a connection: its values bound, every row read and hashed.
pub fn exec_statement(
    c: &Connection,
    sql: &str,
    kind: Kind,
    params: &[Value],
) -> rusqlite::Result<StmtOut> {
    let mut stmt = c.prepare_cached(sql)?;
    for (i, v) in params.iter().enumerate() {
        match v {
            Value::Int(n) => stmt.raw_bind_parameter(i + 1, n)?,
            Value::Double(d) => stmt.raw_bind_parameter(i + 1, d)?,
        }
    }
    let cols = stmt.column_count();
    let mut d = Digest::default();
    {
        let mut rows = stmt.raw_query();
        while let Some(row) = rows.next()? {
            for i in 0..cols {
                use rusqlite::types::ValueRef as V;
                d.cell(match row.get_ref(i)? {
                    V::Null => Cell::Null,
                    V::Integer(n) => Cell::Int(n),
                    V::Real(r) => Cell::Real(r),
                    V::Text(t) => Cell::Text(std::str::from_utf8(t).unwrap_or("\u{fffd}")),
                    V::Blob(b) => Cell::Blob(b),
                });
            }
            d.row();
        }
    }
    drop(stmt);
    let changed = if kind == Kind::Write { c.changes() } else { 0 };
    d.statement(changed);
    Ok(StmtOut {
        hash: d.finish(),
        rows: d.rows(),
        changed,
    })
}

pub fn classify(e: rusqlite::Error) -> StmtError {
    if is_busy(&e) {
        StmtError::Busy
    } else {
        StmtError::Other(e.to_string())
    }
}

/// Rolls back what a failed transaction left open.
pub fn rollback(c: &Connection) {
    if !c.is_autocommit() {
        let _ = c.execute_batch("ROLLBACK");
    }
}
