//! Any small tree of files, folders, FIFOs and links (to ancestors, to devices, to nothing):
//! a walk ends, enters no link and lists each path once; reading any entry as a document returns
//! at once (the bytes of a regular file, else an error saying what it is).
#![no_main]

use std::path::{Path, PathBuf};
use std::time::Duration;

use arbitrary::Arbitrary;
use bench_core::opener::{self, Kind};
use libfuzzer_sys::fuzz_target;

#[derive(Debug, Arbitrary)]
enum Node {
    File(Vec<u8>),
    Dir(Vec<Node>),
    Fifo,
    LinkUp(u8),
    LinkTo(u8),
}

fn build(at: &Path, n: &Node, up: &[PathBuf], budget: &mut usize) {
    if *budget == 0 {
        return;
    }
    *budget -= 1;
    match n {
        Node::File(b) => std::fs::write(at, b).unwrap(),
        Node::Fifo => {
            let c = std::ffi::CString::new(at.as_os_str().as_encoded_bytes()).unwrap();
            unsafe { libc::mkfifo(c.as_ptr(), 0o600) };
        }
        Node::LinkUp(k) => {
            let t = &up[up.len() - 1 - (*k as usize % up.len())];
            std::os::unix::fs::symlink(t, at).unwrap();
        }
        Node::LinkTo(k) => {
            let t = ["/dev/zero", "/dev/urandom", "/nonexistent", "/proc/self/fd/0"][*k as usize % 4];
            std::os::unix::fs::symlink(t, at).unwrap();
        }
        Node::Dir(children) => {
            std::fs::create_dir(at).unwrap();
            let mut up = up.to_vec();
            up.push(at.to_path_buf());
            for (i, c) in children.iter().enumerate() {
                build(&at.join(format!("n{i}")), c, &up, budget);
            }
        }
    }
}

fn promptly<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(10)).expect("returned within 10 s")
}

fuzz_target!(|children: Vec<Node>| {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    let mut budget = 200;
    build(&root, &Node::Dir(children), &[dir.path().to_path_buf()], &mut budget);
    let r = root.clone();
    let found = promptly(move || opener::walk(&r, 8).unwrap());
    let mut paths: Vec<_> = found.iter().map(|e| e.path.clone()).collect();
    paths.dedup();
    assert_eq!(paths.len(), found.len());
    for e in &found {
        let rel = e.path.strip_prefix(&root).unwrap();
        let mut at = root.clone();
        for c in rel.parent().into_iter().flat_map(|p| p.components()) {
            at.push(c);
            assert!(std::fs::symlink_metadata(&at).unwrap().is_dir(), "entered {}", at.display());
        }
        let p = e.path.clone();
        let read = promptly(move || opener::read(&p, "", Kind::Document).is_ok());
        if read {
            assert!(std::fs::metadata(&e.path).unwrap().is_file());
        }
    }
});
