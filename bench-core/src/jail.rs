//! SQLite in a jail: a VFS of benchscope's, a shim over the one SQLite opens files with, that
//! refuses to open, delete or probe any path outside the folder (or the file) it was made for,
//! whatever names it: a statement, a pragma, a `-wal` beside the file, or the super-journal a
//! hot journal names (SQLite plays such a journal back and then deletes the super-journal file
//! it names, which can be any file the user owns).
//!
//! Two layers, each SQLite's own mechanism:
//! - [`install`] makes the jail the process's default VFS and unregisters every VFS that
//!   reaches the file system by name (`unix`, `unix-excl`, `unix-dotfile`, `unix-none`), so no
//!   connection of a runner can name one; the process's own folders ([`allow`]: the dataset
//!   cache) are what it may reach (`memdb`, which keeps a database in memory, stays: only
//!   benchscope's own code names it, a script cannot name a VFS);
//! - [`folder`] and [`file`] make a jail of one folder (a run's scratch folder, a snapshot's)
//!   or one file and its own journals (a results store), which a connection names by
//!   [`Jail::uri`] (a `file:` URI with `vfs=`) or [`Jail::name`].
//!
//! Each binary links its own SQLite (the harness crates link other libsqlite3-sys versions), so
//! the functions that register a VFS come from that binary's binding ([`sqlite_vfs_api!`]), as
//! [`crate::measure::sqlite_malloc`] takes `sqlite3_config`; `struct sqlite3_vfs` is SQLite's
//! C ABI (sqlite3.h), the same in every version since 3.7. Nothing here links SQLite.
//!
//! A refused path reads to SQLite as a file that does not exist (`xAccess`) or cannot be
//! opened (`xOpen`, `SQLITE_CANTOPEN`) or deleted; each refusal is kept ([`refusals`]) so a
//! runner can say what was asked. Temporary files SQLite names itself are named here instead,
//! inside the jail's folder (or the system's temporary folder for the process's jail), so a
//! `temp_store_directory` pragma cannot send them elsewhere. Loading an extension through the
//! VFS is refused.

use std::ffi::{CStr, CString, OsStr, c_char, c_int, c_void};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock, RwLock};

/// `sqlite3_vfs_find`, `sqlite3_vfs_register` and `sqlite3_vfs_unregister` of one binary's
/// SQLite, with the VFS as an untyped pointer (each binding has its own `sqlite3_vfs` type).
#[derive(Clone, Copy)]
pub struct Api {
    pub find: fn(*const c_char) -> *mut c_void,
    pub register: fn(*mut c_void, c_int) -> c_int,
    pub unregister: fn(*mut c_void) -> c_int,
}

/// The [`Api`] of the SQLite binding `$ffi` names (`use rusqlite::ffi;` then
/// `sqlite_vfs_api!(ffi)`).
#[macro_export]
macro_rules! sqlite_vfs_api {
    ($ffi:ident) => {
        $crate::jail::Api {
            // SAFETY (each): the binding's own functions, called as sqlite3.h documents them.
            find: |name| unsafe { $ffi::sqlite3_vfs_find(name).cast() },
            register: |vfs, dflt| unsafe { $ffi::sqlite3_vfs_register(vfs.cast(), dflt) },
            unregister: |vfs| unsafe { $ffi::sqlite3_vfs_unregister(vfs.cast()) },
        }
    };
}

/// The binding this process's jails are registered with: set by [`install`] (or [`use_api`]);
/// bench-core with its own rusqlite falls back to that binding's.
static API: OnceLock<Api> = OnceLock::new();

/// Sets the binding jails are registered with, without installing the process's jail (tests,
/// and a process that names a jail on each connection).
pub fn use_api(api: Api) {
    let _ = API.set(api);
}

fn api() -> Result<&'static Api, JailError> {
    #[cfg(feature = "sqlite")]
    {
        use rusqlite::ffi;
        Ok(API.get_or_init(|| sqlite_vfs_api!(ffi)))
    }
    #[cfg(not(feature = "sqlite"))]
    {
        API.get().ok_or(JailError::NoApi)
    }
}

