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
mod error;
pub mod expr;
#[cfg(feature = "sqlite")]
pub mod judge;
mod model;
pub mod original;
mod parse;
pub mod replay;
pub mod report;

/// The `script` target's own inputs: script files, their variables and the database.
#[derive(Debug, Clone, Default, PartialEq, clap::Args, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
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

pub use client::{Client, Step, Stmt};
pub use error::{At, ScriptError};
pub use expr::Value;
pub use model::*;
use parse::{Parser, slot_of};

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
