//! Script files: a workload written as pgbench writes one. SQL statements separated by `;`,
//! `BEGIN`/`COMMIT`, and two meta-commands: `\set name expr` and `\sleep n [us|ms|s]`. A
//! `:name` in SQL is a bound parameter, never text spliced into the statement. Several
//! scripts with weights make a [`Mix`]; one run of a script is one transaction.
//!
//! Reading a file only splits it: statements at `;`, meta-commands, bound parameters, and the
//! transaction structure (BEGIN ... COMMIT) from each statement's first word. What a
//! statement *does* is SQLite's to say: before anything runs, every runner prepares each
//! statement on a read-only connection with an authorizer (`judge.rs`, compiled against each
//! runner's own rusqlite) and takes its verdict: refused (ATTACH, PRAGMA writes, VACUUM,
//! load_extension, ...), read, or write. Until then every statement counts as a write, and a
//! mix nobody judged cannot be replayed ([`Mix::judged`]). Every problem is reported with
//! `file:line:col`, what was found and what is allowed ([`ScriptError`]).

pub mod client;
#[cfg(feature = "sqlite")]
pub mod db;
pub mod digest;
pub mod expr;
#[cfg(feature = "sqlite")]
pub mod judge;
pub mod original;
mod parse;
pub mod replay;
pub mod report;

/// The `script` target's own inputs: script files, their variables and the database.
#[derive(Debug, Clone, Default, PartialEq, clap::Args)]
pub struct ScriptArgs {
    /// script target: a script file (pgbench's -f), with its weight in a mix:
    /// FILE[@WEIGHT]; repeat for a mix (see docs/src/scripts.md).
    #[arg(long = "script", value_name = "FILE[@WEIGHT]")]
    pub scripts: Vec<String>,
    /// script target: a variable's value before the first transaction, NAME=VALUE
    /// (pgbench's -D); repeat for more.
    #[arg(short = 'D', long = "define", value_name = "NAME=VALUE")]
    pub defines: Vec<String>,
    /// script target: the SQLite database the scripts run on. It is copied into the cache
    /// and never written.
    #[arg(long, value_name = "PATH")]
    pub db: Option<std::path::PathBuf>,
    /// script target: SQL that builds the database at --db when there is none there.
    #[arg(long, value_name = "FILE")]
    pub init: Option<std::path::PathBuf>,
}

use std::fmt;

pub use client::{Client, Step, Stmt};
pub use expr::Value;
use parse::{Parser, slot_of};

/// A place in a script file, 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct At {
    pub line: usize,
    pub col: usize,
}

/// A construct outside the subset, or a file that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptError {
    pub file: String,
    pub at: At,
    pub found: String,
    pub allowed: String,
}

impl ScriptError {
    pub fn new(file: &str, at: At, found: String, allowed: &str) -> Self {
        ScriptError {
            file: file.to_string(),
            at,
            found,
            allowed: allowed.to_string(),
        }
    }
}

impl fmt::Display for ScriptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}; allowed: {}",
            self.file, self.at.line, self.at.col, self.found, self.allowed
        )
    }
}

impl std::error::Error for ScriptError {}

/// What a statement does, as far as a run cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Begin,
    Commit,
    Rollback,
    /// Returns rows and changes nothing.
    Read,
    /// Changes the database (rows it returns, with RETURNING, are read too).
    Write,
}

impl Kind {
    /// How a message names the kind.
    pub fn describe(self) -> &'static str {
        match self {
            Kind::Begin => "BEGIN",
            Kind::Commit => "COMMIT",
            Kind::Rollback => "ROLLBACK",
            Kind::Read => "a read",
            Kind::Write => "a write",
        }
    }
}

/// One piece of a statement's text: SQL as written, or the place of a bound parameter.
#[derive(Debug, Clone, PartialEq)]
enum Piece {
    Text(String),
    /// The n-th distinct parameter of the statement (0-based).
    Param(usize),
}

/// How a backend numbers its bound parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placeholders {
    /// `?1`, `?2`: SQLite (rusqlite, sqlx's sqlite, turso).
    Numbered,
    /// `$1`, `$2`: PostgreSQL.
    Dollar,
}

/// One SQL statement of a script.
#[derive(Debug, Clone, PartialEq)]
pub struct Statement {
    /// Its number across the whole mix, in file order: the per-statement table's row.
    pub index: usize,
    pub at: At,
    pub kind: Kind,
    pieces: Vec<Piece>,
    /// The variable slot of each bound parameter, in placeholder order.
    pub params: Vec<usize>,
    /// The text as written, on one line (whitespace runs folded), for tables.
    pub text: String,
}

