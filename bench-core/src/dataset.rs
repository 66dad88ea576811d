//! The dataset every harness uses: the same rows and the same shuffled id order everywhere.
//!
//! `test(id INTEGER PRIMARY KEY, name TEXT NOT NULL, score REAL NOT NULL, active INTEGER NOT NULL)`
//! in WAL mode; row `id` is `(id, "name-{id}", id * 0.5, id % 2 == 0)`; lookups visit the ids
//! `1..=rows` in an order shuffled by a ChaCha8 RNG seeded with the workload's seed.

use std::path::{Path, PathBuf};

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::error::BenchError;

fn invalid(msg: String) -> BenchError {
    BenchError::Dataset(msg)
}

/// Bumped whenever the table, its contents or the file layout change; part of the cache key.
pub const SCHEMA_VERSION: u32 = 1;

pub const CREATE_TABLE: &str = "CREATE TABLE test (id INTEGER PRIMARY KEY, name TEXT NOT NULL, score REAL NOT NULL, active INTEGER NOT NULL)";
pub const INSERT_ROW: &str = "INSERT INTO test (id, name, score, active) VALUES (?1, ?2, ?3, ?4)";
pub const SELECT_BY_ID: &str = "SELECT id, name, score, active FROM test WHERE id = ?1";

/// One row of the `test` table, decoded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchRow {
    pub id: i64,
    pub name: String,
    pub score: f64,
    pub active: bool,
}

impl BenchRow {
    /// What a lookup read, folded into one number: the id, the name's length, twice the score
    /// and the active flag. A bench that reads another row, or none, gets another sum.
    #[inline]
    pub fn checksum(&self) -> u64 {
        (self.id as u64)
            .wrapping_add(self.name.len() as u64)
            .wrapping_add((self.score * 2.0) as u64)
            .wrapping_add(self.active as u64)
    }
}

/// What the work check of a lookup bench sums.
pub const LOOKUP_WORK: &str = "rows looked up (id + name length + 2 x score + active)";

/// The work of one pass of lookups over `ids`: the sum of each expected row's checksum.
pub fn lookup_work(ids: &[i64]) -> u64 {
    ids.iter()
        .fold(0u64, |a, id| a.wrapping_add(row(*id).checksum()))
}

/// The row with the given id, as every harness must store it.
pub fn row(id: i64) -> BenchRow {
    BenchRow {
        id,
        name: format!("name-{id}"),
        score: id as f64 * 0.5,
        active: id % 2 == 0,
    }
}

/// The ids `1..=rows` in the workload's fixed shuffled order.
pub fn lookup_order(rows: u64, seed: u64) -> Vec<i64> {
    let mut ids: Vec<i64> = (1..=rows as i64).collect();
    ids.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
    ids
}

/// The `n` ids one sample iteration looks up: the shuffled order, cycled when `n > rows`.
pub fn lookup_ids(rows: u64, seed: u64, n: u64) -> Vec<i64> {
    let order = lookup_order(rows, seed);
    order.iter().copied().cycle().take(n as usize).collect()
}

/// Identifies one cached dataset file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatasetKey {
    pub workload: String,
    pub rows: u64,
    pub seed: u64,
    /// The file is kept in WAL mode; else in rollback-journal mode (for runs whose
    /// `journal_mode` is `delete` or `memory`).
    pub wal: bool,
}

impl DatasetKey {
    /// A key for a WAL-mode file.
    pub fn new(workload: &str, rows: u64, seed: u64) -> DatasetKey {
        DatasetKey {
            workload: workload.to_string(),
            rows,
            seed,
            wal: true,
        }
    }

    /// The journal mode the file is kept in, as `PRAGMA journal_mode` reads it.
    pub fn journal(&self) -> &'static str {
        if self.wal { "wal" } else { "delete" }
    }

    pub fn file_name(&self) -> String {
        format!(
            "{}-r{}-s{:x}-v{}{}.sqlite",
            self.workload,
            self.rows,
            self.seed,
            SCHEMA_VERSION,
            if self.wal { "" } else { "-rollback" }
        )
    }

    pub fn path_in(&self, dir: &Path) -> PathBuf {
        dir.join(self.file_name())
    }
}

