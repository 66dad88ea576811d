//! The user's database, never written and never opened by SQLite: its bytes (with its -wal
//! and -journal) are copied into the cache until two reads agree ([`super::original`]), and
//! SQLite opens only that copy, folding the -wal in (or rolling a hot journal back) and
//! settling it in the run's journal mode: the snapshot, kept under the original's checksum.
//! A script that only reads runs every bench on the snapshot, opened read-only; a script
//! that writes runs each bench on a fresh copy of it, so every backend starts from the same
//! rows.

use std::path::{Path, PathBuf};

use rusqlite::Connection;

use crate::dataset::remove_db_files;
use crate::error::BenchError;
use crate::scratch::{SNAPSHOT, Scratch, place, refusal_words};

use super::original::{self, Found};

/// The journal mode a snapshot is kept in: a read-only connection can use a WAL file, but
/// cannot turn a file into one (or out of one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SnapshotMode {
    Wal,
    Rollback,
}

impl SnapshotMode {
    /// The mode a run's `journal_mode` knob calls for.
    pub fn for_journal(journal_mode: &str) -> SnapshotMode {
        if journal_mode.eq_ignore_ascii_case("wal") {
            SnapshotMode::Wal
        } else {
            SnapshotMode::Rollback
        }
    }

    fn name(self) -> &'static str {
        match self {
            SnapshotMode::Wal => "wal",
            SnapshotMode::Rollback => "rollback",
        }
    }
}

/// Checks that `path` is a SQLite database file (its 16-byte header), reading it as a
/// regular file.
pub fn check_is_sqlite(path: &Path) -> Result<(), BenchError> {
    match original::check_database(path)? {
        Found::Database => Ok(()),
        Found::Empty => Err(BenchError::Invalid(format!(
            "--db {}: an empty file; allowed: a SQLite 3 database file, or --init FILE to build one there",
            path.display()
        ))),
        Found::Missing => Err(BenchError::Invalid(format!(
            "--db {}: no such file (allowed: an existing SQLite database, or --init FILE to build it)",
            path.display()
        ))),
    }
}

/// The folder a snapshot of the database whose checksum is `sum` lives in, in `mode`.
fn home(cache_dir: &Path, sum: &str, mode: SnapshotMode) -> PathBuf {
    cache_dir.join(format!("script-db-{}-{}", &sum[..16], mode.name()))
}

/// The user's database copied into a folder of its own in `cache_dir` (`script-db-<sum>-<mode>/
/// db.sqlite`) in `mode` (reused while the original's checksum is the same and nothing beside
/// it is pending); returns the copy's path and the original's checksum. SQLite settles the copy
/// in a build folder of this process's, jailed there ([`crate::jail`]): whatever the copied
/// journal names, it reaches nothing outside that folder.
pub fn snapshot(
    original: &Path,
    cache_dir: &Path,
    mode: SnapshotMode,
) -> Result<(PathBuf, String), BenchError> {
    check_is_sqlite(original)?;
    let sum = original::sha256(original, "--db")?;
    let copy = home(cache_dir, &sum, mode).join(SNAPSHOT);
    // The -wal's and -journal's pages are not in the checksum: with either beside the
    // original it is copied anew.
    let pending = ["-wal", "-journal"]
        .iter()
        .any(|s| std::fs::symlink_metadata(original::with_suffix(original, s)).is_ok());
    if copy.is_file() && !pending {
        return Ok((copy, sum));
    }
    // Built in a folder of this process's own (what a killed run left goes first).
    let build = Scratch::new(cache_dir, "script-db-build")?;
    let tmp = build.path().join(SNAPSHOT);
    let sum = original::copy_stable(original, &tmp)?;
    settle(&tmp, mode).map_err(|e| {
        BenchError::Invalid(format!(
            "--db {}: SQLite cannot read its copy: {e}",
            original.display()
        ))
    })?;
    let dir = home(cache_dir, &sum, mode);
    std::fs::create_dir_all(&dir)
        .map_err(|e| BenchError::Invalid(format!("cannot create {}: {e}", dir.display())))?;
    let copy = dir.join(SNAPSHOT);
    std::fs::rename(&tmp, &copy).map_err(|e| {
        BenchError::Invalid(format!("cannot move the copy to {}: {e}", copy.display()))
    })?;
    Ok((copy, sum))
}