/// Why a jail could not be made.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum JailError {
    #[error("the SQLite jail has no SQLite binding in this process (install it first)")]
    NoApi,
    #[error("SQLite has no default VFS to put a jail over")]
    NoDefault,
    #[error("cannot jail SQLite in {path}: {why}")]
    Path { path: String, why: String },
    #[error("SQLite refused the jail's VFS (result code {0})")]
    Register(c_int),
}

/// `struct sqlite3_vfs` (sqlite3.h), through version 3.
#[repr(C)]
struct RawVfs {
    i_version: c_int,
    sz_os_file: c_int,
    mx_pathname: c_int,
    p_next: *mut RawVfs,
    z_name: *const c_char,
    p_app_data: *mut c_void,
    x_open: Option<
        unsafe extern "C" fn(*mut RawVfs, *const c_char, *mut c_void, c_int, *mut c_int) -> c_int,
    >,
    x_delete: Option<unsafe extern "C" fn(*mut RawVfs, *const c_char, c_int) -> c_int>,
    x_access: Option<unsafe extern "C" fn(*mut RawVfs, *const c_char, c_int, *mut c_int) -> c_int>,
    x_full_pathname:
        Option<unsafe extern "C" fn(*mut RawVfs, *const c_char, c_int, *mut c_char) -> c_int>,
    x_dl_open: Option<unsafe extern "C" fn(*mut RawVfs, *const c_char) -> *mut c_void>,
    x_dl_error: Option<unsafe extern "C" fn(*mut RawVfs, c_int, *mut c_char)>,
    x_dl_sym: Option<
        unsafe extern "C" fn(
            *mut RawVfs,
            *mut c_void,
            *const c_char,
        ) -> Option<unsafe extern "C" fn()>,
    >,
    x_dl_close: Option<unsafe extern "C" fn(*mut RawVfs, *mut c_void)>,
    x_randomness: Option<unsafe extern "C" fn(*mut RawVfs, c_int, *mut c_char) -> c_int>,
    x_sleep: Option<unsafe extern "C" fn(*mut RawVfs, c_int) -> c_int>,
    x_current_time: Option<unsafe extern "C" fn(*mut RawVfs, *mut f64) -> c_int>,
    x_get_last_error: Option<unsafe extern "C" fn(*mut RawVfs, c_int, *mut c_char) -> c_int>,
    x_current_time_int64: Option<unsafe extern "C" fn(*mut RawVfs, *mut i64) -> c_int>,
    x_set_system_call: Option<unsafe extern "C" fn()>,
    x_get_system_call: Option<unsafe extern "C" fn()>,
    x_next_system_call: Option<unsafe extern "C" fn()>,
}

// sqlite3.h's codes and flags used here (stable since SQLite 3.7; NOFOLLOW since 3.31).
const SQLITE_OK: c_int = 0;
const SQLITE_CANTOPEN: c_int = 14;
const SQLITE_IOERR_DELETE: c_int = 10 | (10 << 8);
const SQLITE_OPEN_DELETEONCLOSE: c_int = 0x0000_0008;
const SQLITE_OPEN_NOFOLLOW: c_int = 0x0100_0000;
const SQLITE_OPEN_MAIN_DB: c_int = 0x0000_0100;

/// What SQLite keeps beside a database, named after it.
const BESIDE: [&[u8]; 3] = [b"-journal", b"-wal", b"-shm"];

/// Room for a temporary file's name after the file object of the VFS underneath.
const NAME_ROOM: usize = 512;

/// What one jail lets SQLite reach.
#[derive(Debug)]
enum Reach {
    /// Files in these folders (canonical), or folders under them. The process's jail: the
    /// list grows with [`allow`].
    Folders(RwLock<Vec<PathBuf>>),
    /// One file (its canonical folder and name) and its own `-journal`, `-wal` and `-shm`.
    File { dir: PathBuf, name: Vec<u8> },
}

/// A jail's state, SQLite's `pAppData`.
struct State {
    name: CString,
    reach: Reach,
    /// Where SQLite's own temporary files go (canonical).
    temp: PathBuf,
    /// The VFS underneath (`unix`), which every call is passed on to.
    base: *mut RawVfs,
    refused: Mutex<Vec<Refusal>>,
}