/// The cache folder: `BENCHSCOPE_CACHE_DIR`, else `$XDG_CACHE_HOME/benchscope`, else
/// `~/.cache/benchscope`, else a folder under the system temp dir.
pub fn default_cache_dir() -> PathBuf {
    cache_dir_from(&|name| std::env::var_os(name))
}

/// [`default_cache_dir`] from the environment `var` reads.
fn cache_dir_from(var: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> PathBuf {
    let set = |name: &str| var(name).filter(|d| !d.is_empty());
    if let Some(dir) = set("BENCHSCOPE_CACHE_DIR") {
        return PathBuf::from(dir);
    }
    if let Some(dir) = set("XDG_CACHE_HOME") {
        return PathBuf::from(dir).join("benchscope");
    }
    if let Some(home) = set("HOME") {
        return PathBuf::from(home).join(".cache").join("benchscope");
    }
    std::env::temp_dir().join("benchscope-cache")
}

/// Makes the cache folder `dir` if it is not there, or says why it cannot be one (it is a
/// file; it cannot be made), naming where the path came from.
pub fn ensure_cache_dir(dir: &Path) -> Result<(), String> {
    let from = "from --cache-dir, BENCHSCOPE_CACHE_DIR, XDG_CACHE_HOME or HOME";
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(format!(
            "the dataset cache folder {} is a file ({from}; allowed: a folder, or a path where one can be made)",
            crate::text::terminal_str(&dir.display().to_string())
        )),
        Err(_) => std::fs::create_dir_all(dir).map_err(|e| {
            format!(
                "cannot make the dataset cache folder {} ({from}): {e}",
                crate::text::terminal_str(&dir.display().to_string())
            )
        }),
    }
}

/// What a valid dataset file's `benchscope_meta` table holds.
pub const META_TABLE: &str =
    "CREATE TABLE benchscope_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)";
pub const META_INSERT: &str = "INSERT INTO benchscope_meta (key, value) VALUES (?1, ?2)";
pub const META_SELECT: &str = "SELECT value FROM benchscope_meta WHERE key = ?1";
/// The id range, from the ends of the rowid tree (no scan).
pub const RANGE_SELECT: &str = "SELECT (SELECT min(id) FROM test), (SELECT max(id) FROM test)";
/// Sums over every row, compared with what the spec implies: a file whose rows were altered
/// is rebuilt, not trusted (one scan; about 0.1 s for a million rows).
/// The row count comes from the same scan.
pub const CONTENT_SELECT: &str = "SELECT count(*), coalesce(sum(id), 0), coalesce(sum(length(name)), 0), total(score), coalesce(sum(active), 0) FROM test";

/// What [`CONTENT_SELECT`] reads after the count: sum of ids, total name length, sum of
/// scores, active rows.
pub type Content = (i64, i64, f64, i64);

/// The [`Content`] of a dataset of `rows` rows as the spec writes them.
pub fn expected_content(rows: u64) -> Content {
    let n = rows as i64;
    let ids = n * (n + 1) / 2;
    // "name-{id}": five characters and the id's digits.
    let mut digits = 0i64;
    let mut start = 1i64;
    let mut width = 1i64;
    while start <= n {
        let end = (start * 10 - 1).min(n);
        digits += (end - start + 1) * width;
        start *= 10;
        width += 1;
    }
    (ids, 5 * n + digits, ids as f64 * 0.5, n / 2)
}

/// The metadata rows of a dataset file, written last in its transaction.
pub fn meta(key: &DatasetKey) -> Vec<(&'static str, String)> {
    vec![
        ("schema_version", SCHEMA_VERSION.to_string()),
        ("workload", key.workload.clone()),
        ("rows", key.rows.to_string()),
        ("seed", key.seed.to_string()),
        ("complete", "1".to_string()),
    ]
}

