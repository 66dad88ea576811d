//! SQLite judges every statement of a script before anything runs: each is prepared on a
//! read-only connection to the run's copy of the database, with an authorizer that sees every
//! action SQLite's own parser and planner find in it (the same text, the same schema, the
//! same rules as the run). Comments, byte order marks, odd case, CTEs and nesting cannot hide
//! a statement from it, since no text is read here but SQLite's.
//!
//! - Refused: ATTACH and DETACH (other files), PRAGMAs other than reads, VACUUM (it rewrites a
//!   file, or writes one anywhere with INTO), `load_extension`, savepoints, more than one
//!   statement, and what SQLite cannot prepare here. (Writes to the schema table SQLite
//!   refuses itself without `writable_schema`, a PRAGMA refused here.)
//! - Otherwise the kind: transaction control as the authorizer saw it, else a read when
//!   `sqlite3_stmt_readonly` says so, else a write.
//!
//! One source, compiled into bench-core against its rusqlite and into each harness crate
//! against the rusqlite of that harness's SQLite (`#[path]`, as on_rusqlite/): so it names
//! bench-core's items as `bench_core::`.

use std::path::Path;
use std::sync::{Arc, Mutex};

use bench_core::script::{Kind, Mix, Placeholders, ScriptError};
use rusqlite::fallible_iterator::FallibleIterator;
use rusqlite::hooks::{AuthAction, AuthContext, Authorization, TransactionOperation};
use rusqlite::{Connection, OpenFlags};

/// Pragmas that only read, allowed with no value (`PRAGMA page_count`).
const READ_PRAGMAS: &[&str] = &[
    "application_id",
    "cache_size",
    "collation_list",
    "compile_options",
    "data_version",
    "database_list",
    "encoding",
    "foreign_keys",
    "freelist_count",
    "function_list",
    "journal_mode",
    "locking_mode",
    "mmap_size",
    "module_list",
    "page_count",
    "page_size",
    "pragma_list",
    "schema_version",
    "synchronous",
    "table_list",
    "user_version",
];

/// Pragmas that only read, allowed with a table or index name (`PRAGMA table_info(t)`).
const READ_PRAGMAS_OF: &[&str] = &[
    "foreign_key_list",
    "index_info",
    "index_list",
    "index_xinfo",
    "table_info",
    "table_xinfo",
    "table_list",
];

/// What is allowed, as refusals say it.
pub const ALLOWED: &str = "reads and row or schema changes on the database given, BEGIN, COMMIT, END, ROLLBACK, and PRAGMA reads (table_info(T), index_list(T), page_count, ...)";

/// Whether an action changes the database (rows or schema).
fn writes(a: &AuthAction<'_>) -> bool {
    use AuthAction as A;
    matches!(
        a,
        A::CreateIndex { .. }
            | A::CreateTable { .. }
            | A::CreateTempIndex { .. }
            | A::CreateTempTable { .. }
            | A::CreateTempTrigger { .. }
            | A::CreateTempView { .. }
            | A::CreateTrigger { .. }
            | A::CreateView { .. }
            | A::Delete { .. }
            | A::DropIndex { .. }
            | A::DropTable { .. }
            | A::DropTempIndex { .. }
            | A::DropTempTable { .. }
            | A::DropTempTrigger { .. }
            | A::DropTempView { .. }
            | A::DropTrigger { .. }
            | A::DropView { .. }
            | A::Insert { .. }
            | A::Update { .. }
            | A::AlterTable { .. }
            | A::Reindex { .. }
            | A::Analyze { .. }
            | A::CreateVtable { .. }
            | A::DropVtable { .. }
    )
}

/// Which statements a connection takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// A script's statements: PRAGMA reads only.
    Script,
    /// An `--init` file building a new database: any PRAGMA (journal_mode, say); still no
    /// other file, no extension, no whole-file rewrite.
    Init,
}

/// Why an action is refused under `policy`, or `None` when it is allowed.
pub fn refusal(a: &AuthAction<'_>, policy: Policy) -> Option<String> {
    use AuthAction as A;
    Some(match a {
        A::Attach { filename } => {
            format!("ATTACH of {filename:?}: it reaches files other than the run's copy")
        }
        A::Detach { database_name } => format!("DETACH {database_name}: of what ATTACH would add"),
        A::Pragma { .. } if policy == Policy::Init => return None,
        A::Pragma {
            pragma_name,
            pragma_value,
        } => {
            let name = pragma_name.to_ascii_lowercase();
            let read = match pragma_value {
                None => READ_PRAGMAS.contains(&name.as_str()),
                Some(_) => READ_PRAGMAS_OF.contains(&name.as_str()),
            };
            if read {
                return None;
            }
            match pragma_value {
                Some(v) => format!(
                    "PRAGMA {pragma_name} = {v}: it changes the connection or the file (the SQLite knobs set journal_mode, synchronous, ...)"
                ),
                None => {
                    format!("PRAGMA {pragma_name}: not a read benchscope knows to have no effect")
                }
            }
        }
        A::Function { function_name } if function_name.eq_ignore_ascii_case("load_extension") => {
            "load_extension(): it loads code into the runner".to_string()
        }
        A::Savepoint { .. } if policy == Policy::Init => return None,
        A::Savepoint {
            operation,
            savepoint_name,
        } => {
            let op = match operation {
                TransactionOperation::Begin => "SAVEPOINT",
                TransactionOperation::Release => "RELEASE",
                TransactionOperation::Rollback => "ROLLBACK TO",
                _ => "a savepoint operation on",
            };
            format!("{op} {savepoint_name}: a transaction inside a transaction")
        }
        _ => return None,
    })
}