// SAFETY: `base` points at a VFS SQLite keeps for the life of the process and whose methods
// are thread-safe; the rest is Sync.
unsafe impl Send for State {}
unsafe impl Sync for State {}

/// Something SQLite asked for that a jail refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// `open`, `delete` or `access`.
    pub op: &'static str,
    pub path: PathBuf,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "SQLite was refused to {} {}",
            self.op,
            self.path.display()
        )
    }
}

/// The most refusals a jail keeps (the first ones).
const KEEP_REFUSALS: usize = 32;

impl State {
    fn refuse(&self, op: &'static str, path: &[u8]) {
        let mut r = self.refused.lock().unwrap_or_else(|e| e.into_inner());
        if r.len() < KEEP_REFUSALS {
            r.push(Refusal {
                op,
                path: PathBuf::from(OsStr::from_bytes(path)),
            });
        }
    }

    /// Whether SQLite may reach `path` (a full path, as SQLite names files to its VFS).
    fn permits(&self, path: &[u8]) -> bool {
        let Some(slash) = path.iter().rposition(|&b| b == b'/') else {
            return false;
        };
        let (parent, name) = (&path[..slash.max(1)], &path[slash + 1..]);
        if path[0] != b'/' || name.is_empty() || name == b"." || name == b".." {
            return false;
        }
        match &self.reach {
            Reach::Folders(list) => {
                let list = list.read().unwrap_or_else(|e| e.into_inner());
                // SQLite names a database by its full path with links resolved, and its
                // journals beside it: a file directly in a folder of the jail is the common
                // case, and needs no system call.
                if list.iter().any(|d| d.as_os_str().as_bytes() == parent) {
                    return true;
                }
                match canonical(parent) {
                    Some(p) => list.iter().any(|d| p.starts_with(d)),
                    None => false,
                }
            }
            Reach::File { dir, name: file } => {
                let ours = std::iter::once(&b""[..])
                    .chain(BESIDE)
                    .any(|s| name.strip_prefix(&file[..]) == Some(s));
                ours && (dir.as_os_str().as_bytes() == parent
                    || canonical(parent).is_some_and(|p| &p == dir))
            }
        }
    }
}

/// The first file at `path` (or, for a database, beside it: its journal, its WAL, its shared
/// memory, which the VFS underneath opens without asking this one) that SQLite must not open:
/// anything but a regular file (a FIFO a read would wait on for ever, a device, a socket; a
/// link is refused by `NOFOLLOW` on open, but the shared memory is opened without it), or a
/// journal, WAL or shared memory with another name elsewhere (a hard link: what SQLite
/// writes there would land in that other file).
fn unfit(path: &[u8], database: bool) -> Option<Vec<u8>> {
    let bad = |p: &[u8], journal: bool| {
        std::fs::symlink_metadata(OsStr::from_bytes(p))
            .is_ok_and(|m| !m.is_file() || (journal && m.nlink() > 1))
    };
    let journal = BESIDE.iter().any(|s| path.ends_with(s));
    if bad(path, journal) {
        return Some(path.to_vec());
    }
    if database {
        for s in BESIDE {
            let p = [path, s].concat();
            if bad(&p, true) {
                return Some(p);
            }
        }
    }
    None
}

/// `parent` with every link resolved, if it is a folder that exists.
fn canonical(parent: &[u8]) -> Option<PathBuf> {
    std::fs::canonicalize(OsStr::from_bytes(parent))
        .ok()
        .filter(|p| p.is_dir())
}

/// # Safety
/// `vfs` is a jail's VFS.
unsafe fn state<'a>(vfs: *mut RawVfs) -> &'a State {
    // SAFETY: a jail's `pAppData` is its leaked State.
    unsafe { &*(*vfs).p_app_data.cast::<State>() }
}

/// # Safety
/// `p` is null or a NUL-terminated string.
unsafe fn bytes<'a>(p: *const c_char) -> Option<&'a [u8]> {
    // SAFETY: per the contract.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_bytes())
}

