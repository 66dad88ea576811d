//! Writing result files atomically: snapshots (temp file, then linked into place, never over
//! an existing file: a numbered suffix is added instead), and exports to a path the user named
//! (temp file, then renamed over it).

use std::io::Write;
use std::path::{Path, PathBuf};

/// Whether a file can be written at `p` (by [`write_atomic`]), checked before a run measures
/// rather than found out after: its folder exists and takes a new file, and `p` is no folder.
pub fn check_writable(p: &Path) -> Result<(), String> {
    let dir = p
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if dir.exists() && !dir.is_dir() {
        return Err(format!(
            "cannot write {}: {} is a file, not a folder",
            p.display(),
            dir.display()
        ));
    }
    if !dir.is_dir() {
        return Err(format!(
            "cannot write {}: the folder {} does not exist",
            p.display(),
            dir.display()
        ));
    }
    if p.is_dir() {
        return Err(format!("cannot write {}: it is a folder", p.display()));
    }
    // A regular file goes through a temp file beside it: the folder must take one now, not
    // after the run has measured for minutes.
    if !p.exists() || std::fs::metadata(p).is_ok_and(|m| m.is_file()) {
        let probe = dir.join(format!(".benchscope-probe-{}", std::process::id()));
        std::fs::File::create(&probe).map_err(|e| {
            format!(
                "cannot write {}: the folder {} takes no new file: {e}",
                p.display(),
                dir.display()
            )
        })?;
        let _ = std::fs::remove_file(&probe);
    }
    Ok(())
}

/// Reads a JSON document benchscope saved (or Criterion did) through the opener: a regular
/// file only (a FIFO, folder or device refused by what it is), at most 64 MiB, and JSON; each
/// refusal names the path and what is allowed.
pub fn read_document(path: &Path) -> Result<(String, serde_json::Value), String> {
    document(path, bench_core::opener::read_text)
}

/// [`read_document`] of a file found in a folder (a Criterion tree's, a saved baseline): a
/// link there is refused ([`bench_core::opener::read_text_found`]).
pub fn read_found_document(path: &Path) -> Result<(String, serde_json::Value), String> {
    document(path, bench_core::opener::read_text_found)
}

type ReadText =
    fn(&Path, &str, bench_core::opener::Kind) -> Result<String, bench_core::opener::OpenError>;

fn document(path: &Path, read: ReadText) -> Result<(String, serde_json::Value), String> {
    use bench_core::opener::{Kind, Why};
    let text = read(path, "", Kind::Document).map_err(|e| match e.why {
        Why::NotRegular("a folder") => format!(
            "cannot read {}: it is a folder (allowed here: a JSON file)",
            path.display()
        ),
        Why::Open(_) | Why::Read(_) => format!("cannot read {}", e.to_string().trim_start()),
        _ => e.to_string(),
    })?;
    let v =
        serde_json::from_str(&text).map_err(|e| format!("{} is not JSON: {e}", path.display()))?;
    Ok((text, v))
}

/// Refuses a document whose `schema_version` this build cannot read: missing, 0, or newer
/// than `known` (written by a newer benchscope).
pub fn check_version(v: &serde_json::Value, schema: &str, known: u32) -> Result<(), String> {
    match v.get("schema_version").and_then(serde_json::Value::as_u64) {
        Some(n) if (1..=u64::from(known)).contains(&n) => Ok(()),
        Some(n) if n > u64::from(known) => Err(format!(
            "{schema} schema_version {n} is newer than this benchscope reads (allowed: 1 to {known}); read it with the benchscope that wrote it, or a newer one"
        )),
        _ => Err(format!(
            "{schema} without a valid schema_version (found {}; allowed: a whole number from 1 to {known})",
            v.get("schema_version").unwrap_or(&serde_json::Value::Null)
        )),
    }
}

/// Writes `contents` as `dir/stem{-n}.ext` for each `(ext, contents)`, choosing the first `n`
/// for which none of the files exist. Returns the paths written.
pub fn write_new(dir: &Path, stem: &str, files: &[(&str, &str)]) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    for n in 1..1000 {
        let base = if n == 1 {
            stem.to_string()
        } else {
            format!("{stem}-{n}")
        };
        let paths: Vec<PathBuf> = files
            .iter()
            .map(|(ext, _)| dir.join(format!("{base}.{ext}")))
            .collect();
        if paths.iter().any(|p| p.exists()) {
            continue;
        }
        let mut written = Vec::new();
        for (path, (_, contents)) in paths.iter().zip(files) {
            match write_no_clobber(path, contents) {
                Ok(true) => written.push(path.clone()),
                Ok(false) => {
                    // Lost a race for this name: undo and try the next one.
                    for w in &written {
                        let _ = std::fs::remove_file(w);
                    }
                    written.clear();
                    break;
                }
                Err(e) => return Err(e),
            }
        }
        if written.len() == files.len() {
            return Ok(written);
        }
    }
    Err(format!("no free file name for {stem} in {}", dir.display()))
}

