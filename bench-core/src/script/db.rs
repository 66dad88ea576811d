//! The user's database, never written: a script runs on a copy. The original is checked to be
//! a SQLite file, then copied page for page through SQLite's backup API from a read-only
//! connection (one consistent snapshot: a writer's committed pages, its -wal folded in, and
//! nothing half-written), into the cache under its checksum. A script that writes runs each
//! bench on a fresh copy of that copy, so every backend starts from the same rows.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use crate::dataset::remove_db_files;
use crate::error::BenchError;

pub use super::digest::sha256;

/// Checks that `path` is a SQLite database file (its 16-byte header).
pub fn check_is_sqlite(path: &Path) -> Result<(), BenchError> {
    let mut f = std::fs::File::open(path).map_err(|e| {
        BenchError::Invalid(format!("--db {}: cannot open it: {e}", path.display()))
    })?;
    let mut head = [0u8; 16];
    let n = f.read(&mut head).unwrap_or(0);
    if n < 16 || &head != b"SQLite format 3\0" {
        return Err(BenchError::Invalid(format!(
            "--db {}: not a SQLite database (its first bytes are not \"SQLite format 3\"); \
             allowed: a SQLite 3 database file, or --init FILE to build one",
            path.display()
        )));
    }
    Ok(())
}

/// The user's database copied into `cache_dir` (reused while the original's checksum is the
/// same); returns the copy's path and the original's checksum.
pub fn snapshot(original: &Path, cache_dir: &Path) -> Result<(PathBuf, String), BenchError> {
    check_is_sqlite(original)?;
    let sum = sha256(original)?;
    std::fs::create_dir_all(cache_dir)
        .map_err(|e| BenchError::Invalid(format!("cannot create {}: {e}", cache_dir.display())))?;
    let copy = cache_dir.join(format!("script-db-{}.sqlite", &sum[..16]));
    // The -wal's pages are not in the checksum: a file with a -wal beside it is copied anew.
    let wal = wal_of(original);
    if copy.exists() && !wal.exists() {
        return Ok((copy, sum));
    }
    // Built beside the copy under this process's id, as datasets are; what a killed run left
    // there goes first.
    crate::dataset::remove_stale_builds(&copy);
    let tmp = copy.with_extension(format!("tmp{}", std::process::id()));
    remove_db_files(&tmp);
    backup(original, &tmp).inspect_err(|_| remove_db_files(&tmp))?;
    std::fs::rename(&tmp, &copy).map_err(|e| {
        BenchError::Invalid(format!("cannot move the copy to {}: {e}", copy.display()))
    })?;
    Ok((copy, sum))
}

fn wal_of(p: &Path) -> PathBuf {
    let mut s = p.as_os_str().to_owned();
    s.push("-wal");
    PathBuf::from(s)
}

fn backup(original: &Path, to: &Path) -> Result<(), BenchError> {
    let busy = |e: &rusqlite::Error| {
        matches!(
            e.sqlite_error_code(),
            Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
        )
    };
    let src = Connection::open_with_flags(
        original,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| {
        BenchError::Invalid(format!("--db {}: cannot open it: {e}", original.display()))
    })?;
    src.busy_timeout(Duration::from_secs(2))
        .map_err(BenchError::Sqlite)?;
    let mut dst = Connection::open(to)
        .map_err(|e| BenchError::Invalid(format!("cannot create {}: {e}", to.display())))?;
    let b = rusqlite::backup::Backup::new(&src, &mut dst).map_err(BenchError::Sqlite)?;
    b.run_to_completion(1024, Duration::from_millis(10), None)
        .map_err(|e| {
            if busy(&e) {
                BenchError::Invalid(format!(
                    "--db {}: in use by a writer (still locked after 2 s); run when it has finished",
                    original.display()
                ))
            } else {
                BenchError::Driver(format!("copying {}: {e}", original.display()))
            }
        })?;
    drop(b);
    // The copy as a plain file: no -wal of its own left beside it.
    dst.pragma_update(None, "journal_mode", "DELETE")
        .map_err(BenchError::Sqlite)?;
    Ok(())
}

/// Working copies in `dir` whose runner is gone (killed before it could remove them):
/// `script-work-<bench>-<pid>.sqlite` with no process `<pid>` left.
pub fn remove_orphans(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(stem) = name
            .strip_prefix("script-work-")
            .and_then(|n| n.strip_suffix(".sqlite"))
        else {
            continue;
        };
        let pid = stem.rsplit('-').next().and_then(|p| p.parse::<u32>().ok());
        if pid.is_some_and(|pid| !crate::dataset::process_running(pid)) {
            remove_db_files(&e.path());
        }
    }
}

/// A fresh working copy of `snapshot` at `to` (for a script that writes).
pub fn working_copy(snapshot: &Path, to: &Path) -> Result<(), BenchError> {
    remove_db_files(to);
    std::fs::copy(snapshot, to).map_err(|e| {
        BenchError::Invalid(format!(
            "cannot copy {} to {}: {e}",
            snapshot.display(),
            to.display()
        ))
    })?;
    Ok(())
}

