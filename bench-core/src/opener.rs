//! The one way benchscope reads a file it did not write in this run: a user's database, script
//! or `--init` file, a saved report, baseline or journal, a Criterion folder, the results
//! store's lock, the machine's files under `/proc`, the CPU latency device.
//!
//! - Opened without waiting: `O_NONBLOCK` (a FIFO with no writer, or a device, opens at once),
//!   then `fstat` on what was opened: a regular file only, else a clear error naming the path
//!   and what it is (a folder, a FIFO, a socket, a device, through any link).
//! - Read up to a bound per kind of file ([`Kind`]): a link to `/dev/zero` is a device and is
//!   refused, a file larger than its kind allows is refused by its size before a byte is read,
//!   and a file that grows while read (a `/proc` file reports no size) is cut at the bound and
//!   refused.
//! - Folders walked ([`walk`]) without following a link, each folder once (by device and inode),
//!   to a depth and a count of entries.
//! - Files opened for writing that must not block (the measurement lock, the CPU latency
//!   device) opened the same way and within a time limit ([`open_lock`], [`open_device`]).
//!
//! A test (`tests/layers.rs`, `reads_go_through_the_opener`) fails when code outside this module
//! opens a file for reading.

use std::ffi::OsString;
use std::fs::{File, FileType};
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What a file is read as, and the most of it read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A JSON document benchscope saved (a report, a baseline, a snapshot) or Criterion did.
    Document,
    /// Text a person writes: a script, an `--init` file (UTF-8).
    Text,
    /// A session journal (a JSON line per event).
    Journal,
    /// A SQLite database or one of its `-wal` and `-journal`, read as bytes to be copied.
    Database,
    /// A small file of the system's or of benchscope's data folder (`/proc/stat`,
    /// `machine.json`, a folded profile).
    Small,
    /// A program's own executable, for its symbol table.
    Executable,
}

impl Kind {
    /// The most bytes read of a file of this kind (`None`: no bound, the file is streamed).
    pub const fn bound(self) -> Option<u64> {
        match self {
            Kind::Document | Kind::Text => Some(64 << 20),
            Kind::Journal => Some(512 << 20),
            Kind::Database => None,
            Kind::Small => Some(16 << 20),
            Kind::Executable => Some(4 << 30),
        }
    }

    fn noun(self) -> &'static str {
        match self {
            Kind::Document => "a JSON document",
            Kind::Text => "a text file",
            Kind::Journal => "a session journal",
            Kind::Database => "a database file",
            Kind::Small => "a file",
            Kind::Executable => "an executable",
        }
    }
}

/// Why a file was not read.
#[derive(Debug)]
pub enum Why {
    Open(std::io::Error),
    /// What it is instead of a regular file.
    NotRegular(&'static str),
    /// What it is instead of a character device.
    NotDevice(&'static str),
    /// Its size (or what was read of it) and the bound.
    TooLarge(u64, u64),
    NotUtf8(usize),
    Read(std::io::Error),
    /// A folder walk past its limits.
    TooMany(usize),
    /// An open that did not return within the limit.
    Timeout(Duration),
}

/// A file (or folder) that was not read, with the name it goes by in messages (a flag such as
/// `--db`, or nothing), and why.
#[derive(Debug)]
pub struct OpenError {
    pub label: String,
    pub path: PathBuf,
    pub kind: Kind,
    pub why: Why,
}

impl OpenError {
    /// Whether nothing is at the path: the one failure a reader may take for "not made yet".
    pub fn is_missing(&self) -> bool {
        matches!(&self.why, Why::Open(e) if e.kind() == std::io::ErrorKind::NotFound)
    }
}

fn mib(n: u64) -> String {
    if n >= 1 << 30 && n.is_multiple_of(1 << 30) {
        format!("{} GiB", n >> 30)
    } else {
        format!("{} MiB", n >> 20)
    }
}

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if !self.label.is_empty() {
            write!(f, "{} ", self.label)?;
        }
        // A path from data (a folder walked, a name in a report) may hold a line break or an
        // escape: it cannot start a line of its own in the message.
        write!(
            f,
            "{}: ",
            crate::text::terminal_str(&self.path.display().to_string())
        )?;
        match &self.why {
            Why::Open(e) => write!(f, "cannot open it: {e}"),
            Why::NotRegular(what) => {
                write!(f, "{what}; allowed: {} (a regular file)", self.kind.noun())
            }
            Why::NotDevice(what) => write!(
                f,
                "{what}; allowed: a character device (or a FIFO a process reads)"
            ),
            Why::TooLarge(size, bound) => write!(
                f,
                "larger than {} ({} bytes or more); allowed: {} of at most {}",
                mib(*bound),
                size,
                self.kind.noun(),
                mib(*bound)
            ),
            Why::NotUtf8(at) => write!(f, "not UTF-8 text (byte {at}); allowed: a UTF-8 text file"),
            Why::Read(e) => write!(f, "cannot read it: {e}"),
            Why::TooMany(n) => write!(
                f,
                "more than {n} entries in the folders under it; allowed: at most {n}"
            ),
            Why::Timeout(d) => write!(
                f,
                "did not open within {} s (a file system that does not answer?)",
                d.as_secs()
            ),
        }
    }
}

