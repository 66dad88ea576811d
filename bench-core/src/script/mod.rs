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
pub mod replay;
pub mod report;

use std::fmt;

pub use client::{Client, Step, Stmt};
pub use expr::Value;

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
            let mut p = Parser {
                file: path,
                chars: text.chars().collect(),
                pos: 0,
                line: 1,
                col: 1,
                vars: &mut vars,
                known: given.clone(),
                next_index: &mut index,
            };
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

fn slot_of(vars: &mut Vec<String>, name: &str) -> usize {
    match vars.iter().position(|v| v == name) {
        Some(i) => i,
        None => {
            vars.push(name.to_string());
            vars.len() - 1
        }
    }
}

const META_ALLOWED: &str = "\\set NAME EXPRESSION, \\sleep N [us|ms|s]";

struct Parser<'a> {
    file: &'a str,
    chars: Vec<char>,
    pos: usize,
    line: usize,
    col: usize,
    vars: &'a mut Vec<String>,
    /// Names usable so far: built-ins, `-D`, and this file's earlier `\set`s.
    known: Vec<String>,
    next_index: &'a mut usize,
}

impl Parser<'_> {
    fn at(&self) -> At {
        At {
            line: self.line,
            col: self.col,
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek2(&self) -> Option<char> {
        self.chars.get(self.pos + 1).copied()
    }

    /// The letters, digits and `_` from here on (a name), consumed.
    fn word(&mut self) -> String {
        let mut w = String::new();
        while let Some(c) = self
            .peek()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
        {
            w.push(c);
            self.bump();
        }
        w
    }

    /// Skips spaces and tabs (not line ends).
    fn skip_blanks(&mut self) {
        while self.peek().is_some_and(|c| c == ' ' || c == '\t') {
            self.bump();
        }
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += 1;
        if c == '\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }

    fn error(&self, at: At, found: impl Into<String>, allowed: &str) -> ScriptError {
        ScriptError::new(self.file, at, found.into(), allowed)
    }

    /// Skips a comment starting here, if one does; errors on an unclosed `/*`.
    fn comment(&mut self) -> Result<bool, ScriptError> {
        match (self.peek(), self.peek2()) {
            (Some('-'), Some('-')) => {
                while self.peek().is_some_and(|c| c != '\n') {
                    self.bump();
                }
                Ok(true)
            }
            (Some('/'), Some('*')) => {
                let at = self.at();
                self.bump();
                self.bump();
                loop {
                    match (self.peek(), self.peek2()) {
                        (Some('*'), Some('/')) => {
                            self.bump();
                            self.bump();
                            return Ok(true);
                        }
                        (None, _) => {
                            return Err(self.error(
                                at,
                                "a /* comment never closed",
                                "*/ to close it",
                            ));
                        }
                        _ => {
                            self.bump();
                        }
                    }
                }
            }
            _ => Ok(false),
        }
    }

    fn script(&mut self) -> Result<Vec<Command>, ScriptError> {
        let mut out = Vec::new();
        let mut open_tx: Option<At> = None;
        loop {
            while self.peek().is_some_and(char::is_whitespace) || self.peek() == Some(';') {
                self.bump();
            }
            if self.comment()? {
                continue;
            }
            let Some(c) = self.peek() else { break };
            if c == '\\' {
                out.push(self.meta()?);
                continue;
            }
            let Some(s) = self.statement()? else { continue };
            match s.kind {
                Kind::Begin => {
                    if let Some(open) = open_tx {
                        return Err(self.error(
                            s.at,
                            format!("BEGIN inside the transaction begun at line {}", open.line),
                            "one transaction at a time: COMMIT, END or ROLLBACK first",
                        ));
                    }
                    open_tx = Some(s.at);
                }
                Kind::Commit | Kind::Rollback if open_tx.take().is_none() => {
                    return Err(self.error(
                        s.at,
                        format!("{} with no transaction open", first_word(&s.text)),
                        "COMMIT, END or ROLLBACK after a BEGIN",
                    ));
                }
                _ => {}
            }
            out.push(Command::Sql(s));
        }
        if let Some(open) = open_tx {
            return Err(self.error(
                open,
                "a transaction the script never ends",
                "COMMIT, END or ROLLBACK before the end of the script",
            ));
        }
        Ok(out)
    }

    /// The rest of the line after a backslash command's name, with its starting column.
    fn rest_of_line(&mut self) -> (String, usize) {
        self.skip_blanks();
        let col = self.col;
        let mut s = String::new();
        while let Some(c) = self.peek().filter(|c| *c != '\n') {
            s.push(c);
            self.bump();
        }
        // A trailing `-- comment` is not part of the command.
        if let Some(i) = s.find("--") {
            s.truncate(i);
        }
        (s.trim_end().to_string(), col)
    }

    fn meta(&mut self) -> Result<Command, ScriptError> {
        let at = self.at();
        self.bump();
        let name = self.word();
        match name.as_str() {
            "set" => {
                self.skip_blanks();
                let name_at = self.at();
                let var = self.word();
                if var.is_empty() || var.starts_with(|c: char| c.is_ascii_digit()) {
                    return Err(self.error(
                        name_at,
                        "\\set without a variable name",
                        "\\set NAME EXPRESSION (NAME: letters, digits, _)",
                    ));
                }
                if BUILTINS.contains(&var.as_str()) {
                    return Err(self.error(
                        name_at,
                        format!("\\set {var}, which every client sets itself"),
                        "any other name",
                    ));
                }
                let (text, col) = self.rest_of_line();
                let known = self.known.clone();
                let vars = &mut *self.vars;
                let mut resolve = |n: &str| -> Result<usize, String> {
                    if known.iter().any(|k| k == n) {
                        Ok(slot_of(vars, n))
                    } else {
                        Err(undefined_allowed(&known))
                    }
                };
                let expr = expr::ExprParser::new(&text, self.file, name_at.line, col, &mut resolve)
                    .parse()?;
                let slot = slot_of(self.vars, &var);
                if !self.known.contains(&var) {
                    self.known.push(var);
                }
                Ok(Command::Set { slot, expr })
            }
            "sleep" => {
                let (text, col) = self.rest_of_line();
                let mut words = text.split_whitespace();
                let arg_at = At { line: at.line, col };
                let Some(amount) = words.next() else {
                    return Err(self.error(arg_at, "\\sleep without a duration", META_ALLOWED));
                };
                let amount = if let Some(v) = amount.strip_prefix(':') {
                    if !self.known.iter().any(|k| k == v) {
                        return Err(self.error(
                            arg_at,
                            format!("undefined variable :{v}"),
                            &undefined_allowed(&self.known),
                        ));
                    }
                    SleepAmount::Var(slot_of(self.vars, v))
                } else {
                    match amount.parse::<i64>() {
                        Ok(n) if n >= 0 => SleepAmount::Const(n),
                        _ => {
                            return Err(self.error(
                                arg_at,
                                format!("\\sleep {amount}"),
                                "a whole number of units at least 0, or a :variable",
                            ));
                        }
                    }
                };
                let unit_us = match words.next() {
                    None | Some("s") => 1_000_000,
                    Some("ms") => 1_000,
                    Some("us") => 1,
                    Some(u) => {
                        return Err(self.error(
                            arg_at,
                            format!("\\sleep unit {u:?}"),
                            "us, ms or s (s when none)",
                        ));
                    }
                };
                if let Some(extra) = words.next() {
                    return Err(self.error(
                        arg_at,
                        format!("{extra:?} after the \\sleep unit"),
                        META_ALLOWED,
                    ));
                }
                Ok(Command::Sleep {
                    amount,
                    unit_us,
                    at,
                })
            }
            "" => Err(self.error(at, "a lone backslash", META_ALLOWED)),
            other => Err(self.error(
                at,
                format!("\\{other}, a meta-command outside the subset"),
                META_ALLOWED,
            )),
        }
    }

    /// One SQL statement up to `;` (or the end of the file), its parameters found.
    fn statement(&mut self) -> Result<Option<Statement>, ScriptError> {
        let at = self.at();
        let mut pieces: Vec<Piece> = Vec::new();
        let mut text = String::new();
        let mut names: Vec<String> = Vec::new();
        let mut params: Vec<usize> = Vec::new();
        let push = |pieces: &mut Vec<Piece>, s: &str| match pieces.last_mut() {
            Some(Piece::Text(t)) => t.push_str(s),
            _ => pieces.push(Piece::Text(s.to_string())),
        };
        while let Some(c) = self.peek() {
            if c == ';' {
                self.bump();
                break;
            }
            if self.comment()? {
                push(&mut pieces, " ");
                continue;
            }
            match c {
                '\'' | '"' | '`' | '[' => {
                    let close = if c == '[' { ']' } else { c };
                    let q_at = self.at();
                    let mut lit = String::new();
                    lit.push(c);
                    self.bump();
                    loop {
                        match self.bump() {
                            None => {
                                let what = match c {
                                    '\'' => "a string literal never closed",
                                    _ => "a quoted name never closed",
                                };
                                return Err(self.error(
                                    q_at,
                                    what,
                                    &format!("{close} to close it"),
                                ));
                            }
                            Some(d) if d == close => {
                                lit.push(d);
                                // A doubled quote is one quote inside.
                                if close != ']' && self.peek() == Some(close) {
                                    lit.push(close);
                                    self.bump();
                                    continue;
                                }
                                break;
                            }
                            Some(d) => lit.push(d),
                        }
                    }
                    push(&mut pieces, &lit);
                    text.push_str(&lit);
                }
                ':' if self.peek2() == Some(':') => {
                    self.bump();
                    self.bump();
                    push(&mut pieces, "::");
                    text.push_str("::");
                }
                ':' if self
                    .peek2()
                    .is_some_and(|d| d.is_ascii_alphabetic() || d == '_') =>
                {
                    let p_at = self.at();
                    self.bump();
                    let name = self.word();
                    if !self.known.contains(&name) {
                        return Err(self.error(
                            p_at,
                            format!("undefined variable :{name}"),
                            &undefined_allowed(&self.known),
                        ));
                    }
                    let i = match names.iter().position(|n| *n == name) {
                        Some(i) => i,
                        None => {
                            names.push(name.clone());
                            params.push(slot_of(self.vars, &name));
                            names.len() - 1
                        }
                    };
                    pieces.push(Piece::Param(i));
                    text.push(':');
                    text.push_str(&name);
                }
                '?' | '@' | '$' => {
                    let p_at = self.at();
                    self.bump();
                    let found = format!("{c}{}", self.word());
                    return Err(self.error(
                        p_at,
                        format!("the parameter {found}"),
                        ":name, bound from a \\set or -D variable",
                    ));
                }
                _ => {
                    self.bump();
                    let mut b = [0u8; 4];
                    push(&mut pieces, c.encode_utf8(&mut b));
                    text.push(if c.is_whitespace() { ' ' } else { c });
                }
            }
        }
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if text.is_empty() {
            return Ok(None);
        }
        // Provisional: transaction control by its first word (the script's structure), every
        // other statement a write until SQLite judges it (see `judge`).
        let kind = match first_word(&text).to_ascii_uppercase().as_str() {
            "BEGIN" => Kind::Begin,
            "COMMIT" | "END" => Kind::Commit,
            "ROLLBACK" => Kind::Rollback,
            _ => Kind::Write,
        };
        if matches!(kind, Kind::Begin | Kind::Commit | Kind::Rollback) && !params.is_empty() {
            return Err(self.error(
                at,
                "a parameter in transaction control",
                "BEGIN, COMMIT, END, ROLLBACK as words",
            ));
        }
        let index = *self.next_index;
        *self.next_index += 1;
        Ok(Some(Statement {
            index,
            at,
            kind,
            pieces,
            params,
            text,
        }))
    }
}

fn first_word(text: &str) -> &str {
    text.split(|c: char| !c.is_ascii_alphabetic())
        .next()
        .unwrap_or("")
}

fn undefined_allowed(known: &[String]) -> String {
    format!(
        "variables set earlier in the file by \\set, given with -D NAME=VALUE, or built in ({})",
        known.join(", ")
    )
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
