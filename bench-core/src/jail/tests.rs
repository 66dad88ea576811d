use super::*;
use crate::testing::{folder_listing, hot_journal};
use proptest::prelude::*;
use rusqlite::{Connection, OpenFlags};

fn make_db(path: &Path) -> u32 {
    let c = Connection::open(path).unwrap();
    c.execute_batch(
        "PRAGMA journal_mode=DELETE; CREATE TABLE t(x); INSERT INTO t VALUES (1), (2), (3);",
    )
    .unwrap();
    c.query_row("PRAGMA page_size", [], |r| r.get(0)).unwrap()
}

fn decoys(dir: &Path) -> Vec<PathBuf> {
    std::fs::create_dir_all(dir).unwrap();
    (0..3)
        .map(|i| {
            let p = dir.join(format!("precious-{i}.txt"));
            std::fs::write(&p, format!("the user's file {i}\n")).unwrap();
            p
        })
        .collect()
}

fn count(c: &Connection) -> rusqlite::Result<i64> {
    c.query_row("SELECT count(*) FROM t", [], |r| r.get(0))
}

/// The attack is real: SQLite itself, opening a database whose hot journal names a user's
/// file as its super-journal, deletes that file. (Why every connection to data that came from a
/// user goes through a jail.)
#[test]
fn unjailed_sqlite_deletes_the_file_a_hot_journal_names() {
    let dir = tempfile::tempdir().unwrap();
    let victim = decoys(&dir.path().join("home"))[0].clone();
    let db = dir.path().join("copy.db");
    let page = make_db(&db);
    hot_journal(&db, page, victim.as_os_str().as_bytes());
    let c = Connection::open_with_flags_and_vfs(&db, OpenFlags::SQLITE_OPEN_READ_WRITE, c"unix")
        .unwrap();
    assert_eq!(count(&c).unwrap(), 3);
    assert!(
        !victim.exists(),
        "SQLite left {} (the attack did not work)",
        victim.display()
    );
}

#[test]
fn a_jailed_sqlite_leaves_the_file_a_hot_journal_names_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let victims = decoys(&home);
    let before = folder_listing(&home);
    let run = dir.path().join("run");
    std::fs::create_dir(&run).unwrap();
    let db = run.join("copy.db");
    let page = make_db(&db);
    hot_journal(&db, page, victims[0].as_os_str().as_bytes());
    let jail = folder(&run).unwrap();
    let c =
        Connection::open_with_flags_and_vfs(&db, OpenFlags::SQLITE_OPEN_READ_WRITE, jail.name())
            .unwrap();
    assert_eq!(count(&c).unwrap(), 3);
    drop(c);
    assert_eq!(folder_listing(&home), before);
    let refused = jail.refusals();
    assert!(
        refused
            .iter()
            .any(|r| r.op == "access" && r.path == victims[0]),
        "{refused:?}"
    );
    // The journal, the copy's own, is gone: SQLite took it for one whose super-journal is.
    assert!(!run.join("copy.db-journal").exists());
}

#[test]
fn a_folder_jail_refuses_attach_and_links_out_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let other = home.join("other.db");
    std::fs::create_dir_all(&home).unwrap();
    make_db(&other);
    let before = folder_listing(&home);
    let run = dir.path().join("run");
    std::fs::create_dir(&run).unwrap();
    let jail = folder(&run).unwrap();
    let c = Connection::open(jail.uri(&run.join("a.db"), false)).unwrap();
    c.execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1);")
        .unwrap();
    for target in [other.clone(), home.join("new.db"), run.join("../home/x.db")] {
        let e = c
            .execute("ATTACH ?1 AS o", [target.to_str().unwrap()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("unable to open"), "{target:?}: {e}");
    }
    // A link in the folder to a database outside it is not followed.
    std::os::unix::fs::symlink(&other, run.join("link.db")).unwrap();
    let e = Connection::open(jail.uri(&run.join("link.db"), true));
    assert!(e.is_err(), "opened a link out of the jail");
    // A subfolder that is a link out of the jail is outside it.
    std::os::unix::fs::symlink(&home, run.join("sub")).unwrap();
    let e = Connection::open(jail.uri(&run.join("sub/other.db"), true));
    assert!(e.is_err(), "opened through a linked folder");
    // A real subfolder is inside.
    std::fs::create_dir(run.join("real")).unwrap();
    Connection::open(jail.uri(&run.join("real/b.db"), false))
        .unwrap()
        .execute_batch("CREATE TABLE u(y)")
        .unwrap();
    assert_eq!(folder_listing(&home), before);
    assert!(!home.join("new.db").exists());
}

#[test]
fn a_file_jail_reaches_its_file_and_journals_alone() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store.sqlite");
    let jail = file(&store).unwrap();
    let c = Connection::open_with_flags_and_vfs(
        &store,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE,
        jail.name(),
    )
    .unwrap();
    c.execute_batch("PRAGMA journal_mode=WAL; CREATE TABLE r(x); INSERT INTO r VALUES (1);")
        .unwrap();
    assert!(dir.path().join("store.sqlite-wal").exists());
    let e = c
        .execute(
            "ATTACH ?1 AS o",
            [dir.path().join("beside.sqlite").to_str().unwrap()],
        )
        .unwrap_err();
    assert!(e.to_string().contains("unable to open"), "{e}");
    assert!(!dir.path().join("beside.sqlite").exists());
    // The same file, the same jail.
    assert_eq!(file(&store).unwrap().name(), jail.name());
}