impl std::error::Error for OpenError {}

impl From<OpenError> for crate::BenchError {
    fn from(e: OpenError) -> Self {
        crate::BenchError::Invalid(e.to_string())
    }
}

/// Why an open failed: what the path is when that is the reason (a socket, a FIFO with no
/// reader opened for writing), else the system's error.
fn open_failed(label: &str, path: &Path, kind: Kind, e: std::io::Error, device: bool) -> OpenError {
    let why = match std::fs::metadata(path) {
        Ok(m) if device && m.file_type().is_fifo() => Why::NotDevice("a FIFO no process reads"),
        Ok(m) if device && !m.file_type().is_char_device() => {
            Why::NotDevice(type_name(m.file_type()))
        }
        Ok(m) if !device && !m.is_file() => Why::NotRegular(type_name(m.file_type())),
        _ => Why::Open(e),
    };
    err(label, path, kind, why)
}

fn err(label: &str, path: &Path, kind: Kind, why: Why) -> OpenError {
    OpenError {
        label: label.to_string(),
        path: path.to_path_buf(),
        kind,
        why,
    }
}

/// What a file type is, in words.
pub fn type_name(t: FileType) -> &'static str {
    if t.is_dir() {
        "a folder"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else if t.is_symlink() {
        "a link"
    } else if t.is_file() {
        "a regular file"
    } else {
        "not a regular file"
    }
}

/// An open regular file and its size when opened.
#[derive(Debug)]
pub struct Opened {
    pub file: File,
    pub len: u64,
}

/// Opens `path` for reading if it is a regular file, without waiting on what is not one, and
/// refuses it when it is larger than `kind` allows. `label` names it in errors (`--db`).
pub fn open(path: &Path, label: &str, kind: Kind) -> Result<Opened, OpenError> {
    open_flags(path, label, kind, 0)
}

fn open_flags(path: &Path, label: &str, kind: Kind, flags: i32) -> Result<Opened, OpenError> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | flags)
        .open(path)
        .map_err(|e| match std::fs::symlink_metadata(path) {
            Ok(m) if flags & libc::O_NOFOLLOW != 0 && m.file_type().is_symlink() => {
                err(label, path, kind, Why::NotRegular("a link"))
            }
            _ => open_failed(label, path, kind, e, false),
        })?;
    let meta = file
        .metadata()
        .map_err(|e| err(label, path, kind, Why::Read(e)))?;
    if !meta.file_type().is_file() {
        return Err(err(
            label,
            path,
            kind,
            Why::NotRegular(type_name(meta.file_type())),
        ));
    }
    if let Some(bound) = kind.bound()
        && meta.len() > bound
    {
        return Err(err(label, path, kind, Why::TooLarge(meta.len(), bound)));
    }
    Ok(Opened {
        file,
        len: meta.len(),
    })
}

/// The bytes of a regular file of `kind` (within its bound).
pub fn read(path: &Path, label: &str, kind: Kind) -> Result<Vec<u8>, OpenError> {
    read_opened(open(path, label, kind)?, path, label, kind)
}

