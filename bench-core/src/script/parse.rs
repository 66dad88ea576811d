//! Reading a script's text: statements split at `;` (outside quotes, comments and
//! brackets), meta-commands, `:name` parameters bound by slot, and the transaction structure
//! from each statement's first word. Nothing here says what a statement does (SQLite does:
//! `judge.rs`).

use super::error::{At, ScriptError};
use super::expr;
use super::model::*;

pub(super) fn slot_of(vars: &mut Vec<String>, name: &str) -> usize {
    match vars.iter().position(|v| v == name) {
        Some(i) => i,
        None => {
            vars.push(name.to_string());
            vars.len() - 1
        }
    }
}

const META_ALLOWED: &str = "\\set NAME EXPRESSION, \\sleep N [us|ms|s]";

pub(super) struct Parser<'a> {
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

impl<'a> Parser<'a> {
    /// A parser of `text`, the file at `path`, numbering its statements from `*next_index`
    /// and its variables in `vars`; `known` are the names usable before its own `\set`s.
    pub(super) fn new(
        file: &'a str,
        text: &str,
        vars: &'a mut Vec<String>,
        known: Vec<String>,
        next_index: &'a mut usize,
    ) -> Self {
        Parser {
            file,
            chars: text.chars().collect(),
            pos: 0,
            line: 1,
            col: 1,
            vars,
            known,
            next_index,
        }
    }

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

    pub(super) fn script(&mut self) -> Result<Vec<Command>, ScriptError> {
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
                // SQLite's other parameter forms, and a `:` no name follows (`:1`, which SQLite
                // would bind as NULL, unnamed here).
                '?' | '@' | '$' | ':' => {
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
        if text.len() > super::model::MAX_STATEMENT_BYTES {
            return Err(self.error(
                at,
                format!("a statement of {} bytes", text.len()),
                &format!(
                    "a statement of at most {} MiB (it travels in its bench's report, one line of the runner's event stream)",
                    super::model::MAX_STATEMENT_BYTES >> 20
                ),
            ));
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