unsafe extern "C" fn x_open(
    vfs: *mut RawVfs,
    name: *const c_char,
    file: *mut c_void,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    // SAFETY: SQLite calls with its own VFS pointer, a name or null, and a file object of
    // `sz_os_file` bytes.
    unsafe {
        let s = state(vfs);
        let base = s.base;
        let open = (*base).x_open.expect("a VFS opens files");
        match bytes(name) {
            Some(path) => {
                if !s.permits(path) {
                    s.refuse("open", path);
                    return SQLITE_CANTOPEN;
                }
                if let Some(bad) = unfit(path, flags & SQLITE_OPEN_MAIN_DB != 0) {
                    s.refuse("open", &bad);
                    return SQLITE_CANTOPEN;
                }
                open(base, name, file, flags | SQLITE_OPEN_NOFOLLOW, out_flags)
            }
            None => {
                // A temporary file SQLite would name itself (wherever `temp_store_directory`
                // points): named here, in the jail's own temporary folder, in the room kept
                // after the file object (it lives as long as the file).
                let room = file.cast::<u8>().add(base_size(base));
                let mut random = [0u8; 8];
                if let Some(r) = (*base).x_randomness {
                    r(base, 8, random.as_mut_ptr().cast());
                }
                let mut path = s.temp.as_os_str().as_bytes().to_vec();
                path.extend_from_slice(b"/etilqs_bs_");
                for b in random {
                    path.extend_from_slice(format!("{b:02x}").as_bytes());
                }
                if path.len() >= NAME_ROOM {
                    return SQLITE_CANTOPEN;
                }
                std::ptr::copy_nonoverlapping(path.as_ptr(), room, path.len());
                *room.add(path.len()) = 0;
                open(
                    base,
                    room.cast(),
                    file,
                    flags | SQLITE_OPEN_DELETEONCLOSE | SQLITE_OPEN_NOFOLLOW,
                    out_flags,
                )
            }
        }
    }
}

/// The VFS underneath's file object size, rounded up to 8 bytes.
///
/// # Safety
/// `base` is a registered VFS.
unsafe fn base_size(base: *mut RawVfs) -> usize {
    // SAFETY: per the contract.
    let n = usize::try_from(unsafe { (*base).sz_os_file }).unwrap_or(0);
    n.div_ceil(8) * 8
}

unsafe extern "C" fn x_delete(vfs: *mut RawVfs, name: *const c_char, sync_dir: c_int) -> c_int {
    // SAFETY: SQLite's VFS pointer and a NUL-terminated name.
    unsafe {
        let s = state(vfs);
        let path = bytes(name).unwrap_or_default();
        if !s.permits(path) {
            s.refuse("delete", path);
            return SQLITE_IOERR_DELETE;
        }
        ((*s.base).x_delete.expect("a VFS deletes"))(s.base, name, sync_dir)
    }
}

