//! The user's files (`--db`, `--script`, `--init`) as files: opened only as regular files, and
//! the database never by SQLite. Opening a database with SQLite, even read-only, can create
//! its `-wal` and `-shm` beside it or write a reader's mark into a `-shm` a writer shares, so
//! the database and its companions are read as bytes and copied, and SQLite only ever opens the
//! copy. The copy is taken until two reads agree byte for byte (a writer working meanwhile is
//! waited out, then named), which is a consistent snapshot: SQLite itself folds the copied
//! `-wal` in, or rolls the copied hot `-journal` back, when it opens the copy.
//!
//! Nothing here links SQLite: every runner (the core's and the harnesses') copies the same way.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use sha2::{Digest, Sha256};

use crate::error::BenchError;
use crate::opener::{self, Kind};

/// The files SQLite keeps beside a database: what a copy must carry.
pub const COMPANIONS: [&str; 3] = ["", "-wal", "-journal"];

/// The largest script or init file read (a script is text a person writes).
pub const MAX_TEXT: u64 = 64 << 20;
const _: () = assert!(matches!(Kind::Text.bound(), Some(MAX_TEXT)));

/// `path` with `suffix` after its name (`db` + `-wal`).
pub fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// Opens `path` for reading if it is a regular file, without waiting on what is not one (a
/// FIFO opens at once and is refused); `what` names the flag in errors (`--db`).
pub fn open_regular(path: &Path, what: &str) -> Result<File, BenchError> {
    Ok(opener::open(path, what, Kind::Database)?.file)
}

/// The text of a regular file of at most [`MAX_TEXT`] bytes, in UTF-8.
pub fn read_text(path: &Path, what: &str) -> Result<String, BenchError> {
    Ok(opener::read_text(path, what, Kind::Text)?)
}

fn hex(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// Reads `f` to its end, hashing it, and writing it to `out` when given.
fn pass(mut f: File, path: &Path, mut out: Option<&mut File>) -> Result<String, BenchError> {
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f
            .read(&mut buf)
            .map_err(|e| BenchError::Invalid(format!("cannot read {}: {e}", path.display())))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
        if let Some(o) = out.as_deref_mut() {
            o.write_all(&buf[..n]).map_err(|e| {
                BenchError::Invalid(format!("cannot write a copy of {}: {e}", path.display()))
            })?;
        }
    }
    Ok(hex(&h.finalize()))
}

/// The SHA-256 of a regular file, in hex (what `sha256sum` prints).
pub fn sha256(path: &Path, what: &str) -> Result<String, BenchError> {
    pass(open_regular(path, what)?, path, None)
}

/// What `--db` is: a SQLite database, an empty file, or no file at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    Database,
    Empty,
    Missing,
}

/// Checks that `path` is a SQLite database file (its 16-byte header) or an empty file,
/// reading it as a regular file.
pub fn check_database(path: &Path) -> Result<Found, BenchError> {
    if !path.exists() && std::fs::symlink_metadata(path).is_err() {
        return Ok(Found::Missing);
    }
    let f = open_regular(path, "--db")?;
    let mut head = Vec::with_capacity(16);
    f.take(16).read_to_end(&mut head).map_err(|e| {
        BenchError::Invalid(format!("--db {}: cannot read it: {e}", path.display()))
    })?;
    if head.is_empty() {
        return Ok(Found::Empty);
    }
    if head != b"SQLite format 3\0" {
        return Err(BenchError::Invalid(format!(
            "--db {}: not a SQLite database (its first bytes are not \"SQLite format 3\"); \
             allowed: a SQLite 3 database file, or --init FILE to build one",
            path.display()
        )));
    }
    Ok(Found::Database)
}