impl Statement {
    /// The statement with its parameters as `style` writes them.
    pub fn sql(&self, style: Placeholders) -> String {
        let mut s = String::new();
        for p in &self.pieces {
            match p {
                Piece::Text(t) => s.push_str(t),
                Piece::Param(i) => match style {
                    Placeholders::Numbered => s.push_str(&format!("?{}", i + 1)),
                    Placeholders::Dollar => s.push_str(&format!("${}", i + 1)),
                },
            }
        }
        s
    }
}

/// How long a `\sleep` waits: a constant or a variable, in `unit_us` microseconds.
#[derive(Debug, Clone, PartialEq)]
pub enum SleepAmount {
    Const(i64),
    Var(usize),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    Set {
        slot: usize,
        expr: expr::Expr,
    },
    Sleep {
        amount: SleepAmount,
        unit_us: u64,
        at: At,
    },
    Sql(Statement),
}

/// One script file.
#[derive(Debug, Clone, PartialEq)]
pub struct Script {
    /// The file's stem: how tables and bench lines name it.
    pub name: String,
    pub path: String,
    pub weight: u32,
    pub commands: Vec<Command>,
}

impl Script {
    /// `file:line:col` of a place in this script, as errors name it.
    pub fn place(&self, at: At) -> String {
        format!("{}:{}:{}", self.path, at.line, at.col)
    }

    pub fn statements(&self) -> impl Iterator<Item = &Statement> {
        self.commands.iter().filter_map(|c| match c {
            Command::Sql(s) => Some(s),
            _ => None,
        })
    }
}

/// The scripts of one run, with the variables they share (pgbench's: per client, kept from
/// one transaction to the next).
#[derive(Debug, Clone, PartialEq)]
pub struct Mix {
    pub scripts: Vec<Script>,
    /// Variable names by slot; slot 0 is `client_id`.
    pub vars: Vec<String>,
    /// Each slot's value before the first transaction (`-D`; `client_id` is set per client).
    pub defaults: Vec<Option<Value>>,
    /// Whether SQLite has judged every statement ([`Mix::set_verdicts`]).
    judged: bool,
}

/// The most statements a mix may have: each is a row of every bench's report and a
/// micro-bench of the catalog.
pub const MAX_STATEMENTS: usize = 20_000;

/// The longest statement a script may hold, in bytes of its text: every statement travels in
/// its bench's report, one line of the runner's event stream (at most 16 MiB, where a text's
/// characters may take up to six bytes each once escaped for JSON).
pub const MAX_STATEMENT_BYTES: usize = 1 << 20;

/// The most statement text all the scripts of a mix may hold together, for the same reason.
pub const MAX_MIX_BYTES: usize = 2 << 20;

/// The variables every client has without a `\set`.
pub const BUILTINS: &[&str] = &["client_id"];