thread_local! {
    /// The last path this thread's jail let SQLite probe, and the jail's: in rollback-journal
    /// mode SQLite probes a database's `-journal` at every read transaction, and the answer
    /// does not change (a jail's reach only grows). A probe only says whether a file exists:
    /// opening or deleting what it names is judged again, every time.
    static PROBED: std::cell::RefCell<Vec<(usize, Vec<u8>)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The paths a thread remembers as probed (a database's `-journal` and `-wal`, for a few
/// databases).
const PROBED_KEPT: usize = 8;

unsafe extern "C" fn x_access(
    vfs: *mut RawVfs,
    name: *const c_char,
    flags: c_int,
    out: *mut c_int,
) -> c_int {
    // SAFETY: SQLite's VFS pointer, a NUL-terminated name and an int to write.
    unsafe {
        let s = state(vfs);
        let path = bytes(name).unwrap_or_default();
        let key = std::ptr::from_ref(s) as usize;
        let seen = PROBED.with(|p| p.borrow().iter().any(|(k, q)| *k == key && q == path));
        if !seen {
            if !s.permits(path) {
                s.refuse("access", path);
                *out = 0;
                return SQLITE_OK;
            }
            PROBED.with(|p| {
                let mut p = p.borrow_mut();
                if p.len() == PROBED_KEPT {
                    p.remove(0);
                }
                p.push((key, path.to_vec()));
            });
        }
        ((*s.base).x_access.expect("a VFS probes"))(s.base, name, flags, out)
    }
}

unsafe extern "C" fn x_full_pathname(
    vfs: *mut RawVfs,
    name: *const c_char,
    n: c_int,
    out: *mut c_char,
) -> c_int {
    // SAFETY: passed on as SQLite gave it.
    unsafe {
        let base = state(vfs).base;
        ((*base).x_full_pathname.expect("a VFS names"))(base, name, n, out)
    }
}

unsafe extern "C" fn x_dl_open(_vfs: *mut RawVfs, _name: *const c_char) -> *mut c_void {
    std::ptr::null_mut()
}

unsafe extern "C" fn x_dl_error(_vfs: *mut RawVfs, n: c_int, out: *mut c_char) {
    let msg = b"extensions are not loaded in benchscope's SQLite jail\0";
    let Ok(n) = usize::try_from(n) else { return };
    if n == 0 || out.is_null() {
        return;
    }
    let len = msg.len().min(n);
    // SAFETY: SQLite gives `n` bytes at `out`; the last one written is a NUL.
    unsafe {
        std::ptr::copy_nonoverlapping(msg.as_ptr().cast(), out, len);
        *out.add(len - 1) = 0;
    }
}

unsafe extern "C" fn x_dl_sym(
    _vfs: *mut RawVfs,
    _handle: *mut c_void,
    _symbol: *const c_char,
) -> Option<unsafe extern "C" fn()> {
    None
}

unsafe extern "C" fn x_dl_close(_vfs: *mut RawVfs, _handle: *mut c_void) {}

unsafe extern "C" fn x_randomness(vfs: *mut RawVfs, n: c_int, out: *mut c_char) -> c_int {
    // SAFETY: passed on as SQLite gave it.
    unsafe {
        let base = state(vfs).base;
        ((*base).x_randomness.expect("a VFS has randomness"))(base, n, out)
    }
}

unsafe extern "C" fn x_sleep(vfs: *mut RawVfs, us: c_int) -> c_int {
    // SAFETY: passed on as SQLite gave it.
    unsafe {
        let base = state(vfs).base;
        ((*base).x_sleep.expect("a VFS sleeps"))(base, us)
    }
}

unsafe extern "C" fn x_current_time(vfs: *mut RawVfs, out: *mut f64) -> c_int {
    // SAFETY: passed on as SQLite gave it.
    unsafe {
        let base = state(vfs).base;
        ((*base).x_current_time.expect("a VFS tells the time"))(base, out)
    }
}

unsafe extern "C" fn x_get_last_error(vfs: *mut RawVfs, n: c_int, out: *mut c_char) -> c_int {
    // SAFETY: passed on as SQLite gave it.
    unsafe {
        let base = state(vfs).base;
        match (*base).x_get_last_error {
            Some(f) => f(base, n, out),
            None => 0,
        }
    }
}

unsafe extern "C" fn x_current_time_int64(vfs: *mut RawVfs, out: *mut i64) -> c_int {
    // SAFETY: passed on as SQLite gave it (a version-2 VFS has it).
    unsafe {
        let base = state(vfs).base;
        ((*base).x_current_time_int64.expect("a version-2 VFS"))(base, out)
    }
}

/// A jail registered with SQLite: its VFS's name, and what SQLite asked of it that it refused.
#[derive(Clone, Copy)]
pub struct Jail {
    state: &'static State,
}

impl std::fmt::Debug for Jail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Jail")
            .field("name", &self.state.name)
            .field("reach", &self.state.reach)
            .finish()
    }
}