/// What the authorizer saw while one statement was prepared.
#[derive(Debug, Default)]
struct Seen {
    refused: Option<String>,
    control: Option<Kind>,
    wrote: bool,
}

/// SQLite's authorizer on a connection, recording what each statement prepared does. (The
/// connection is taken `&mut` where the authorizer is set or removed: some rusqlite lines
/// ask for it.)
pub struct Guard {
    seen: Arc<Mutex<Seen>>,
}

impl Guard {
    /// Installs the authorizer of `policy` on `conn`, until [`Guard::remove`].
    pub fn install(conn: &mut Connection, policy: Policy) -> Result<Self, String> {
        let seen = Arc::new(Mutex::new(Seen::default()));
        let log = seen.clone();
        conn.authorizer(Some(move |ctx: AuthContext<'_>| {
            let mut s = log.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(why) = refusal(&ctx.action, policy) {
                s.refused.get_or_insert(why);
                return Authorization::Deny;
            }
            if let AuthAction::Transaction { operation } = ctx.action {
                // SQLite names the operation BEGIN, COMMIT (END too) or ROLLBACK; rusqlite
                // knows no COMMIT among its operations and gives it as Unknown.
                s.control = Some(match operation {
                    TransactionOperation::Begin => Kind::Begin,
                    TransactionOperation::Rollback => Kind::Rollback,
                    _ => Kind::Commit,
                });
            }
            // Under `--init`, a PRAGMA that sets a value (user_version, journal_mode) changes
            // the file as the file asks: a write, not a whole-file operation.
            let init_pragma =
                policy == Policy::Init && matches!(ctx.action, AuthAction::Pragma { .. });
            if writes(&ctx.action) || init_pragma {
                s.wrote = true;
            }
            Authorization::Allow
        }))
        .map_err(|e| format!("cannot install SQLite's authorizer: {e}"))?;
        Ok(Guard { seen })
    }

    /// Takes the authorizer off `conn`.
    pub fn remove(self, conn: &mut Connection) -> Result<(), String> {
        conn.authorizer(None::<fn(AuthContext<'_>) -> Authorization>)
            .map_err(|e| format!("cannot remove SQLite's authorizer: {e}"))
    }

    /// The verdict on the statement prepared since the last one: its kind (`readonly` is
    /// `sqlite3_stmt_readonly` of it, `None` when it did not prepare), or why it is refused.
    pub fn verdict(&self, prepared: Result<bool, rusqlite::Error>) -> Result<Kind, String> {
        let seen = std::mem::take(&mut *self.seen.lock().unwrap_or_else(|p| p.into_inner()));
        if let Some(why) = seen.refused {
            return Err(why);
        }
        let readonly = match prepared {
            Ok(r) => r,
            Err(rusqlite::Error::MultipleStatement) => {
                return Err("more than one statement where SQLite reads it (a `;` inside something the script splits on)".into());
            }
            Err(e) => return Err(format!("SQLite cannot prepare it here: {e}")),
        };
        if let Some(k) = seen.control {
            return Ok(k);
        }
        if readonly {
            return Ok(Kind::Read);
        }
        if !seen.wrote {
            // SQLite says it writes, yet it changes no row and no schema object: a whole-file
            // operation (VACUUM, VACUUM INTO).
            return Err("a statement that writes a file without changing a row or the schema (VACUUM, VACUUM INTO)".into());
        }
        Ok(Kind::Write)
    }
}

/// SQLite's verdict on one statement of a script: its kind, or why it is refused.
pub fn verdict(conn: &mut Connection, sql: &str) -> Result<Kind, String> {
    let guard = Guard::install(conn, Policy::Script)?;
    let prepared = conn.prepare(sql).map(|st| st.readonly());
    let v = guard.verdict(prepared);
    guard.remove(conn)?;
    v
}

/// Runs the SQL of an `--init` file on `conn`, statement by statement, each judged before it
/// runs under [`Policy::Init`]; a refusal names the statement's place in the file.
pub fn run_init(conn: &mut Connection, sql: &str) -> Result<(), String> {
    let guard = Guard::install(conn, Policy::Init)?;
    let ran = run_batch(conn, sql, &guard);
    guard.remove(conn)?;
    ran
}

fn run_batch(conn: &Connection, sql: &str, guard: &Guard) -> Result<(), String> {
    let mut batch = rusqlite::Batch::new(conn, sql);
    for n in 1.. {
        let mut stmt = match batch.next() {
            Ok(None) => break,
            Ok(Some(s)) => s,
            Err(e) => {
                let why = guard
                    .verdict(Err(e))
                    .expect_err("an error prepares nothing");
                return Err(format!("statement {n}: {why}"));
            }
        };
        let text = stmt.expanded_sql().unwrap_or_default();
        let shown: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
        let shown: String = shown.chars().take(80).collect();
        guard
            .verdict(Ok(stmt.readonly()))
            .map_err(|why| format!("statement {n} (`{shown}`): {why}"))?;
        // Stepped to its end: a statement that returns rows (a SELECT in an init file) runs
        // as any other, its rows read and left.
        let mut rows = stmt.raw_query();
        while rows
            .next()
            .map_err(|e| format!("statement {n} (`{shown}`): {e}"))?
            .is_some()
        {}
    }
    Ok(())
}

/// The jail of `path`'s folder, by name: every connection here opens a file of the run's own,
/// and SQLite reaches nothing outside its folder.
fn jail_of(path: &Path) -> Result<bench_core::jail::Jail, String> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    bench_core::jail::folder(dir).map_err(|e| e.to_string())
}

