use super::*;
use proptest::prelude::*;

fn fifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// Runs `f` and fails the test when it does not return within 10 s (a read that blocks would
/// otherwise hang the suite).
fn promptly<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(10))
        .unwrap_or_else(|_| panic!("{what} did not return within 10 s"))
}

#[test]
fn what_is_not_a_regular_file_is_refused_at_once_by_what_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("pipe.json");
    fifo(&p);
    let e = promptly("a FIFO", move || {
        read(&p, "", Kind::Document).unwrap_err().to_string()
    });
    assert!(
        e.ends_with("pipe.json: a FIFO; allowed: a JSON document (a regular file)"),
        "{e}"
    );
    let e = read(dir.path(), "--db", Kind::Database)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("--db ") && e.contains(": a folder; allowed: a database file"),
        "{e}"
    );
    let link = dir.path().join("zero.json");
    std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
    let e = promptly("a link to /dev/zero", move || {
        read(&link, "", Kind::Document).unwrap_err().to_string()
    });
    assert!(e.contains("zero.json: a device"), "{e}");
    let sock = dir.path().join("s.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    let e = read(&sock, "", Kind::Small).unwrap_err().to_string();
    assert!(e.contains("s.sock: a socket"), "{e}");
    let e = read(&dir.path().join("none"), "--script", Kind::Text)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("--script ") && e.contains("none: cannot open it"),
        "{e}"
    );
}

#[test]
fn a_file_larger_than_its_kind_allows_is_refused_by_its_size() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("big.json");
    let f = File::create(&p).unwrap();
    // Sparse: 65 MiB that take no room, refused before a byte is read.
    f.set_len(65 << 20).unwrap();
    let e = read(&p, "", Kind::Document).unwrap_err().to_string();
    assert!(
        e.contains("larger than 64 MiB (68157440 bytes or more); allowed: a JSON document of at most 64 MiB"),
        "{e}"
    );
    f.set_len(64 << 20).unwrap();
    assert_eq!(read(&p, "", Kind::Document).unwrap().len(), 64 << 20);
    // A database is streamed, whatever its size.
    assert!(open(&p, "--db", Kind::Database).is_ok());
}

#[test]
fn files_of_the_system_are_read_though_they_report_no_size() {
    let stat = read_text(Path::new("/proc/self/stat"), "", Kind::Small).unwrap();
    assert!(stat.starts_with(&std::process::id().to_string()), "{stat}");
}

#[test]
fn text_is_utf8() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.sql");
    std::fs::write(&p, b"SELECT 1; -- \xff\n").unwrap();
    let e = read_text(&p, "--script", Kind::Text)
        .unwrap_err()
        .to_string();
    assert!(e.contains("not UTF-8 text (byte 13)"), "{e}");
}

#[test]
fn a_folder_of_links_to_itself_is_walked_once_and_promptly() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("criterion");
    std::fs::create_dir_all(root.join("g/b/new")).unwrap();
    std::fs::write(root.join("g/b/new/benchmark.json"), "{}").unwrap();
    // Ten links to the root in every folder: followed, a walk eight deep would take 10^8 steps.
    for d in ["", "g", "g/b"] {
        for i in 0..10 {
            std::os::unix::fs::symlink(&root, root.join(d).join(format!("loop{i}"))).unwrap();
        }
    }
    let r = root.clone();
    let found = promptly("the walk", move || walk(&r, 8).unwrap());
    assert_eq!(found.len(), 3 + 30 + 1, "{found:#?}");
    assert_eq!(found.iter().filter(|e| e.what == "a link").count(), 30);
    assert!(
        found
            .iter()
            .any(|e| e.is_file() && e.path.ends_with("new/benchmark.json"))
    );
    // A depth bound: the root's own entries only.
    assert!(walk(&root, 1).unwrap().iter().all(|e| e.depth == 1));
    let e = walk(&root.join("g/b/new/benchmark.json"), 3)
        .unwrap_err()
        .to_string();
    assert!(e.contains("a regular file"), "{e}");
}

#[test]
fn a_lock_or_a_device_that_is_a_fifo_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("lock");
    fifo(&p);
    let q = p.clone();
    let e = promptly("the lock", move || {
        open_lock(&q, "the measurement lock")
            .unwrap_err()
            .to_string()
    });
    assert!(
        e.contains("lock: a FIFO; allowed: a file (a regular file)"),
        "{e}"
    );
    let e = promptly("the device", move || {
        open_device(&p, "").unwrap_err().to_string()
    });
    assert!(
        e.contains("a FIFO no process reads; allowed: a character device"),
        "{e}"
    );
    let f = dir.path().join("plain");
    let lock = open_lock(&f, "").unwrap();
    lock.try_lock().unwrap();
    let e = open_device(&f, "").unwrap_err().to_string();
    assert!(
        e.contains("a regular file; allowed: a character device"),
        "{e}"
    );
    assert_eq!(std::fs::read(&f).unwrap(), b"", "nothing written to it");
    assert!(open_device(Path::new("/dev/null"), "").is_ok());
}