impl Jail {
    /// The VFS's name, for a binding's `vfs` option.
    pub fn name(&self) -> &'static str {
        self.state.name.to_str().expect("ASCII")
    }

    /// A `file:` URI naming `path` through this jail (`?vfs=...`, and `&mode=ro` when
    /// `read_only`), for bindings that open by a name: every path is percent-encoded where a
    /// URI would read it otherwise.
    pub fn uri(&self, path: &Path, read_only: bool) -> String {
        let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        let mut s = String::from("file:");
        for &b in abs.as_os_str().as_bytes() {
            if b.is_ascii_alphanumeric() || b"/-_.~".contains(&b) {
                s.push(char::from(b));
            } else {
                s.push_str(&format!("%{b:02X}"));
            }
        }
        s.push_str("?vfs=");
        s.push_str(self.name());
        if read_only {
            s.push_str("&mode=ro");
        }
        s
    }

    /// What SQLite asked of this jail that it refused (the first ones), oldest first.
    pub fn refusals(&self) -> Vec<Refusal> {
        self.state
            .refused
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

/// The jails made, by what they reach (one VFS each, for the life of the process).
static JAILS: Mutex<Vec<(Key, Jail)>> = Mutex::new(Vec::new());

#[derive(PartialEq, Eq, Clone)]
enum Key {
    Process,
    Folder(PathBuf),
    File(PathBuf),
}

/// The most jails a process makes (each is a VFS SQLite keeps until the process ends).
const MAX_JAILS: usize = 4096;

fn make(
    api: &Api,
    key: Key,
    reach: Reach,
    temp: PathBuf,
    default: bool,
) -> Result<Jail, JailError> {
    let mut jails = JAILS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, j)) = jails.iter().find(|(k, _)| *k == key) {
        return Ok(*j);
    }
    if jails.len() >= MAX_JAILS {
        return Err(JailError::Path {
            path: crate::text::terminal_str(&temp.display().to_string()),
            why: format!("more than {MAX_JAILS} jails in one process"),
        });
    }
    // The VFS underneath: the process jail's when there is one (its own base), else the
    // default, which is then `unix`.
    let base = match jails.iter().find(|(k, _)| *k == Key::Process) {
        Some((_, j)) => j.state.base,
        None => (api.find)(std::ptr::null()).cast::<RawVfs>(),
    };
    if base.is_null() {
        return Err(JailError::NoDefault);
    }
    let name = CString::new(format!("benchscope-jail-{}", jails.len())).expect("no NUL");
    let state: &'static State = Box::leak(Box::new(State {
        name,
        reach,
        temp,
        base,
        refused: Mutex::new(Vec::new()),
    }));
    // SAFETY: `base` is a registered VFS, read whole (version 3 fields are read only where
    // its version has them).
    let vfs = unsafe {
        let b = &*base;
        RawVfs {
            i_version: 2,
            sz_os_file: c_int::try_from(base_size(base) + NAME_ROOM).expect("small"),
            mx_pathname: b.mx_pathname,
            p_next: std::ptr::null_mut(),
            z_name: state.name.as_ptr(),
            p_app_data: std::ptr::from_ref(state).cast_mut().cast(),
            x_open: Some(x_open),
            x_delete: Some(x_delete),
            x_access: Some(x_access),
            x_full_pathname: Some(x_full_pathname),
            x_dl_open: Some(x_dl_open),
            x_dl_error: Some(x_dl_error),
            x_dl_sym: Some(x_dl_sym),
            x_dl_close: Some(x_dl_close),
            x_randomness: Some(x_randomness),
            x_sleep: Some(x_sleep),
            x_current_time: Some(x_current_time),
            x_get_last_error: Some(x_get_last_error),
            x_current_time_int64: if b.i_version >= 2 && b.x_current_time_int64.is_some() {
                Some(x_current_time_int64)
            } else {
                None
            },
            x_set_system_call: None,
            x_get_system_call: None,
            x_next_system_call: None,
        }
    };
    let vfs: &'static mut RawVfs = Box::leak(Box::new(vfs));
    let rc = (api.register)(std::ptr::from_mut(vfs).cast(), c_int::from(default));
    if rc != SQLITE_OK {
        return Err(JailError::Register(rc));
    }
    let jail = Jail { state };
    jails.push((key, jail));
    Ok(jail)
}

fn canonical_dir(dir: &Path) -> Result<PathBuf, JailError> {
    let why = |why: String| JailError::Path {
        path: crate::text::terminal_str(&dir.display().to_string()),
        why,
    };
    let c = std::fs::canonicalize(dir).map_err(|e| why(e.to_string()))?;
    if !c.is_dir() {
        return Err(why("not a folder".into()));
    }
    if c.as_os_str().len() + 40 > NAME_ROOM {
        return Err(why(format!("a path longer than {} bytes", NAME_ROOM - 40)));
    }
    Ok(c)
}