/// Makes a new database at `path` (in a folder of the run's own) from the SQL of an `--init`
/// file ([`run_init`]); refused when it makes no table, since the scripts need one.
pub fn build(path: &Path, sql: &str) -> Result<(), String> {
    let mut c = Connection::open_with_flags_and_vfs(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        jail_of(path)?.name(),
    )
    .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    run_init(&mut c, sql)?;
    let tables: i64 = c
        .query_row(
            "SELECT count(*) FROM sqlite_schema WHERE type = 'table'",
            [],
            |r| r.get(0),
        )
        .map_err(|e| e.to_string())?;
    if tables == 0 {
        return Err(
            "it makes no table; allowed: SQL that creates the tables the scripts use (CREATE TABLE ...)"
                .into(),
        );
    }
    c.close().map_err(|(_, e)| e.to_string())
}

/// Copies the database at `original` (a file of the run's own, alone in a folder of the run's:
/// a byte copy of the user's file with its -wal or -journal, or a base made from it) to `to`,
/// in the same folder: opened read-write through the folder's jail, so that SQLite folds a
/// copied -wal in or rolls a copied hot journal back and reaches nothing outside the folder,
/// written out whole (`VACUUM INTO`), and the copy put in `journal_mode` (a read-only
/// connection cannot change a file's mode later).
pub fn copy(original: &Path, to: &Path, journal_mode: &str) -> Result<(), String> {
    let say =
        |e: rusqlite::Error| format!("copying {} to {}: {e}", original.display(), to.display());
    let jail = jail_of(original)?;
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let from = Connection::open_with_flags_and_vfs(original, flags, jail.name()).map_err(say)?;
    from.execute("VACUUM INTO ?1", [to.display().to_string()])
        .map_err(say)?;
    from.close().map_err(|(_, e)| say(e))?;
    let c = Connection::open_with_flags_and_vfs(to, flags, jail_of(to)?.name()).map_err(say)?;
    c.pragma_update(None, "journal_mode", journal_mode)
        .map_err(say)?;
    c.close().map_err(|(_, e)| say(e))
}

/// A read-only connection to `path`, for judging (no file is created or written).
pub fn open(path: &Path) -> Result<Connection, String> {
    Connection::open_with_flags_and_vfs(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        jail_of(path)?.name(),
    )
    .map_err(|e| format!("cannot open {} to check the scripts: {e}", path.display()))
}

/// Judges every statement of `mix` on the database at `path` (opened read-only) and takes
/// SQLite's verdicts; the first refusal is an error naming its `file:line:col`.
pub fn judge(path: &Path, mix: &mut Mix) -> Result<(), ScriptError> {
    let first = mix
        .scripts
        .first()
        .map_or(String::new(), |s| s.path.clone());
    let mut conn = open(path).map_err(|e| {
        ScriptError::new(
            &first,
            bench_core::script::At { line: 1, col: 1 },
            e,
            ALLOWED,
        )
    })?;
    judge_on(&mut conn, mix)
}

/// [`judge`] on an open connection.
pub fn judge_on(conn: &mut Connection, mix: &mut Mix) -> Result<(), ScriptError> {
    let mut kinds = Vec::new();
    for s in mix.statements() {
        let sql = s.sql(Placeholders::Numbered);
        match verdict(conn, &sql) {
            Ok(k) => kinds.push(k),
            Err(why) => {
                let (script, _) = mix.statement(s.index);
                return Err(ScriptError::new(&script.path, s.at, why, ALLOWED));
            }
        }
    }
    mix.set_verdicts(&kinds)
}