/// [`read_text`] of a file found in a folder (a Criterion tree's, a baselines folder's) rather
/// than named by the user: a link there is refused, never followed out of the folder.
pub fn read_text_found(path: &Path, label: &str, kind: Kind) -> Result<String, OpenError> {
    let o = open_flags(path, label, kind, libc::O_NOFOLLOW)?;
    utf8(read_opened(o, path, label, kind)?, path, label, kind)
}

fn read_opened(o: Opened, path: &Path, label: &str, kind: Kind) -> Result<Vec<u8>, OpenError> {
    let bound = kind.bound().unwrap_or(u64::MAX);
    let mut bytes = Vec::with_capacity(usize::try_from(o.len.min(bound)).unwrap_or(0));
    o.file
        .take(bound.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| err(label, path, kind, Why::Read(e)))?;
    if bytes.len() as u64 > bound {
        return Err(err(
            label,
            path,
            kind,
            Why::TooLarge(bytes.len() as u64, bound),
        ));
    }
    Ok(bytes)
}

/// The text of a regular file of `kind` (within its bound), in UTF-8.
pub fn read_text(path: &Path, label: &str, kind: Kind) -> Result<String, OpenError> {
    utf8(read(path, label, kind)?, path, label, kind)
}

fn utf8(bytes: Vec<u8>, path: &Path, label: &str, kind: Kind) -> Result<String, OpenError> {
    String::from_utf8(bytes).map_err(|e| {
        err(
            label,
            path,
            kind,
            Why::NotUtf8(e.utf8_error().valid_up_to()),
        )
    })
}

/// Whether `path` is a regular file (through links), without opening it.
pub fn is_file(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file())
}

/// The most entries a folder listing or walk takes.
pub const MAX_ENTRIES: usize = 200_000;

/// The names in the folder `dir` (not `.` and `..`), at most [`MAX_ENTRIES`].
pub fn list(dir: &Path) -> Result<Vec<OsString>, OpenError> {
    let entries = std::fs::read_dir(dir).map_err(|e| err("", dir, Kind::Small, Why::Open(e)))?;
    let mut out = Vec::new();
    for e in entries {
        let e = e.map_err(|e| err("", dir, Kind::Small, Why::Read(e)))?;
        if out.len() == MAX_ENTRIES {
            return Err(err("", dir, Kind::Small, Why::TooMany(MAX_ENTRIES)));
        }
        out.push(e.file_name());
    }
    Ok(out)
}

/// One entry a walk found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub path: PathBuf,
    /// 1 for the root's own entries.
    pub depth: usize,
    /// What it is, links not followed: `a folder`, `a regular file`, `a link`, ...
    pub what: &'static str,
}

impl Entry {
    pub fn is_dir(&self) -> bool {
        self.what == "a folder"
    }

    pub fn is_file(&self) -> bool {
        self.what == "a regular file"
    }
}

/// Every entry under the folder `root` down to `depth` folders, sorted by path, links not
/// followed (a link is an entry, never a way in), each folder entered once; at most
/// [`MAX_ENTRIES`] entries. The root itself may be a link to a folder: the user named it.
pub fn walk(root: &Path, depth: usize) -> Result<Vec<Entry>, OpenError> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    let meta = std::fs::metadata(root).map_err(|e| err("", root, Kind::Small, Why::Open(e)))?;
    if !meta.is_dir() {
        return Err(err(
            "",
            root,
            Kind::Small,
            Why::NotRegular(type_name(meta.file_type())),
        ));
    }
    seen.insert((meta.dev(), meta.ino()));
    let mut stack = vec![(root.to_path_buf(), 1usize)];
    while let Some((dir, d)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(t) = e.file_type() else { continue };
            if out.len() == MAX_ENTRIES {
                return Err(err("", root, Kind::Small, Why::TooMany(MAX_ENTRIES)));
            }
            let entry = Entry {
                path: e.path(),
                depth: d,
                what: type_name(t),
            };
            if t.is_dir()
                && d < depth
                && let Ok(m) = e.metadata()
                && seen.insert((m.dev(), m.ino()))
            {
                stack.push((entry.path.clone(), d + 1));
            }
            out.push(entry);
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// How long an open that must not block may take.
pub const OPEN_LIMIT: Duration = Duration::from_secs(5);

/// Runs `open` on a thread of its own and gives up after `limit` (the thread is left to
/// finish or not: an open stuck in the kernel cannot be taken back).
fn within<T: Send + 'static>(
    limit: Duration,
    open: impl FnOnce() -> std::io::Result<T> + Send + 'static,
) -> Result<std::io::Result<T>, ()> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("benchscope-open".into())
        .spawn(move || {
            let _ = tx.send(open());
        })
        .map_err(|_| ())?;
    rx.recv_timeout(limit).map_err(|_| ())
}