/// Opens the byte copy at `path` (ours, alone in a folder of ours) read-write, jailed in that
/// folder: SQLite folds a copied -wal in, or rolls a copied hot journal back; then the file is
/// put in `mode`, checked, and closed with nothing left beside it. A journal that names a file
/// outside the folder (a super-journal) is refused by the jail, and the copy with it: SQLite
/// would have played it back only if that file existed.
fn settle(path: &Path, mode: SnapshotMode) -> Result<(), String> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let jail = crate::jail::folder(dir).map_err(|e| e.to_string())?;
    let settled = (|| {
        let c = Connection::open_with_flags_and_vfs(
            path,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
            jail.name(),
        )?;
        c.pragma_update(None, "journal_mode", "DELETE")?;
        let ok: String = c.query_row("PRAGMA quick_check", [], |r| r.get(0))?;
        if ok != "ok" {
            return Err(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CORRUPT),
                Some(format!("quick_check: {ok}")),
            ));
        }
        if mode == SnapshotMode::Wal {
            c.pragma_update(None, "journal_mode", "WAL")?;
        }
        c.close().map_err(|(_, e)| e)
    })();
    if let Some(r) = jail.refusals().first() {
        return Err(refusal_words(r));
    }
    settled.map_err(|e| e.to_string())
}

/// Working copies in `dir` whose runner is gone (killed before it could remove them):
/// `script-work-<bench>-<pid>.sqlite` with no process `<pid>` left.
pub fn remove_orphans(dir: &Path) {
    let Ok(entries) = crate::opener::list(dir) else {
        return;
    };
    for name in entries {
        let name = name.to_string_lossy().into_owned();
        let Some(stem) = name
            .strip_prefix("script-work-")
            .and_then(|n| n.strip_suffix(".sqlite"))
        else {
            continue;
        };
        let pid = stem.rsplit('-').next().and_then(|p| p.parse::<u32>().ok());
        if pid.is_some_and(|pid| !crate::dataset::process_running(pid)) {
            remove_db_files(&dir.join(&name));
        }
    }
}

/// A fresh working copy of `snapshot` at `to` (for a script that writes).
pub fn working_copy(snapshot: &Path, to: &Path) -> Result<(), BenchError> {
    remove_db_files(to);
    crate::opener::copy(snapshot, to, "", crate::opener::Kind::Database).map_err(|e| {
        BenchError::Invalid(format!(
            "cannot copy {} to {}: {e}",
            snapshot.display(),
            to.display()
        ))
    })?;
    Ok(())
}