impl Mix {
    /// Reads `sources` (path, text, weight) with `defines` (`-D name=value`) as starting
    /// values. Every problem is reported with its file, line and column.
    pub fn parse(
        sources: &[(String, String, u32)],
        defines: &[(String, Value)],
    ) -> Result<Mix, ScriptError> {
        let mut vars: Vec<String> = BUILTINS.iter().map(|s| s.to_string()).collect();
        let mut defaults: Vec<Option<Value>> = vec![None; vars.len()];
        for (name, v) in defines {
            let slot = slot_of(&mut vars, name);
            defaults.resize(vars.len(), None);
            defaults[slot] = Some(*v);
        }
        // What every file may use without a `\set` of its own.
        let given: Vec<String> = vars.clone();
        let mut scripts = Vec::new();
        let mut index = 0;
        for (path, text, weight) in sources {
            // A byte order mark is how some editors begin a UTF-8 file, not part of the SQL.
            let text = text.strip_prefix('\u{feff}').unwrap_or(text);
            let mut p = Parser::new(path, text, &mut vars, given.clone(), &mut index);
            let commands = p.script()?;
            defaults.resize(vars.len(), None);
            if !commands.iter().any(|c| matches!(c, Command::Sql(_))) {
                return Err(ScriptError::new(
                    path,
                    At { line: 1, col: 1 },
                    "no SQL statement".into(),
                    "a script with at least one statement",
                ));
            }
            let name = std::path::Path::new(path)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| path.clone());
            scripts.push(Script {
                name,
                path: path.clone(),
                weight: *weight,
                commands,
            });
        }
        let mut total = 0usize;
        for script in &scripts {
            for s in script.statements() {
                total += s.text.len();
                if total > MAX_MIX_BYTES {
                    return Err(ScriptError::new(
                        &script.path,
                        s.at,
                        format!(
                            "statements of more than {} MiB in all, up to this one",
                            MAX_MIX_BYTES >> 20
                        ),
                        &format!(
                            "at most {} MiB of statements across the scripts (each statement travels in its bench's report, one line of the runner's event stream)",
                            MAX_MIX_BYTES >> 20
                        ),
                    ));
                }
            }
        }
        if index > MAX_STATEMENTS {
            return Err(ScriptError::new(
                &sources.last().map_or(String::new(), |s| s.0.clone()),
                At { line: 1, col: 1 },
                format!("{index} statements in the mix"),
                &format!("at most {MAX_STATEMENTS} statements across the scripts"),
            ));
        }
        Ok(Mix {
            scripts,
            vars,
            defaults,
            judged: false,
        })
    }

    /// Whether SQLite has judged every statement: only a judged mix is replayed.
    pub fn judged(&self) -> bool {
        self.judged
    }

    /// Takes SQLite's verdict on each statement, in index order (see `judge.rs`): a read, a
    /// write, or transaction control, which must be what the script's structure took it for
    /// (a BEGIN SQLite reads as something else, or the reverse, is refused).
    pub fn set_verdicts(&mut self, kinds: &[Kind]) -> Result<(), ScriptError> {
        let n = self.statements().count();
        if kinds.len() != n {
            return Err(ScriptError::new(
                self.scripts.first().map_or("", |s| s.path.as_str()),
                At { line: 1, col: 1 },
                format!("{} verdicts for {n} statements", kinds.len()),
                "one verdict per statement",
            ));
        }
        let control = |k: Kind| matches!(k, Kind::Begin | Kind::Commit | Kind::Rollback);
        for script in &mut self.scripts {
            for c in &mut script.commands {
                let Command::Sql(s) = c else { continue };
                let judged = kinds[s.index];
                if (control(s.kind) || control(judged)) && judged != s.kind {
                    return Err(ScriptError::new(
                        &script.path,
                        s.at,
                        format!(
                            "`{}`, which SQLite runs as {} but the script's structure reads as {}",
                            s.text,
                            judged.describe(),
                            s.kind.describe()
                        ),
                        "BEGIN, COMMIT, END and ROLLBACK written as such, each a statement of its own",
                    ));
                }
                s.kind = judged;
            }
        }
        self.judged = true;
        Ok(())
    }

    /// Every statement of every script, in index order.
    pub fn statements(&self) -> impl Iterator<Item = &Statement> {
        self.scripts.iter().flat_map(|s| s.statements())
    }

    /// Statement `index` of the mix, with the script it is in.
    pub fn statement(&self, index: usize) -> (&Script, &Statement) {
        self.scripts
            .iter()
            .flat_map(|sc| sc.statements().map(move |s| (sc, s)))
            .find(|(_, s)| s.index == index)
            .expect("a statement of the mix")
    }

    /// True when SQLite judged that no statement changes the database: the copy can serve
    /// every run (opened read-only). An unjudged mix counts as writing.
    pub fn read_only(&self) -> bool {
        self.judged && self.statements().all(|s| s.kind != Kind::Write)
    }

    /// The weights' sum (scripts are picked with probability weight / total).
    pub fn total_weight(&self) -> u64 {
        self.scripts.iter().map(|s| u64::from(s.weight)).sum()
    }
}

/// Reads `FILE[@WEIGHT]` (pgbench's `-f`): the weight is 1 when not given.
pub fn parse_script_arg(arg: &str) -> Result<(String, u32), String> {
    match arg.rsplit_once('@') {
        Some((path, w)) if !path.is_empty() => match w.trim().parse::<u32>() {
            Ok(w) if (1..=1_000_000).contains(&w) => Ok((path.to_string(), w)),
            _ => Err(format!(
                "invalid weight {w:?} in --script {arg:?} (allowed: a whole number 1..=1000000)"
            )),
        },
        _ => Ok((arg.to_string(), 1)),
    }
}

/// Reads `NAME=VALUE` (pgbench's `-D`).
pub fn parse_define(arg: &str) -> Result<(String, Value), String> {
    let Some((name, v)) = arg.split_once('=') else {
        return Err(format!("invalid -D {arg:?}: expected NAME=VALUE"));
    };
    let name = name.trim();
    if name.is_empty()
        || name.starts_with(|c: char| c.is_ascii_digit())
        || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return Err(format!(
            "invalid -D {arg:?}: {name:?} is not a variable name (allowed: letters, digits, _)"
        ));
    }
    if BUILTINS.contains(&name) {
        return Err(format!("invalid -D {arg:?}: {name} is set by each client"));
    }
    let v = expr::parse_value(v).ok_or_else(|| {
        format!("invalid -D {arg:?}: {v:?} is not a number (allowed: an integer or a decimal)")
    })?;
    Ok((name.to_string(), v))
}

/// Whether a write statement returns rows (`RETURNING`): what a backend reads them with.
pub fn returns_rows(sql: &str) -> bool {
    sql.split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .any(|w| w.eq_ignore_ascii_case("returning"))
}

#[cfg(test)]
mod tests;

#[cfg(all(test, feature = "sqlite"))]
mod guard_props;