/// Each companion's digest (`None` where there is no such file).
fn digests(original: &Path, copy_to: Option<&Path>) -> Result<Vec<Option<String>>, BenchError> {
    let mut out = Vec::new();
    for suffix in COMPANIONS {
        let from = with_suffix(original, suffix);
        if !suffix.is_empty() && std::fs::symlink_metadata(&from).is_err() {
            out.push(None);
            continue;
        }
        let f = open_regular(&from, "--db")?;
        let digest = match copy_to {
            Some(to) => {
                let target = with_suffix(to, suffix);
                let mut o = File::create(&target).map_err(|e| {
                    BenchError::Invalid(format!("cannot create {}: {e}", target.display()))
                })?;
                let d = pass(f, &from, Some(&mut o))?;
                o.sync_all().map_err(|e| {
                    BenchError::Invalid(format!("cannot write {}: {e}", target.display()))
                })?;
                d
            }
            None => pass(f, &from, None)?,
        };
        out.push(Some(digest));
    }
    Ok(out)
}

/// Removes `path` and every companion of it.
pub fn remove_copy(path: &Path) {
    for suffix in COMPANIONS.iter().chain(&["-shm"]) {
        let _ = std::fs::remove_file(with_suffix(path, suffix));
    }
}

/// Copies the database at `original` with its `-wal` and `-journal` to `to` (and `to-wal`,
/// `to-journal`), as bytes, until a copy and the read before it agree; returns the SHA-256 of
/// the database file as copied. The original is only read.
pub fn copy_stable(original: &Path, to: &Path) -> Result<String, BenchError> {
    const TRIES: u32 = 20;
    for attempt in 0..TRIES {
        remove_copy(to);
        let before = digests(original, None)?;
        let copied = digests(original, Some(to))?;
        if before == copied {
            return Ok(copied[0].clone().expect("the database itself was read"));
        }
        std::thread::sleep(Duration::from_millis(20 + 20 * u64::from(attempt)));
    }
    remove_copy(to);
    Err(BenchError::Invalid(format!(
        "--db {}: it changed while it was copied, {TRIES} times over 4 s: in use by a writer; run when it has finished",
        original.display()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_not_a_regular_file_is_refused_at_once_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe.db");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // Opened for reading with nobody writing, a FIFO would wait forever.
        let e = check_database(&fifo).unwrap_err().to_string();
        assert!(
            e.contains("pipe.db: a FIFO; allowed: a database file (a regular file)"),
            "{e}"
        );
        let e = read_text(&fifo, "--script").unwrap_err().to_string();
        assert!(e.starts_with("--script ") && e.contains("a FIFO"), "{e}");
        let e = check_database(dir.path()).unwrap_err().to_string();
        assert!(e.contains("a folder"), "{e}");
        let e = read_text(Path::new("/dev/zero"), "--init")
            .unwrap_err()
            .to_string();
        assert!(e.contains("/dev/zero: a device"), "{e}");
        assert_eq!(
            check_database(&dir.path().join("none.db")).unwrap(),
            Found::Missing
        );
        std::fs::write(dir.path().join("empty.db"), b"").unwrap();
        assert_eq!(
            check_database(&dir.path().join("empty.db")).unwrap(),
            Found::Empty
        );
    }

    #[test]
    fn text_files_are_utf8_and_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.sql");
        std::fs::write(&p, b"SELECT 1; -- \xff\n").unwrap();
        let e = read_text(&p, "--script").unwrap_err().to_string();
        assert!(e.contains("not UTF-8 text (byte 13)"), "{e}");
        std::fs::write(&p, "SELECT 'é';").unwrap();
        assert_eq!(read_text(&p, "--script").unwrap(), "SELECT 'é';");
        // The bound itself: a file of exactly MAX_TEXT bytes is read whole, one byte more is
        // refused (never read cut short).
        let limit = usize::try_from(MAX_TEXT).unwrap();
        std::fs::write(&p, vec![b' '; limit]).unwrap();
        assert_eq!(read_text(&p, "--script").unwrap().len(), limit);
        std::fs::write(&p, vec![b' '; limit + 1]).unwrap();
        let e = read_text(&p, "--script").unwrap_err().to_string();
        assert!(e.contains("larger than 64 MiB"), "{e}");
    }

    /// A `--db` that is a symlink to nowhere is not "no file": treated as missing, an
    /// `--init` would create a database wherever the link points.
    #[test]
    fn a_dangling_symlink_is_not_a_missing_database() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("link.db");
        std::os::unix::fs::symlink(dir.path().join("elsewhere/target.db"), &link).unwrap();
        let e = check_database(&link).unwrap_err().to_string();
        assert!(e.contains("link.db: cannot open it"), "{e}");
    }

    /// What an earlier copy left beside the target (a `-wal` SQLite would fold in, a `-shm`)
    /// is removed before copying, and by `remove_copy`.
    #[test]
    fn a_copy_starts_clean_and_is_removed_whole() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("a.db");
        std::fs::write(&db, b"SQLite format 3\0rest").unwrap();
        let to = dir.path().join("copy.db");
        for suffix in ["-wal", "-journal", "-shm"] {
            std::fs::write(with_suffix(&to, suffix), b"stale").unwrap();
        }
        copy_stable(&db, &to).unwrap();
        for suffix in ["-wal", "-journal", "-shm"] {
            assert!(!with_suffix(&to, suffix).exists(), "{suffix}");
        }
        std::fs::write(with_suffix(&to, "-wal"), b"frames").unwrap();
        remove_copy(&to);
        for suffix in COMPANIONS.iter().chain(&["-shm"]) {
            assert!(!with_suffix(&to, suffix).exists(), "{suffix:?}");
        }
    }

    /// A database a writer keeps changing is waited out for the 4 s the message names (20
    /// tries, 20 ms more between each), then refused with nothing copied left behind; one
    /// whose writer stops is copied as it was left.
    #[test]
    fn a_writer_is_waited_out_then_named() {
        use std::io::{Seek, SeekFrom};
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, Ordering};
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("busy.db");
        let mut body = b"SQLite format 3\0".to_vec();
        body.resize(1 << 20, 7);
        std::fs::write(&db, &body).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let writer = {
            let (db, stop) = (db.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut f = std::fs::OpenOptions::new().write(true).open(&db).unwrap();
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    n += 1;
                    f.seek(SeekFrom::Start(100)).unwrap();
                    f.write_all(&n.to_le_bytes()).unwrap();
                }
                n
            })
        };
        let to = dir.path().join("copy.db");
        let started = std::time::Instant::now();
        let e = copy_stable(&db, &to).unwrap_err().to_string();
        let waited = started.elapsed();
        assert!(
            e.contains("changed while it was copied, 20 times over 4 s"),
            "{e}"
        );
        // 20 + 40 + ... + 400 ms of back-off: 4.2 s at least (sleeps are never shorter).
        assert!(waited >= Duration::from_millis(4200), "{waited:?}");
        assert!(!to.exists());
        stop.store(true, Ordering::Relaxed);
        let last = writer.join().unwrap();
        assert!(last > 20, "the writer wrote {last} times");
        copy_stable(&db, &to).unwrap();
        assert_eq!(std::fs::read(&to).unwrap(), std::fs::read(&db).unwrap());
    }

    #[test]
    fn a_copy_carries_the_companions_and_leaves_the_original_folder_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let mine = dir.path().join("mine");
        std::fs::create_dir(&mine).unwrap();
        let db = mine.join("a.db");
        std::fs::write(&db, b"SQLite format 3\0rest").unwrap();
        std::fs::write(with_suffix(&db, "-wal"), b"frames").unwrap();
        let listing = crate::testing::folder_listing;
        let before = listing(&mine);
        let to = dir.path().join("copy.db");
        let sum = copy_stable(&db, &to).unwrap();
        assert_eq!(sum, sha256(&db, "--db").unwrap());
        assert_eq!(std::fs::read(&to).unwrap(), b"SQLite format 3\0rest");
        assert_eq!(std::fs::read(with_suffix(&to, "-wal")).unwrap(), b"frames");
        assert!(!with_suffix(&to, "-journal").exists());
        assert_eq!(listing(&mine), before);
    }
}