/// Opens (creating it if missing) the lock file at `path` for `flock`: a regular file only,
/// opened without waiting, within [`OPEN_LIMIT`].
pub fn open_lock(path: &Path, label: &str) -> Result<File, OpenError> {
    let p = path.to_path_buf();
    let opened = within(OPEN_LIMIT, move || {
        std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_NOFOLLOW)
            .mode(0o644)
            .open(&p)
    })
    .map_err(|()| err(label, path, Kind::Small, Why::Timeout(OPEN_LIMIT)))?
    .map_err(|e| open_failed(label, path, Kind::Small, e, false))?;
    regular(opened, path, label, Kind::Small)
}

/// `file` when what was opened is a regular file, else refused by what it is.
fn regular(file: File, path: &Path, label: &str, kind: Kind) -> Result<File, OpenError> {
    let meta = file
        .metadata()
        .map_err(|e| err(label, path, kind, Why::Read(e)))?;
    if !meta.is_file() {
        return Err(err(
            label,
            path,
            kind,
            Why::NotRegular(type_name(meta.file_type())),
        ));
    }
    Ok(file)
}

/// Opens (creating it if missing) the regular file at `path` to append to it and read it back
/// (a journal this process keeps): opened without waiting, a regular file only.
pub fn open_append(path: &Path, label: &str) -> Result<File, OpenError> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_NOFOLLOW)
        .mode(0o644)
        .open(path)
        .map_err(|e| open_failed(label, path, Kind::Journal, e, false))?;
    regular(file, path, label, Kind::Journal)
}

/// Opens the character device at `path` for writing, without waiting, within [`OPEN_LIMIT`]
/// (a FIFO that a process reads is taken too, as a device's stand-in; one that no process
/// reads is refused at once): a regular file, a folder or a socket is refused by what it is,
/// and nothing is written to a file that is not a device.
pub fn open_device(path: &Path, label: &str) -> Result<File, OpenError> {
    let p = path.to_path_buf();
    let opened = within(OPEN_LIMIT, move || {
        std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
            .open(&p)
    })
    .map_err(|()| err(label, path, Kind::Small, Why::Timeout(OPEN_LIMIT)))?
    .map_err(|e| open_failed(label, path, Kind::Small, e, true))?;
    let meta = opened
        .metadata()
        .map_err(|e| err(label, path, Kind::Small, Why::Read(e)))?;
    if !(meta.file_type().is_char_device() || meta.file_type().is_fifo()) {
        return Err(err(
            label,
            path,
            Kind::Small,
            Why::NotDevice(type_name(meta.file_type())),
        ));
    }
    blocking(&opened).map_err(|e| err(label, path, Kind::Small, Why::Read(e)))?;
    Ok(opened)
}

/// Clears `O_NONBLOCK` on an opened file: opening must not wait, writing to a pipe must (a
/// report larger than the pipe's buffer, written to a pager).
fn blocking(f: &File) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd = f.as_raw_fd();
    // SAFETY: fcntl on a descriptor this File owns, with flags it read from it.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Copies the regular file at `from` (opened as [`open`] does) to a new file at `to`; returns
/// the bytes copied.
pub fn copy(from: &Path, to: &Path, label: &str, kind: Kind) -> Result<u64, OpenError> {
    let mut o = open(from, label, kind)?;
    let mut out = File::create(to).map_err(|e| err(label, to, kind, Why::Open(e)))?;
    std::io::copy(&mut o.file, &mut out).map_err(|e| err(label, from, kind, Why::Read(e)))
}

#[cfg(test)]
mod tests;
