//! The lookup through SQLite's C API itself, as a C program would make it: the statement
//! prepared once; per lookup `sqlite3_bind_int64`, `sqlite3_step`, the column reads (the name
//! as a pointer and a length, no copy) and `sqlite3_reset`. It runs on the connection rusqlite
//! opened with the run's settings, through rusqlite's own bundled SQLite (`rusqlite::ffi`), so
//! the difference to the rusqlite bench is rusqlite's own cost: its statement handling, row
//! mapping and the name's `String`.

use std::ffi::{CStr, CString, c_int};
use std::ptr;

use rusqlite::{Connection, ffi};

use crate::dataset::SELECT_BY_ID;
use crate::error::BenchError;

/// The lookup statement, prepared once, with the connection it belongs to (the statement is
/// finalized before the connection closes).
pub struct Lookup {
    db: *mut ffi::sqlite3,
    stmt: *mut ffi::sqlite3_stmt,
    _conn: Connection,
}

impl Lookup {
    pub fn prepare(conn: Connection) -> Result<Lookup, BenchError> {
        // SAFETY: the handle stays valid while `conn` lives, and we own it; SQLite is used
        // from one thread at a time (the struct is not Sync).
        let db = unsafe { conn.handle() };
        let sql = CString::new(SELECT_BY_ID).expect("no NUL in the SQL");
        let mut stmt = ptr::null_mut();
        let rc =
            unsafe { ffi::sqlite3_prepare_v2(db, sql.as_ptr(), -1, &mut stmt, ptr::null_mut()) };
        if rc != ffi::SQLITE_OK {
            return Err(error(db, "sqlite3_prepare_v2", rc));
        }
        Ok(Lookup {
            db,
            stmt,
            _conn: conn,
        })
    }

    /// One lookup; what it read, folded as [`crate::dataset::BenchRow::checksum`] folds it.
    #[inline]
    pub fn lookup(&mut self, id: i64) -> Result<u64, BenchError> {
        // SAFETY: `stmt` is a live statement of `db` with one parameter and four columns;
        // column values are read before the reset that invalidates them.
        unsafe {
            let rc = ffi::sqlite3_bind_int64(self.stmt, 1, id);
            if rc != ffi::SQLITE_OK {
                return Err(error(self.db, "sqlite3_bind_int64", rc));
            }
            let rc = ffi::sqlite3_step(self.stmt);
            if rc != ffi::SQLITE_ROW {
                let e = if rc == ffi::SQLITE_DONE {
                    BenchError::Other(format!("sqlite3_c: no row with id {id}"))
                } else {
                    error(self.db, "sqlite3_step", rc)
                };
                ffi::sqlite3_reset(self.stmt);
                return Err(e);
            }
            let got = ffi::sqlite3_column_int64(self.stmt, 0);
            // The text first, then its length in bytes, as SQLite's documentation orders them.
            let name = ffi::sqlite3_column_text(self.stmt, 1);
            let name_len = if name.is_null() {
                0
            } else {
                ffi::sqlite3_column_bytes(self.stmt, 1)
            };
            let score = ffi::sqlite3_column_double(self.stmt, 2);
            let active = ffi::sqlite3_column_int64(self.stmt, 3) != 0;
            let rc = ffi::sqlite3_reset(self.stmt);
            if rc != ffi::SQLITE_OK {
                return Err(error(self.db, "sqlite3_reset", rc));
            }
            Ok((got as u64)
                .wrapping_add(name_len as u64)
                .wrapping_add((score * 2.0) as u64)
                .wrapping_add(active as u64))
        }
    }
}

impl Drop for Lookup {
    fn drop(&mut self) {
        // SAFETY: finalized once, before the connection (a field, dropped after this) closes.
        unsafe {
            ffi::sqlite3_finalize(self.stmt);
        }
    }
}

fn error(db: *mut ffi::sqlite3, call: &str, rc: c_int) -> BenchError {
    // SAFETY: sqlite3_errmsg returns a NUL-terminated string owned by the connection.
    let msg = unsafe { CStr::from_ptr(ffi::sqlite3_errmsg(db)) }
        .to_string_lossy()
        .into_owned();
    BenchError::Other(format!("{call} failed ({rc}): {msg}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::row;

    #[test]
    fn reads_what_rusqlite_reads() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE test(id INTEGER PRIMARY KEY, name TEXT NOT NULL, score REAL NOT NULL, active INTEGER NOT NULL);",
        )
        .unwrap();
        for id in 1..=50i64 {
            let r = row(id);
            conn.execute(
                "INSERT INTO test VALUES (?1, ?2, ?3, ?4)",
                rusqlite::params![r.id, r.name, r.score, r.active],
            )
            .unwrap();
        }
        let mut l = Lookup::prepare(conn).unwrap();
        for id in [1, 7, 50, 7] {
            assert_eq!(l.lookup(id).unwrap(), row(id).checksum());
        }
        assert_eq!(
            l.lookup(51).unwrap_err().to_string(),
            "sqlite3_c: no row with id 51"
        );
        // The statement is usable after a miss.
        assert_eq!(l.lookup(2).unwrap(), row(2).checksum());
    }
}