/// What sits beside a database is what SQLite opens next (its journal, its WAL, its shared
/// memory, the last without asking the VFS): a FIFO there (a read would wait for ever), a
/// folder, or a hard link to a file elsewhere (SQLite would write into it) refuses the
/// database at once, by the path that is wrong.
#[test]
fn a_fifo_or_a_hard_link_beside_a_database_refuses_it() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let victims = decoys(&home);
    let run = dir.path().join("run");
    std::fs::create_dir(&run).unwrap();
    let jail = folder(&run).unwrap();
    for (i, suffix) in ["-journal", "-wal", "-shm"].iter().enumerate() {
        for how in ["fifo", "link", "folder"] {
            let db = run.join(format!("{how}{i}.db"));
            make_db(&db);
            let beside = PathBuf::from(format!("{}{suffix}", db.display()));
            match how {
                "fifo" => {
                    let c = CString::new(beside.as_os_str().as_bytes()).unwrap();
                    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
                }
                "link" => std::fs::hard_link(&victims[i], &beside).unwrap(),
                _ => std::fs::create_dir(&beside).unwrap(),
            }
            let t = std::time::Instant::now();
            let opened = Connection::open_with_flags_and_vfs(
                &db,
                OpenFlags::SQLITE_OPEN_READ_WRITE,
                jail.name(),
            )
            .and_then(|c| count(&c));
            assert!(opened.is_err(), "{how} {suffix}: {opened:?}");
            assert!(t.elapsed() < std::time::Duration::from_secs(5), "waited");
            assert!(
                jail.refusals()
                    .iter()
                    .any(|r| r.op == "open" && r.path == beside),
                "{how} {suffix}: {:?}",
                jail.refusals()
            );
        }
    }
    for (i, v) in victims.iter().enumerate() {
        assert_eq!(
            std::fs::read_to_string(v).unwrap(),
            format!("the user's file {i}\n")
        );
    }
}

#[test]
fn a_jail_of_what_is_not_a_folder_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("plain");
    std::fs::write(&f, "x").unwrap();
    let e = folder(&f).unwrap_err().to_string();
    assert!(e.contains("plain") && e.contains("not a folder"), "{e}");
    let e = folder(&dir.path().join("none")).unwrap_err().to_string();
    assert!(e.contains("none"), "{e}");
}

/// What a hostile copy of a database can carry beside it.
#[derive(Debug, Clone)]
enum Named {
    /// A user's file, by its absolute path.
    Decoy(usize),
    /// A user's file through `..` from the jail.
    Dotted(usize),
    /// A link in the jail to a user's file.
    Link(usize),
    /// The user's folder itself.
    Folder,
    /// Any bytes.
    Bytes(Vec<u8>),
}

fn named() -> impl Strategy<Value = Named> {
    prop_oneof![
        (0..3usize).prop_map(Named::Decoy),
        (0..3usize).prop_map(Named::Dotted),
        (0..3usize).prop_map(Named::Link),
        Just(Named::Folder),
        proptest::collection::vec(1u8..=255, 1..300).prop_map(Named::Bytes),
    ]
}

fn cases() -> u32 {
    crate::testing::proptest_cases()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    /// Whatever a copy's hot journal names as its super-journal, whatever `-wal` lies beside
    /// it (another database's), in either journal mode: the user's folder is as it was, byte
    /// for byte, and nothing is created outside the jail.
    #[test]
    fn nothing_outside_the_jail_is_opened_written_or_removed(
        name in named(),
        foreign_wal in any::<bool>(),
        wal_mode in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let victims = decoys(&home);
        let run = dir.path().join("run");
        std::fs::create_dir(&run).unwrap();
        let db = run.join("copy.db");
        let page = make_db(&db);
        if foreign_wal {
            let other = home.join("other.db");
            let c = Connection::open(&other).unwrap();
            c.execute_batch("PRAGMA journal_mode=WAL; CREATE TABLE o(x); INSERT INTO o VALUES (9);").unwrap();
            // A -wal of the other database's, copied beside ours while the other is open.
            std::fs::copy(home.join("other.db-wal"), run.join("copy.db-wal")).unwrap();
            drop(c);
        }
        let before = folder_listing(&home);
        let outside_before = folder_listing(dir.path());
        let super_journal: Vec<u8> = match &name {
            Named::Decoy(i) => victims[*i].as_os_str().as_bytes().to_vec(),
            Named::Dotted(i) => run.join("..").join("home").join(victims[*i].file_name().unwrap()).as_os_str().as_bytes().to_vec(),
            Named::Link(i) => {
                let l = run.join(format!("link-{i}"));
                std::os::unix::fs::symlink(&victims[*i], &l).unwrap();
                l.as_os_str().as_bytes().to_vec()
            }
            Named::Folder => home.as_os_str().as_bytes().to_vec(),
            Named::Bytes(b) => b.clone(),
        };
        hot_journal(&db, page, &super_journal);
        let jail = folder(&run).unwrap();
        if let Ok(c) = Connection::open_with_flags_and_vfs(&db, OpenFlags::SQLITE_OPEN_READ_WRITE, jail.name()) {
            if wal_mode {
                let _ = c.pragma_update(None, "journal_mode", "WAL");
            }
            let _ = count(&c);
            let _ = c.execute("INSERT INTO t VALUES (4)", []);
        }
        prop_assert_eq!(folder_listing(&home), before);
        prop_assert_eq!(folder_listing(dir.path()), outside_before);
    }
}