/// Builds a database at `path` from the SQL in `init` (`--init FILE`), atomically.
pub fn init(path: &Path, init_file: &Path) -> Result<(), BenchError> {
    let sql = std::fs::read_to_string(init_file).map_err(|e| {
        BenchError::Invalid(format!(
            "--init {}: cannot read it: {e}",
            init_file.display()
        ))
    })?;
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".{}.tmp", std::process::id()));
    let tmp = PathBuf::from(tmp);
    remove_db_files(&tmp);
    let built = (|| {
        let c = Connection::open(&tmp).map_err(BenchError::Sqlite)?;
        c.execute_batch(&sql)
            .map_err(|e| BenchError::Invalid(format!("--init {}: {e}", init_file.display())))?;
        c.close().map_err(|(_, e)| BenchError::Sqlite(e))
    })();
    if let Err(e) = built {
        remove_db_files(&tmp);
        return Err(e);
    }
    std::fs::rename(&tmp, path).map_err(|e| {
        BenchError::Invalid(format!(
            "cannot move the new database to {}: {e}",
            path.display()
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn make(path: &Path, wal: bool) -> Connection {
        let c = Connection::open(path).unwrap();
        if wal {
            c.pragma_update(None, "journal_mode", "WAL").unwrap();
        }
        c.execute_batch(
            "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000)
             INSERT INTO t SELECT i, printf('row %d', i) FROM n;",
        )
        .unwrap();
        c
    }

    fn count(p: &Path) -> i64 {
        Connection::open(p)
            .unwrap()
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap()
    }

    #[test]
    fn the_copy_has_the_rows_and_the_original_is_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("mine.db");
        drop(make(&db, false));
        let before = sha256(&db).unwrap();
        let (copy, sum) = snapshot(&db, &dir.path().join("cache")).unwrap();
        assert_eq!(sum, before);
        assert_eq!(sha256(&db).unwrap(), before);
        assert_eq!(count(&copy), 5000);
        // Reused while the original is the same.
        let (again, _) = snapshot(&db, &dir.path().join("cache")).unwrap();
        assert_eq!(again, copy);
        // A working copy is a fresh file each time.
        let work = dir.path().join("work.db");
        working_copy(&copy, &work).unwrap();
        Connection::open(&work)
            .unwrap()
            .execute("DELETE FROM t", [])
            .unwrap();
        working_copy(&copy, &work).unwrap();
        assert_eq!(count(&work), 5000);
        assert_eq!(sha256(&db).unwrap(), before);
    }

    /// A database another connection holds open in WAL mode, with committed rows still in
    /// its -wal: the copy has them, and the original's bytes stay as they were.
    #[test]
    fn a_wal_database_in_use_is_copied_with_its_wal_folded_in() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("live.db");
        let writer = make(&db, true);
        writer.pragma_update(None, "wal_autocheckpoint", 0).unwrap();
        writer.execute("DELETE FROM t WHERE id > 4000", []).unwrap();
        assert!(wal_of(&db).metadata().unwrap().len() > 0);
        let before = sha256(&db).unwrap();
        let (copy, _) = snapshot(&db, &dir.path().join("cache")).unwrap();
        assert_eq!(count(&copy), 4000);
        assert_eq!(sha256(&db).unwrap(), before);
        assert!(!wal_of(&copy).exists());
    }

    /// A killed runner's working copies go the next time a run opens; a live one's stay.
    #[test]
    fn orphaned_working_copies_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("script-work-rusqlite-999999999.sqlite");
        let mine = dir.path().join(format!(
            "script-work-rusqlite-{}.sqlite",
            std::process::id()
        ));
        let other = dir.path().join("script-db-0123.sqlite");
        for p in [&gone, &mine, &other] {
            std::fs::write(p, b"x").unwrap();
        }
        std::fs::write(
            dir.path().join("script-work-rusqlite-999999999.sqlite-wal"),
            b"x",
        )
        .unwrap();
        remove_orphans(dir.path());
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(left.len(), 2, "{left:?}");
        assert!(mine.exists() && other.exists());
    }

    #[test]
    fn a_file_that_is_not_sqlite_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("notes.txt");
        std::fs::write(&f, "hello, this is not a database").unwrap();
        let e = snapshot(&f, dir.path()).unwrap_err().to_string();
        assert!(e.contains("notes.txt: not a SQLite database"), "{e}");
        let e = snapshot(&dir.path().join("missing.db"), dir.path())
            .unwrap_err()
            .to_string();
        assert!(e.contains("missing.db: cannot open it"), "{e}");
    }

    #[test]
    fn init_builds_a_database_or_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let sql = dir.path().join("init.sql");
        std::fs::write(
            &sql,
            "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t VALUES (1, 'a');",
        )
        .unwrap();
        let db = dir.path().join("new.db");
        init(&db, &sql).unwrap();
        assert_eq!(count(&db), 1);
        std::fs::write(&sql, "CREATE TABLE u(x); INSERT INTO nowhere VALUES (1);").unwrap();
        let bad = dir.path().join("bad.db");
        let e = init(&bad, &sql).unwrap_err().to_string();
        assert!(e.contains("no such table: nowhere"), "{e}");
        assert!(!bad.exists());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }
}
