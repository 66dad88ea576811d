//! Any super-journal name a copy's hot journal can hold, in either journal mode: SQLite opened
//! through the jail of the copy's folder reaches nothing outside it; the user's folder is the
//! same bytes after.
#![no_main]

use std::os::unix::ffi::OsStrExt;

use libfuzzer_sys::fuzz_target;
use rusqlite::{Connection, OpenFlags};

fuzz_target!(|data: (Vec<u8>, u8)| {
    let (name, how) = data;
    let name: Vec<u8> = name.into_iter().filter(|&b| b != 0).take(400).collect();
    if name.is_empty() {
        return;
    }
    // One folder and one jail for the whole run (a process holds a bounded number of jails):
    // the user's folder and the run's made afresh inside it for each input.
    static DIR: std::sync::OnceLock<(tempfile::TempDir, bench_core::jail::Jail)> =
        std::sync::OnceLock::new();
    let (dir, jail) = DIR.get_or_init(|| {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("run")).unwrap();
        let j = bench_core::jail::folder(&d.path().join("run")).unwrap();
        (d, j)
    });
    let home = dir.path().join("home");
    let _ = std::fs::remove_dir_all(&home);
    std::fs::create_dir(&home).unwrap();
    for i in 0..3 {
        std::fs::write(home.join(format!("f{i}")), format!("the user's file {i}")).unwrap();
    }
    let run = dir.path().join("run");
    for e in std::fs::read_dir(&run).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() && !p.is_symlink() {
            std::fs::remove_dir_all(&p).unwrap();
        } else {
            std::fs::remove_file(&p).unwrap();
        }
    }
    let db = run.join("copy.db");
    let page: u32 = {
        let c = Connection::open(&db).unwrap();
        c.execute_batch("PRAGMA journal_mode=DELETE; CREATE TABLE t(x); INSERT INTO t VALUES (1);")
            .unwrap();
        c.query_row("PRAGMA page_size", [], |r| r.get(0)).unwrap()
    };
    // The name as given, or pointed at the user's folder in the ways a journal can.
    let target = match how % 4 {
        0 => name,
        1 => [home.as_os_str().as_bytes(), b"/", &name].concat(),
        2 => [run.as_os_str().as_bytes(), b"/../home/", &name].concat(),
        _ => {
            let link = run.join("link");
            std::os::unix::fs::symlink(home.join("f0"), &link).unwrap();
            link.as_os_str().as_bytes().to_vec()
        }
    };
    bench_core::testing::hot_journal(&db, page, &target);
    let before = bench_core::testing::folder_listing(&home);
    if let Ok(c) = Connection::open_with_flags_and_vfs(&db, OpenFlags::SQLITE_OPEN_READ_WRITE, jail.name()) {
        if how & 4 != 0 {
            let _ = c.pragma_update(None, "journal_mode", "WAL");
        }
        let _ = c.query_row("SELECT count(*) FROM t", [], |r| r.get::<_, i64>(0));
    }
    assert_eq!(bench_core::testing::folder_listing(&home), before);
});