/// A jail of the folder `dir` (which must exist): SQLite reaches files in it and in folders
/// under it, and nothing else; its temporary files go in it too. The same folder gives the
/// same jail.
pub fn folder(dir: &Path) -> Result<Jail, JailError> {
    let api = api()?;
    let c = canonical_dir(dir)?;
    make(
        api,
        Key::Folder(c.clone()),
        Reach::Folders(RwLock::new(vec![c.clone()])),
        c,
        false,
    )
}

/// A jail of the file at `path` (its folder must exist; the file need not): SQLite reaches the
/// file and its own `-journal`, `-wal` and `-shm`, and nothing else; its temporary files go to
/// the system's temporary folder.
pub fn file(path: &Path) -> Result<Jail, JailError> {
    let api = api()?;
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let dir = canonical_dir(parent)?;
    let name = path
        .file_name()
        .ok_or_else(|| JailError::Path {
            path: crate::text::terminal_str(&path.display().to_string()),
            why: "names no file".into(),
        })?
        .as_bytes()
        .to_vec();
    let full = dir.join(OsStr::from_bytes(&name));
    make(
        api,
        Key::File(full),
        Reach::File { dir, name },
        canonical_dir(&std::env::temp_dir())?,
        false,
    )
}

/// Makes the process's jail SQLite's default VFS and unregisters `unix` and its kin, so that no
/// connection of this process reaches a file but through a jail:
/// by default the folders [`allow`] adds, else the jail it names. Call it once, after
/// `sqlite3_config` and before any connection opens.
pub fn install(api: Api) -> Result<Jail, JailError> {
    use_api(api);
    let api = self::api()?;
    let temp = canonical_dir(&std::env::temp_dir())?;
    let jail = make(
        api,
        Key::Process,
        Reach::Folders(RwLock::new(Vec::new())),
        temp,
        true,
    )?;
    // Every other VFS goes: the jails wrap the one underneath, which stays alive (SQLite
    // never frees a VFS) but can no longer be named.
    loop {
        let mut p = (api.find)(std::ptr::null()).cast::<RawVfs>();
        let mut other = std::ptr::null_mut();
        while !p.is_null() {
            // SAFETY: SQLite's list of registered VFSes.
            let name = unsafe { bytes((*p).z_name) }.unwrap_or_default();
            // `unix` and its kin (`unix-excl`, `unix-dotfile`, `unix-none`) reach the file
            // system; `memdb` keeps a database in memory and is named only by benchscope's
            // own code (a script cannot name a VFS: ATTACH is refused by the authorizer).
            if name.starts_with(b"unix") {
                other = p;
                break;
            }
            // SAFETY: as above.
            p = unsafe { (*p).p_next };
        }
        if other.is_null() {
            break;
        }
        let rc = (api.unregister)(other.cast());
        if rc != SQLITE_OK {
            return Err(JailError::Register(rc));
        }
    }
    Ok(jail)
}

/// Lets the process's jail reach the folder `dir` (created if missing) and what is under it.
pub fn allow(dir: &Path) -> Result<(), JailError> {
    let _ = std::fs::create_dir_all(dir);
    let c = canonical_dir(dir)?;
    let jails = JAILS.lock().unwrap_or_else(|e| e.into_inner());
    let Some((_, j)) = jails.iter().find(|(k, _)| *k == Key::Process) else {
        return Err(JailError::NoApi);
    };
    if let Reach::Folders(list) = &j.state.reach {
        let mut list = list.write().unwrap_or_else(|e| e.into_inner());
        if !list.contains(&c) {
            list.push(c);
        }
    }
    Ok(())
}

/// The process's jail, when [`install`] made one.
pub fn process() -> Option<Jail> {
    JAILS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .find(|(k, _)| *k == Key::Process)
        .map(|(_, j)| *j)
}

/// What any jail of this process refused so far.
pub fn refusals() -> Vec<Refusal> {
    JAILS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .flat_map(|(_, j)| j.refusals())
        .collect()
}

#[cfg(all(test, feature = "sqlite"))]
mod tests;