/// Builds a database at `path` from the SQL in `init` (`--init FILE`): in a folder of this
/// process's in `cache_dir`, SQLite jailed there and each statement judged as it runs (see
/// `judge::run_init`); refused when it makes no table; then moved in place whole (over an empty
/// file there, which is not a database). Nothing is left beside `path` when it fails or is
/// interrupted: the database is built away from it and arrives by one rename (or, across file
/// systems, as a copy into a hidden temporary file beside it, renamed).
pub fn init(path: &Path, init_file: &Path, cache_dir: &Path) -> Result<(), BenchError> {
    let sql = original::read_text(init_file, "--init")?;
    let build = Scratch::new(cache_dir, "init-build")?;
    let tmp = build.path().join(SNAPSHOT);
    super::judge::build(&tmp, &sql)
        .map_err(|e| BenchError::Invalid(format!("--init {}: {e}", init_file.display())))?;
    place(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sha256(p: &Path) -> Result<String, BenchError> {
        original::sha256(p, "--db")
    }

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
    fn the_copy_has_the_rows_and_the_original_folder_is_untouched() {
        for (mode, wal) in [(SnapshotMode::Rollback, false), (SnapshotMode::Wal, true)] {
            let dir = tempfile::tempdir().unwrap();
            let mine = dir.path().join("mine");
            std::fs::create_dir(&mine).unwrap();
            let db = mine.join("mine.db");
            // Closed cleanly: a WAL database with no -wal or -shm beside it, which opening
            // it with SQLite (even read-only) would create.
            drop(make(&db, wal));
            let before = crate::testing::folder_listing(&mine);
            assert_eq!(before.len(), 1, "{mode:?}");
            let cache = dir.path().join("cache");
            let (copy, sum) = snapshot(&db, &cache, mode).unwrap();
            assert_eq!(sum, sha256(&db).unwrap());
            assert_eq!(count(&copy), 5000);
            assert!(
                copy.display()
                    .to_string()
                    .ends_with(&format!("-{}/db.sqlite", mode.name()))
            );
            // Reused while the original is the same.
            let (again, _) = snapshot(&db, &cache, mode).unwrap();
            assert_eq!(again, copy);
            // Opened read-only by name, it reads and cannot be written.
            let ro = Connection::open(crate::scratch::jailed_uri(&copy, true).unwrap()).unwrap();
            let n: i64 = ro
                .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
                .unwrap();
            assert_eq!(n, 5000);
            let e = ro.execute("DELETE FROM t", []).unwrap_err().to_string();
            assert!(e.contains("readonly"), "{e}");
            drop(ro);
            // A working copy is a fresh file each time.
            let work = dir.path().join("work.db");
            working_copy(&copy, &work).unwrap();
            Connection::open(&work)
                .unwrap()
                .execute("DELETE FROM t", [])
                .unwrap();
            working_copy(&copy, &work).unwrap();
            assert_eq!(count(&work), 5000);
            assert_eq!(crate::testing::folder_listing(&mine), before, "{mode:?}");
        }
    }

    /// A database another connection holds open in WAL mode, with committed rows still in
    /// its -wal: the copy has them, and not a byte of the original's folder changes (its
    /// -shm, which readers through SQLite would mark, included).
    #[test]
    fn a_wal_database_in_use_is_copied_with_its_wal_folded_in() {
        let dir = tempfile::tempdir().unwrap();
        let mine = dir.path().join("mine");
        std::fs::create_dir(&mine).unwrap();
        let db = mine.join("live.db");
        let writer = make(&db, true);
        writer.pragma_update(None, "wal_autocheckpoint", 0).unwrap();
        writer.execute("DELETE FROM t WHERE id > 4000", []).unwrap();
        assert!(original::with_suffix(&db, "-wal").metadata().unwrap().len() > 0);
        let before = crate::testing::folder_listing(&mine);
        for mode in [SnapshotMode::Rollback, SnapshotMode::Wal] {
            let (copy, _) = snapshot(&db, &dir.path().join("cache"), mode).unwrap();
            assert_eq!(count(&copy), 4000);
        }
        assert_eq!(crate::testing::folder_listing(&mine), before);
        let cache: Vec<String> = crate::testing::folder_listing(&dir.path().join("cache"))
            .into_iter()
            .map(|(n, _, _)| n)
            .collect();
        assert!(
            cache.iter().all(|n| n.starts_with("script-db-")),
            "{cache:?}"
        );
    }

    /// A copied hot journal (a writer died in a transaction) is rolled back in the copy.
    #[test]
    fn a_hot_journal_is_rolled_back_in_the_copy_not_in_the_original() {
        let dir = tempfile::tempdir().unwrap();
        let mine = dir.path().join("mine");
        std::fs::create_dir(&mine).unwrap();
        let db = mine.join("j.db");
        drop(make(&db, false));
        let clean = std::fs::read(&db).unwrap();
        // A transaction's pages written to the file, its journal beside it: what a crash
        // in the middle of a commit leaves.
        let c = Connection::open(&db).unwrap();
        c.execute_batch("PRAGMA cache_size = 1; BEGIN; DELETE FROM t;")
            .unwrap();
        let journal = original::with_suffix(&db, "-journal");
        let torn = std::fs::read(&db).unwrap();
        let hot = std::fs::read(&journal).unwrap();
        c.execute_batch("ROLLBACK").unwrap();
        drop(c);
        std::fs::write(&db, &torn).unwrap();
        std::fs::write(&journal, &hot).unwrap();
        assert_ne!(torn, clean, "the transaction spilled to the file");
        let before = crate::testing::folder_listing(&mine);
        let (copy, _) = snapshot(&db, &dir.path().join("cache"), SnapshotMode::Rollback).unwrap();
        assert_eq!(count(&copy), 5000);
        assert_eq!(crate::testing::folder_listing(&mine), before);
    }

    /// A copied journal that names a user's file as its super-journal: SQLite, jailed in the
    /// build's folder, is not let reach it; the copy is refused with what it named, the file is
    /// as it was, and nothing is left in the cache.
    #[test]
    fn a_journal_naming_a_file_outside_the_copy_is_refused_and_the_file_kept() {
        let dir = tempfile::tempdir().unwrap();
        let mine = dir.path().join("mine");
        std::fs::create_dir(&mine).unwrap();
        let victim = mine.join("thesis.tex");
        std::fs::write(&victim, "years of work").unwrap();
        let db = mine.join("app.db");
        drop(make(&db, false));
        let page: u32 = Connection::open(&db)
            .unwrap()
            .query_row("PRAGMA page_size", [], |r| r.get(0))
            .unwrap();
        crate::testing::hot_journal(&db, page, victim.as_os_str().as_encoded_bytes());
        let before = crate::testing::folder_listing(&mine);
        let cache = dir.path().join("cache");
        for mode in [SnapshotMode::Rollback, SnapshotMode::Wal] {
            let e = snapshot(&db, &cache, mode).unwrap_err().to_string();
            assert!(
                e.contains(&format!(
                    "its journal names {} (a super-journal)",
                    victim.display()
                )),
                "{e}"
            );
            assert_eq!(crate::testing::folder_listing(&mine), before);
        }
        assert_eq!(std::fs::read_dir(&cache).unwrap().count(), 0);
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
        let e = snapshot(&f, dir.path(), SnapshotMode::Wal)
            .unwrap_err()
            .to_string();
        assert!(e.contains("notes.txt: not a SQLite database"), "{e}");
        let e = snapshot(
            &dir.path().join("missing.db"),
            dir.path(),
            SnapshotMode::Wal,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("missing.db: no such file"), "{e}");
        std::fs::write(&f, "").unwrap();
        let e = snapshot(&f, dir.path(), SnapshotMode::Wal)
            .unwrap_err()
            .to_string();
        assert!(e.contains("notes.txt: an empty file"), "{e}");
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
        let cache = tempfile::tempdir().unwrap();
        let cache = cache.path();
        init(&db, &sql, cache).unwrap();
        assert_eq!(count(&db), 1);
        std::fs::write(&sql, "CREATE TABLE u(x); INSERT INTO nowhere VALUES (1);").unwrap();
        let bad = dir.path().join("bad.db");
        let e = init(&bad, &sql, cache).unwrap_err().to_string();
        assert!(
            e.contains("statement 2") && e.contains("no such table: nowhere"),
            "{e}"
        );
        assert!(!bad.exists());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
        // Nothing is left in the cache either: the build's folder goes with it.
        assert_eq!(std::fs::read_dir(cache).unwrap().count(), 0);
        // An init that makes no table is refused, and nothing is written at --db.
        std::fs::write(&sql, "PRAGMA user_version = 3;").unwrap();
        let e = init(&bad, &sql, cache).unwrap_err().to_string();
        assert!(e.contains("it makes no table"), "{e}");
        assert!(!bad.exists());
        // An init file builds a database; it cannot reach another file, load code or
        // write one elsewhere, whatever hides the words from a reader.
        let mine = dir.path().join("mine");
        std::fs::create_dir(&mine).unwrap();
        drop(make(&mine.join("other.db"), false));
        let bad = mine.join("new.db");
        let listing = crate::testing::folder_listing(&mine);
        let m = mine.display();
        for (sql, why) in [
            (
                format!("CREATE TABLE a(x); /**/ATTACH '{m}/other.db' AS o; DELETE FROM o.t;"),
                "ATTACH",
            ),
            (
                format!("CREATE TABLE a(x);\n-- a comment\nVACUUM INTO '{m}/copied.db';"),
                "VACUUM INTO",
            ),
            (
                "CREATE TABLE a(x); SELECT load_extension('/tmp/x.so');".to_string(),
                "load_extension",
            ),
        ] {
            std::fs::write(sql_path(dir.path()), &sql).unwrap();
            let e = init(&bad, &sql_path(dir.path()), cache)
                .unwrap_err()
                .to_string();
            assert!(e.contains(why), "{sql}: {e}");
            assert_eq!(crate::testing::folder_listing(&mine), listing, "{sql}");
        }
        // An empty file at --db is no database: --init builds one in its place.
        let empty = dir.path().join("empty.db");
        std::fs::write(&empty, b"").unwrap();
        std::fs::write(
            &sql,
            "CREATE TABLE t(id INTEGER PRIMARY KEY); INSERT INTO t VALUES (7);",
        )
        .unwrap();
        init(&empty, &sql, cache).unwrap();
        assert_eq!(count(&empty), 1);
        assert_eq!(std::fs::read_dir(cache).unwrap().count(), 0);
    }

    fn sql_path(dir: &Path) -> PathBuf {
        dir.join("init.sql")
    }
}