/// Rows every validator reads back and compares with [`row`].
pub fn spot_ids(rows: u64) -> [i64; 3] {
    [1, (rows as i64 + 1) / 2, rows as i64]
}

/// Checks what a driver read from a file against the key: `meta` answers one meta key,
/// `counts` is (count, min id, max id), `journal` the journal mode, `spot` one row by id.
pub fn check(
    key: &DatasetKey,
    meta_value: &mut dyn FnMut(&str) -> Result<String, BenchError>,
    counts: (i64, Option<i64>, Option<i64>),
    content: Content,
    journal: &str,
    spot: &mut dyn FnMut(i64) -> Result<BenchRow, BenchError>,
) -> Result<(), BenchError> {
    for (k, v) in meta(key) {
        let got = meta_value(k).map_err(|e| invalid(format!("meta {k}: {e}")))?;
        if got != v {
            return Err(invalid(format!("meta {k} is {got:?}, expected {v:?}")));
        }
    }
    let (count, min, max) = counts;
    if count as u64 != key.rows || min != Some(1) || max != Some(key.rows as i64) {
        return Err(invalid(format!(
            "table holds {count} rows ({min:?}..{max:?}), expected 1..{}",
            key.rows
        )));
    }
    let want = expected_content(key.rows);
    if content != want {
        let (ids, names, scores, active) = content;
        return Err(invalid(format!(
            "rows differ from the spec: sum of ids {ids}, name length {names}, sum of scores {scores}, active {active}; expected {}, {}, {}, {}",
            want.0, want.1, want.2, want.3
        )));
    }
    if !journal.eq_ignore_ascii_case(key.journal()) {
        return Err(invalid(format!(
            "journal mode is {journal}, expected {}",
            key.journal()
        )));
    }
    for id in spot_ids(key.rows) {
        let got = spot(id)?;
        if got != row(id) {
            return Err(invalid(format!(
                "row {id} is {got:?}, expected {:?}",
                row(id)
            )));
        }
    }
    Ok(())
}

/// A dataset file ready to use.
#[derive(Debug, Clone)]
pub struct DatasetReady {
    pub path: PathBuf,
    pub status: crate::protocol::DatasetStatus,
    pub build_ms: Option<f64>,
}

/// Removes a database file and its WAL / SHM / journal companions.
pub fn remove_db_files(path: &Path) {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        let _ = std::fs::remove_file(PathBuf::from(p));
    }
}

/// Whether process `pid` is this one or still runs (Linux: `/proc/<pid>`).
pub fn process_running(pid: u32) -> bool {
    pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists()
}

/// Removes what builds of `path` left behind when their process died half way (the
/// temporary file `<name>.tmp<pid>` and its -wal / -shm), whose process no longer runs. Called
/// under the dataset's lock, or where a build's own temporary file is named by its pid, so
/// that no build going on in another process loses its file.
pub(crate) fn remove_stale_builds(path: &Path) {
    let (Some(dir), Some(stem)) = (path.parent(), path.file_stem().and_then(|s| s.to_str())) else {
        return;
    };
    let Ok(entries) = crate::opener::list(dir) else {
        return;
    };
    let prefix = format!("{stem}.tmp");
    for name in entries {
        let name = name.to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix(&prefix) else {
            continue;
        };
        let pid: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
        let Ok(pid) = pid.parse::<u32>() else {
            continue;
        };
        if !process_running(pid) {
            tracing::warn!(file = %name, "removing what a killed dataset build left behind");
            let _ = std::fs::remove_file(dir.join(&name));
        }
    }
}