/// What a hostile tree may hold.
#[derive(Debug, Clone)]
enum Node {
    File(Vec<u8>),
    Dir(Vec<Node>),
    Fifo,
    LinkUp(usize),
    LinkTo(&'static str),
}

fn node() -> impl Strategy<Value = Node> {
    let leaf = prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..64).prop_map(Node::File),
        Just(Node::Fifo),
        (0..4usize).prop_map(Node::LinkUp),
        prop_oneof![
            Just("/dev/zero"),
            Just("/dev/urandom"),
            Just("/nonexistent"),
            Just("/proc/self/fd/0")
        ]
        .prop_map(Node::LinkTo),
    ];
    leaf.prop_recursive(4, 40, 6, |inner| {
        proptest::collection::vec(inner, 0..6).prop_map(Node::Dir)
    })
}

fn build(at: &Path, n: &Node, ancestors: &[PathBuf]) {
    match n {
        Node::File(b) => std::fs::write(at, b).unwrap(),
        Node::Fifo => fifo(at),
        Node::LinkUp(k) => {
            let target = &ancestors[ancestors
                .len()
                .saturating_sub(1 + k)
                .min(ancestors.len() - 1)];
            std::os::unix::fs::symlink(target, at).unwrap();
        }
        Node::LinkTo(t) => std::os::unix::fs::symlink(t, at).unwrap(),
        Node::Dir(children) => {
            std::fs::create_dir(at).unwrap();
            let mut up = ancestors.to_vec();
            up.push(at.to_path_buf());
            for (i, c) in children.iter().enumerate() {
                build(&at.join(format!("n{i}")), c, &up);
            }
        }
    }
}

fn cases() -> u32 {
    crate::testing::proptest_cases()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    /// Whatever a folder holds (FIFOs, links to its ancestors, to devices, to nothing), a walk
    /// ends, enters no link, lists each path once, and reading every entry returns at once: the
    /// bytes of a regular file, else an error saying what the entry is.
    #[test]
    fn any_tree_is_walked_and_read_without_blocking(children in proptest::collection::vec(node(), 0..6)) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        build(&root, &Node::Dir(children), &[dir.path().to_path_buf()]);
        let r = root.clone();
        let found = promptly("walk", move || walk(&r, 8).unwrap());
        let mut paths: Vec<_> = found.iter().map(|e| e.path.clone()).collect();
        paths.dedup();
        prop_assert_eq!(paths.len(), found.len());
        for e in &found {
            // Every entry is inside the root, reached through no link.
            let rel = e.path.strip_prefix(&root).unwrap();
            let mut at = root.clone();
            for c in rel.parent().into_iter().flat_map(|p| p.components()) {
                at.push(c);
                prop_assert!(std::fs::symlink_metadata(&at).unwrap().is_dir(), "entered {}", at.display());
            }
            let p = e.path.clone();
            let read = promptly("read", move || read(&p, "", Kind::Document).map_err(|e| e.to_string()));
            let meta = std::fs::metadata(&e.path);
            match read {
                Ok(bytes) => prop_assert_eq!(bytes, std::fs::read(&e.path).unwrap()),
                Err(why) => prop_assert!(
                    meta.as_ref().map_or(true, |m| !m.is_file()),
                    "{} refused: {}", e.path.display(), why
                ),
            }
        }
    }
}

/// A file found in a folder is read where it is: a link there (to a file outside the folder)
/// is refused by what it is, never followed; a file the user names is read through its link.
#[test]
fn a_link_found_in_a_folder_is_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("secret.json");
    std::fs::write(&outside, "{\"a\": 1}").unwrap();
    let tree = dir.path().join("tree");
    std::fs::create_dir(&tree).unwrap();
    std::os::unix::fs::symlink(&outside, tree.join("sample.json")).unwrap();
    std::fs::write(tree.join("real.json"), "{}").unwrap();
    let e = read_text_found(&tree.join("sample.json"), "", Kind::Document).unwrap_err();
    assert!(e.to_string().contains("a link"), "{e}");
    assert_eq!(
        read_text_found(&tree.join("real.json"), "", Kind::Document).unwrap(),
        "{}"
    );
    assert_eq!(
        read_text(&tree.join("sample.json"), "", Kind::Document).unwrap(),
        "{\"a\": 1}"
    );
}

/// A FIFO written to (a report sent to `-o fifo`) is opened without waiting: refused at once
/// when no process reads it; written, blocking as a pipe does, when one does.
#[test]
fn a_fifo_no_process_reads_is_refused_at_once_for_writing() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("out");
    fifo(&p);
    let q = p.clone();
    let e = promptly("open_device", move || open_device(&q, "").map(|_| ()));
    assert!(e.unwrap_err().to_string().contains("FIFO"), "refused");
    let q = p.clone();
    let reader = std::thread::spawn(move || std::fs::read(&q).unwrap().len());
    // The reader opens the FIFO; then a large write (beyond a pipe's buffer) blocks until read.
    let f = loop {
        if let Ok(f) = open_device(&p, "") {
            break f;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let mut f = f;
    std::io::Write::write_all(&mut f, &vec![b'x'; 1 << 20]).unwrap();
    drop(f);
    assert_eq!(reader.join().unwrap(), 1 << 20);
}
