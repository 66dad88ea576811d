//! Folders of the cache that one process owns: a run's scratch folder (`run-<pid>`), a
//! snapshot's build (`script-db-build-<pid>-<n>`). SQLite reaches a user's data only inside such
//! a folder, through its jail ([`crate::jail::folder`]); the folder goes when its owner drops it,
//! and when its process died before it could, the next process that makes one of its kind
//! removes it.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::BenchError;
use crate::jail::{self, Jail};

/// A folder of the cache this process made and removes.
#[derive(Debug)]
pub struct Scratch {
    path: PathBuf,
    keep: bool,
}

static NEXT: AtomicU64 = AtomicU64::new(0);

/// The pid a folder named `<kind>-<pid>[-<n>]` belongs to.
fn owner(name: &str, kind: &str) -> Option<u32> {
    let rest = name.strip_prefix(kind)?.strip_prefix('-')?;
    rest.split('-').next()?.parse().ok()
}

/// The file every scratch folder holds from when it is made: only a folder holding it is
/// ever removed as one a killed process left (a folder of that name that benchscope did not
/// make, in a cache folder pointed anywhere, is left alone).
const MARK: &str = ".benchscope-scratch";

/// Removes the folders of `kind` in `cache` whose process no longer runs.
pub fn remove_stale(cache: &Path, kind: &str) {
    for name in crate::opener::list(cache).unwrap_or_default() {
        let Some(pid) = name.to_str().and_then(|n| owner(n, kind)) else {
            continue;
        };
        if !crate::dataset::process_running(pid) {
            let p = cache.join(&name);
            let ours = std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_dir())
                && std::fs::symlink_metadata(p.join(MARK)).is_ok_and(|m| m.is_file());
            if ours {
                tracing::warn!(folder = %p.display(), "removing what a killed runner left behind");
                let _ = std::fs::remove_dir_all(&p);
            }
        }
    }
}

fn create(path: &Path) -> Result<(), BenchError> {
    std::fs::create_dir_all(path).map_err(|e| {
        BenchError::Invalid(format!(
            "cannot create {}: {e}",
            crate::text::terminal_str(&path.display().to_string())
        ))
    })
}

/// Makes the scratch folder `path`, marked as one ([`MARK`]).
fn create_marked(path: &Path) -> Result<(), BenchError> {
    create(path)?;
    std::fs::write(path.join(MARK), b"").map_err(|e| {
        BenchError::Invalid(format!(
            "cannot create {}: {e}",
            crate::text::terminal_str(&path.join(MARK).display().to_string())
        ))
    })
}

impl Scratch {
    /// A new folder `<kind>-<pid>-<n>` in `cache` (made if missing), after the stale ones of
    /// its kind are gone.
    pub fn new(cache: &Path, kind: &str) -> Result<Scratch, BenchError> {
        create(cache)?;
        remove_stale(cache, kind);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = cache.join(format!("{kind}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        create_marked(&path)?;
        Ok(Scratch { path, keep: false })
    }

    /// This process's run folder in `cache`: `run-<pid>`, the same for every call; the runner
    /// service removes it when the run ends ([`remove_run_dir`]).
    pub fn run_dir(cache: &Path) -> Result<PathBuf, BenchError> {
        create(cache)?;
        let path = cache.join(format!("run-{}", std::process::id()));
        if !path.is_dir() {
            remove_stale(cache, "run");
            create_marked(&path)?;
        }
        Ok(path)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The jail of this folder.
    pub fn jail(&self) -> Result<Jail, BenchError> {
        jail_of(&self.path)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// Removes this process's run folder in `cache` ([`Scratch::run_dir`]) and all in it.
pub fn remove_run_dir(cache: &Path) {
    let _ = std::fs::remove_dir_all(cache.join(format!("run-{}", std::process::id())));
}

/// The jail of the folder `dir`, as a run's error.
pub fn jail_of(dir: &Path) -> Result<Jail, BenchError> {
    jail::folder(dir).map_err(|e| BenchError::Invalid(e.to_string()))
}

/// The jail of the folder `path` is in.
pub fn jail_for(path: &Path) -> Result<Jail, BenchError> {
    jail_of(
        path.parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new(".")),
    )
}

/// `path` named through the jail of its own folder: a `file:` URI SQLite opens only inside
/// that folder (read-only when asked), for every binding that opens by name.
pub fn jailed_uri(path: &Path, read_only: bool) -> Result<PathBuf, BenchError> {
    Ok(PathBuf::from(jail_for(path)?.uri(path, read_only)))
}

/// The file name of a snapshot in its folder.
pub const SNAPSHOT: &str = "db.sqlite";

/// What a jail's refusal while a copy is settled means to the user.
pub fn refusal_words(r: &crate::jail::Refusal) -> String {
    format!(
        "its journal names {} (a super-journal), outside the copy; benchscope does not let \
         SQLite reach it, and without it the copy cannot be settled: open the database once \
         with the application that wrote it (it finishes or rolls back that transaction), then \
         run again",
        crate::text::terminal_str(&r.path.display().to_string())
    )
}

/// Moves the database built at `built` (alone, no journal beside it) to `path`.
pub fn place(built: &Path, path: &Path) -> Result<(), BenchError> {
    let moved = |e: std::io::Error| {
        BenchError::Invalid(format!(
            "cannot move the new database to {}: {e}",
            path.display()
        ))
    };
    match std::fs::rename(built, path) {
        Ok(()) => Ok(()),
        Err(e) if e.raw_os_error() == Some(libc::EXDEV) => {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            let beside = path.with_file_name(format!(".{name}.benchscope-{}", std::process::id()));
            let copied = crate::opener::copy(built, &beside, "", crate::opener::Kind::Database)
                .map_err(|e| BenchError::Invalid(e.to_string()))
                .and_then(|_| std::fs::rename(&beside, path).map_err(moved));
            if copied.is_err() {
                let _ = std::fs::remove_file(&beside);
            }
            copied
        }
        Err(e) => Err(moved(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dead_process_s_folders_go_and_a_live_one_s_stay() {
        let dir = tempfile::tempdir().unwrap();
        for name in [
            "run-999999999",
            "run-1-0",
            "script-db-build-999999999-3",
            "runner",
        ] {
            std::fs::create_dir(dir.path().join(name)).unwrap();
            std::fs::write(dir.path().join(name).join(MARK), b"").unwrap();
        }
        // A dead pid's name, but not a folder benchscope made: left alone.
        std::fs::create_dir(dir.path().join("run-999999997")).unwrap();
        std::fs::write(dir.path().join("run-999999997/a user's file"), b"kept").unwrap();
        std::fs::write(dir.path().join("run-999999998"), b"a file, not ours").unwrap();
        let mine = Scratch::run_dir(dir.path()).unwrap();
        assert!(mine.is_dir());
        let mut left = crate::opener::list(dir.path()).unwrap();
        left.sort();
        // pid 1 runs (init); a file of that name is not a folder of ours.
        let want: Vec<std::ffi::OsString> = vec![
            "run-1-0".into(),
            format!("run-{}", std::process::id()).into(),
            "run-999999997".into(),
            "run-999999998".into(),
            "runner".into(),
            "script-db-build-999999999-3".into(),
        ];
        assert_eq!(left, want);
        let s = Scratch::new(dir.path(), "script-db-build").unwrap();
        assert!(!dir.path().join("script-db-build-999999999-3").exists());
        let p = s.path().to_path_buf();
        assert!(p.is_dir());
        drop(s);
        assert!(!p.exists());
        remove_run_dir(dir.path());
        assert!(!mine.exists());
    }
}