/// Returns a valid dataset file for `key` in `dir`, building it when absent or invalid, with
/// whichever driver supplies `validate` and `write`. `on_build` is called before a build starts
/// (to show progress). Builds happen in a temporary file renamed into place, under a lock file,
/// so that concurrent runners of any harness build once.
pub fn ensure_with(
    dir: &Path,
    key: &DatasetKey,
    on_build: &mut dyn FnMut(&Path),
    validate: &dyn Fn(&Path) -> Result<(), BenchError>,
    write: &dyn Fn(&Path) -> Result<(), BenchError>,
) -> Result<DatasetReady, BenchError> {
    use crate::protocol::DatasetStatus;
    std::fs::create_dir_all(dir)
        .map_err(|e| invalid(format!("cannot create cache folder {}: {e}", dir.display())))?;
    let path = key.path_in(dir);
    let lock_path = path.with_extension("lock");
    // Opened without waiting (a FIFO there is refused by what it is, not waited on).
    let lock = crate::opener::open_lock(&lock_path, "lock file")
        .map_err(|e| invalid(format!("cannot create {e}")))?;
    lock.lock()
        .map_err(|e| invalid(format!("cannot lock {}: {e}", lock_path.display())))?;
    remove_stale_builds(&path);
    if path.exists() {
        let checking = std::time::Instant::now();
        let checked = validate(&path);
        tracing::info!(
            path = %path.display(),
            ms = checking.elapsed().as_secs_f64() * 1e3,
            ok = checked.is_ok(),
            "cached dataset checked"
        );
        match checked {
            Ok(()) => {
                return Ok(DatasetReady {
                    path,
                    status: DatasetStatus::Reused,
                    build_ms: None,
                });
            }
            Err(why) => {
                tracing::warn!(path = %path.display(), %why, "cached dataset is invalid; rebuilding")
            }
        }
    }
    on_build(&path);
    let start = std::time::Instant::now();
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    remove_db_files(&tmp);
    write(&tmp).map_err(|e| {
        remove_db_files(&tmp);
        invalid(format!("building dataset {}: {e}", path.display()))
    })?;
    remove_db_files(&path);
    std::fs::rename(&tmp, &path)
        .map_err(|e| invalid(format!("renaming dataset into {}: {e}", path.display())))?;
    let build_ms = start.elapsed().as_secs_f64() * 1e3;
    validate(&path).map_err(|e| {
        invalid(format!(
            "freshly built dataset {} is invalid: {e}",
            path.display()
        ))
    })?;
    Ok(DatasetReady {
        path,
        status: DatasetStatus::Built,
        build_ms: Some(build_ms),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_folder_comes_from_the_first_variable_set_and_not_empty() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| std::ffi::OsString::from(v))
            }
        };
        let all = env(&[
            ("BENCHSCOPE_CACHE_DIR", "/b"),
            ("XDG_CACHE_HOME", "/x"),
            ("HOME", "/h"),
        ]);
        assert_eq!(cache_dir_from(&all), PathBuf::from("/b"));
        let xdg = env(&[
            ("BENCHSCOPE_CACHE_DIR", ""),
            ("XDG_CACHE_HOME", "/x"),
            ("HOME", "/h"),
        ]);
        assert_eq!(cache_dir_from(&xdg), PathBuf::from("/x/benchscope"));
        let home = env(&[("XDG_CACHE_HOME", ""), ("HOME", "/h")]);
        assert_eq!(cache_dir_from(&home), PathBuf::from("/h/.cache/benchscope"));
        let none = env(&[("HOME", "")]);
        assert_eq!(
            cache_dir_from(&none),
            std::env::temp_dir().join("benchscope-cache")
        );
        // Whatever this process's environment holds, there is a folder.
        assert!(!default_cache_dir().as_os_str().is_empty());
    }

    /// `check` against a file as the spec writes it, read through closures: its meta (every
    /// key the writer writes, each value), its counts, its content, its journal and three rows
    /// (the first, the middle and the last); each of them altered is refused, naming it.
    #[test]
    fn check_refuses_a_file_whose_meta_or_spot_rows_differ() {
        let key = DatasetKey::new("single_row_lookup", 10, 7);
        let ok_counts = (10, Some(1), Some(10));
        let content = expected_content(10);
        let run = |meta: &dyn Fn(&str) -> Option<String>, spot: &dyn Fn(i64) -> BenchRow| {
            check(
                &key,
                &mut |k| meta(k).ok_or_else(|| invalid(format!("no {k}"))),
                ok_counts,
                content,
                "wal",
                &mut |id| Ok(spot(id)),
            )
            .map_err(|e| e.to_string())
        };
        let written = |k: &str| {
            [
                ("schema_version", SCHEMA_VERSION.to_string()),
                ("workload", "single_row_lookup".to_string()),
                ("rows", "10".to_string()),
                ("seed", "7".to_string()),
                ("complete", "1".to_string()),
            ]
            .into_iter()
            .find(|(n, _)| *n == k)
            .map(|(_, v)| v)
        };
        assert_eq!(run(&written, &row), Ok(()));
        for altered in ["schema_version", "workload", "rows", "seed", "complete"] {
            let e = run(
                &|k| {
                    if k == altered {
                        Some("0".into())
                    } else {
                        written(k)
                    }
                },
                &row,
            )
            .unwrap_err();
            assert!(e.contains(&format!("meta {altered}")), "{altered}: {e}");
            let e = run(&|k| if k == altered { None } else { written(k) }, &row).unwrap_err();
            assert!(e.contains(&format!("meta {altered}")), "{altered}: {e}");
        }
        // The counts: each of rows, first id and last id wrong on its own is refused.
        for counts in [
            (9, Some(1), Some(10)),
            (10, Some(2), Some(10)),
            (10, Some(1), Some(9)),
        ] {
            let e = check(
                &key,
                &mut |k| written(k).ok_or_else(|| invalid(k.to_string())),
                counts,
                content,
                "wal",
                &mut |id| Ok(row(id)),
            )
            .unwrap_err()
            .to_string();
            assert!(e.contains("table holds"), "{counts:?}: {e}");
        }
        assert_eq!(spot_ids(10), [1, 5, 10]);
        assert_eq!(spot_ids(11), [1, 6, 11]);
        for id in [1, 5, 10] {
            let e = run(&written, &|i| {
                let mut r = row(i);
                if i == id {
                    r.score += 1.0;
                }
                r
            })
            .unwrap_err();
            assert!(e.contains(&format!("row {id} is")), "{e}");
        }
    }

    /// A build's time is said in milliseconds: a write that takes 50 ms at least reads 50 or
    /// more, and less than the seconds it would read as a count of seconds plus 1000.
    #[test]
    fn a_build_reports_its_time_in_milliseconds() {
        let tmp = tempfile::tempdir().unwrap();
        let key = DatasetKey::new("timed", 10, 1);
        let ready = ensure_with(
            tmp.path(),
            &key,
            &mut |_| {},
            &|p| {
                std::fs::read(p)
                    .map(|_| ())
                    .map_err(|e| invalid(e.to_string()))
            },
            &|p| {
                std::thread::sleep(std::time::Duration::from_millis(50));
                std::fs::write(p, "built").map_err(|e| invalid(e.to_string()))
            },
        )
        .unwrap();
        let ms = ready.build_ms.unwrap();
        assert!((50.0..1000.0).contains(&ms), "{ms}");
    }

    #[test]
    fn a_process_runs_while_it_runs() {
        assert!(process_running(std::process::id()));
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        assert!(process_running(child.id()), "another live process");
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(!process_running(child.id()), "reaped");
    }

    #[test]
    fn a_cache_folder_is_made_or_its_path_refused_with_why() {
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(ensure_cache_dir(tmp.path()), Ok(()));
        let made = tmp.path().join("a").join("b");
        assert_eq!(ensure_cache_dir(&made), Ok(()));
        assert!(made.is_dir());
        let file = tmp.path().join("f");
        std::fs::write(&file, "x").unwrap();
        let e = ensure_cache_dir(&file).unwrap_err();
        assert!(
            e.contains("is a file") && e.contains(&file.display().to_string()),
            "{e}"
        );
        let under = file.join("sub");
        let e = ensure_cache_dir(&under).unwrap_err();
        assert!(e.starts_with("cannot make the dataset cache folder"), "{e}");
        assert!(!under.exists());
    }

    #[test]
    fn rows_follow_the_spec() {
        assert_eq!(
            row(7),
            BenchRow {
                id: 7,
                name: "name-7".into(),
                score: 3.5,
                active: false
            }
        );
        assert!(row(8).active);
    }

    #[test]
    fn lookup_order_is_a_fixed_permutation() {
        let a = lookup_order(1000, 42);
        assert_eq!(a, lookup_order(1000, 42), "same seed, same order");
        assert_ne!(a, lookup_order(1000, 43), "another seed, another order");
        let mut sorted = a.clone();
        sorted.sort();
        assert_eq!(sorted, (1..=1000).collect::<Vec<_>>());
        assert_ne!(
            a[..10],
            (1..=10).collect::<Vec<_>>()[..],
            "actually shuffled"
        );
        // Pinned so that a change of RNG or shuffle algorithm (which would break agreement
        // between harnesses built at different times) is caught.
        assert_eq!(lookup_order(10, 0x5EED_1001), PINNED_ORDER_10);
    }
    const PINNED_ORDER_10: [i64; 10] = [3, 7, 9, 1, 10, 5, 6, 8, 4, 2];

    #[test]
    fn lookup_ids_cycle() {
        let ids = lookup_ids(3, 1, 7);
        assert_eq!(ids.len(), 7);
        assert_eq!(ids[..3], ids[3..6]);
        assert_eq!(ids[6], ids[0]);
    }

    #[test]
    fn cache_key_names_every_part() {
        let k = DatasetKey::new("single_row_lookup", 20000, 0x5EED_1001);
        assert_eq!(
            k.file_name(),
            format!("single_row_lookup-r20000-s5eed1001-v{SCHEMA_VERSION}.sqlite")
        );
        let r = DatasetKey { wal: false, ..k };
        assert!(r.file_name().ends_with("-rollback.sqlite"));
    }

    #[cfg(feature = "sqlite")]
    mod sqlite {
        use super::super::*;
        use crate::on_rusqlite::{ensure, read_rows, validate};
        use crate::protocol::DatasetStatus;

        fn key(rows: u64) -> DatasetKey {
            DatasetKey::new("t", rows, 9)
        }

        #[test]
        fn builds_then_reuses() {
            let dir = tempfile::tempdir().unwrap();
            let mut builds = 0;
            let r = ensure(dir.path(), &key(100), &mut |_| builds += 1).unwrap();
            assert_eq!((r.status, builds), (DatasetStatus::Built, 1));
            let rows = read_rows(&r.path).unwrap();
            assert_eq!(rows, (1..=100).map(row).collect::<Vec<_>>());
            let r2 = ensure(dir.path(), &key(100), &mut |_| builds += 1).unwrap();
            assert_eq!((r2.status, builds), (DatasetStatus::Reused, 1));
        }

        /// A cached file with rows altered (not its shape, not the spot rows) is rebuilt.
        #[test]
        fn altered_rows_are_not_trusted() {
            let dir = tempfile::tempdir().unwrap();
            let r = ensure(dir.path(), &key(2000), &mut |_| {}).unwrap();
            let conn = rusqlite::Connection::open(&r.path).unwrap();
            // 600 rows changed, none of the spot-checked ones (1, 1000, 2000).
            let changed = conn
                .execute(
                    "UPDATE test SET name = 'x' || name, score = score + 1 WHERE id BETWEEN 2 AND 601",
                    [],
                )
                .unwrap();
            assert_eq!(changed, 600);
            drop(conn);
            let why = validate(&r.path, &key(2000)).unwrap_err().to_string();
            assert!(
                why.contains("rows differ from the spec: sum of ids 2001000, name length 17493"),
                "{why}"
            );
            let mut builds = 0;
            let again = ensure(dir.path(), &key(2000), &mut |_| builds += 1).unwrap();
            assert_eq!((again.status, builds), (DatasetStatus::Built, 1));
            assert_eq!(
                read_rows(&again.path).unwrap(),
                (1..=2000).map(row).collect::<Vec<_>>()
            );
        }

        /// A build killed half way leaves its temporary file (and -wal, -shm) behind: the next
        /// start removes them, under the lock, when their process is gone.
        #[test]
        fn a_killed_build_leaves_nothing_behind_for_good() {
            let dir = tempfile::tempdir().unwrap();
            let k = key(50);
            let dead = k.path_in(dir.path()).with_extension("tmp999999999");
            let alive = k
                .path_in(dir.path())
                .with_extension(format!("tmp{}", std::process::id()));
            for p in [&dead, &alive] {
                for suffix in ["", "-wal", "-shm"] {
                    let mut f = p.as_os_str().to_owned();
                    f.push(suffix);
                    std::fs::write(PathBuf::from(f), "partial").unwrap();
                }
            }
            ensure(dir.path(), &k, &mut |_| {}).unwrap();
            let left: Vec<String> = std::fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n.contains(".tmp"))
                .collect();
            assert!(!left.iter().any(|n| n.contains("tmp999999999")), "{left:?}");
        }

        #[test]
        fn expected_content_counts_digits() {
            assert_eq!(expected_content(0), (0, 0, 0.0, 0));
            // names "name-1".."name-12": 9 of 6 characters, 3 of 7
            assert_eq!(expected_content(12), (78, 75, 39.0, 6));
            let n = 1_000_000u64;
            let names: i64 = (1..=n as i64)
                .map(|i| format!("name-{i}").len() as i64)
                .sum();
            assert_eq!(expected_content(n).1, names);
        }

        #[test]
        fn a_rollback_file_is_its_own_dataset() {
            let dir = tempfile::tempdir().unwrap();
            let k = DatasetKey {
                wal: false,
                ..key(30)
            };
            let r = ensure(dir.path(), &k, &mut |_| {}).unwrap();
            let conn = rusqlite::Connection::open(&r.path).unwrap();
            let mode: String = conn
                .query_row("PRAGMA journal_mode", [], |r| r.get(0))
                .unwrap();
            assert_eq!(mode, "delete");
            drop(conn);
            assert!(
                validate(&r.path, &key(30))
                    .unwrap_err()
                    .to_string()
                    .contains("expected wal")
            );
            assert_eq!(read_rows(&r.path).unwrap().len(), 30);
        }

        #[test]
        fn garbage_and_short_files_are_rebuilt() {
            let dir = tempfile::tempdir().unwrap();
            let path = key(50).path_in(dir.path());
            std::fs::write(&path, b"this is not a database at all, just garbage bytes").unwrap();
            assert!(validate(&path, &key(50)).is_err());
            let r = ensure(dir.path(), &key(50), &mut |_| {}).unwrap();
            assert_eq!(r.status, DatasetStatus::Built);
            validate(&path, &key(50)).unwrap();

            // A short table (rows deleted) is caught too.
            let conn = rusqlite::Connection::open(&path).unwrap();
            conn.execute("DELETE FROM test WHERE id > 40", []).unwrap();
            drop(conn);
            let err = validate(&path, &key(50)).unwrap_err();
            assert!(err.to_string().contains("40 rows"), "{err}");
            assert_eq!(
                ensure(dir.path(), &key(50), &mut |_| {}).unwrap().status,
                DatasetStatus::Built
            );

            // A file with a tampered row is caught.
            let conn = rusqlite::Connection::open(&path).unwrap();
            conn.execute("UPDATE test SET name = 'x' WHERE id = 50", [])
                .unwrap();
            drop(conn);
            let why = validate(&path, &key(50)).unwrap_err().to_string();
            assert!(why.contains("rows differ from the spec"), "{why}");
        }
    }
}