/// The first of `stem`, `stem-2`, `stem-3`... for which no `dir/<stem>.<ext>` exists.
pub fn free_stem(dir: &Path, stem: &str, exts: &[&str]) -> String {
    (1..1000)
        .map(|n| {
            if n == 1 {
                stem.to_string()
            } else {
                format!("{stem}-{n}")
            }
        })
        .find(|s| exts.iter().all(|e| !dir.join(format!("{s}.{e}")).exists()))
        .unwrap_or_else(|| stem.to_string())
}

/// Writes `contents` to `path` through a synced temp file beside it renamed into place: a
/// reader sees the old file or the new one, never half of it. A path that is a device or a
/// pipe (`/dev/stdout`, `/dev/full`, a FIFO a process reads) is written in place, never
/// replaced, and opened without waiting ([`bench_core::opener::open_device`]: a FIFO no
/// process reads is refused at once, a socket by what it is).
pub fn write_atomic(path: &Path, contents: impl AsRef<[u8]>) -> Result<(), String> {
    let contents = contents.as_ref();
    if let Ok(meta) = std::fs::metadata(path) {
        if meta.is_dir() {
            return Err(format!("cannot write {}: it is a folder", path.display()));
        }
        if !meta.is_file() {
            return bench_core::opener::open_device(path, "")
                .map_err(|e| e.to_string())?
                .write_all(contents)
                .map_err(|e| format!("cannot write {}: {e}", path.display()));
        }
    }
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .ok_or_else(|| format!("{} names no file", path.display()))?;
    let tmp = dir.join(format!(
        ".{}.tmp{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| {
        let mut f = fresh(&tmp)?;
        f.write_all(contents)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// A temp file made new at `tmp`: one left there by a crashed write is removed first, and
/// whatever else is there (a link planted to a file elsewhere) is never opened through.
fn fresh(tmp: &Path) -> std::io::Result<std::fs::File> {
    if std::fs::symlink_metadata(tmp).is_ok_and(|m| m.is_file()) {
        let _ = std::fs::remove_file(tmp);
    }
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(tmp)
}

/// Writes a temp file, syncs it, and hard-links it to `path`, which fails if `path` exists.
/// Returns Ok(false) when `path` already exists.
fn write_no_clobber(path: &Path, contents: &str) -> Result<bool, String> {
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let result = (|| {
        let mut f = fresh(&tmp)?;
        f.write_all(contents.as_bytes())?;
        f.sync_all()?;
        std::fs::hard_link(&tmp, path)
    })();
    let _ = std::fs::remove_file(&tmp);
    match result {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(format!("cannot write {}: {e}", path.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_atomic_write_replaces_the_file_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("report.md");
        write_atomic(&p, "one").unwrap();
        write_atomic(&p, "two").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "two");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        let e = write_atomic(&dir.path().join("no/such/dir/x.md"), "x").unwrap_err();
        assert!(e.starts_with("cannot write") && e.contains("x.md"), "{e}");
    }

    #[test]
    fn never_overwrites_and_keeps_pairs_together() {
        let dir = tempfile::tempdir().unwrap();
        let a = write_new(dir.path(), "snap", &[("md", "one"), ("json", "{}")]).unwrap();
        assert_eq!(
            a,
            vec![dir.path().join("snap.md"), dir.path().join("snap.json")]
        );
        // A stray file taking one of the names moves the pair to the next suffix.
        std::fs::write(dir.path().join("snap-2.json"), "someone else's").unwrap();
        let b = write_new(dir.path(), "snap", &[("md", "two"), ("json", "{}")]).unwrap();
        assert_eq!(b[0], dir.path().join("snap-3.md"));
        assert_eq!(
            std::fs::read_to_string(dir.path().join("snap.md")).unwrap(),
            "one"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("snap-2.json")).unwrap(),
            "someone else's"
        );
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(|e| {
                let n = e.unwrap().file_name().into_string().unwrap();
                n.contains("tmp").then_some(n)
            })
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }
}
