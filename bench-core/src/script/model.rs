//! What a script reads as: its statements, meta-commands and transactions, and a weighted
//! mix of scripts, with the limits a mix is held to.

use super::error::At;
use super::expr::{self, Value};

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
pub(super) enum Piece {
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
    pub(super) pieces: Vec<Piece>,
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
    pub(super) judged: bool,
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
