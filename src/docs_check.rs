//! The docs checked against the code: the CLI reference and the catalog reference are made
//! from the CLI's own parser and the catalog (`list --format json`), every command line shown
//! in the README and the book is parsed by that parser (the `list` ones run), and every link
//! between the files resolves. `BENCHSCOPE_BLESS_DOCS=1 cargo test docs_check` writes the two
//! references again after a change to the CLI or the catalog.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use clap::CommandFactory;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The markdown files a reader is sent to: the README and every chapter of the book.
fn markdown_files() -> Vec<PathBuf> {
    let mut files = vec![root().join("README.md")];
    let mut stack = vec![root().join("docs/src")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// Every visible command's long help, one section each, with the values a variable of this
/// shell would show left out (`[env: BENCH_ROWS=]`, whatever BENCH_ROWS holds here).
fn cli_reference() -> String {
    fn walk(cmd: &mut clap::Command, path: &str, out: &mut String) {
        let help = cmd.render_long_help().to_string();
        let mut help = strip_env_values(&help);
        while help.ends_with('\n') {
            help.pop();
        }
        let _ = write!(out, "\n## `{path}`\n\n```text\n{help}\n```\n");
        let subs: Vec<String> = cmd
            .get_subcommands()
            .filter(|s| !s.is_hide_set() && s.get_name() != "help")
            .map(|s| s.get_name().to_string())
            .collect();
        for name in subs {
            let sub = cmd.find_subcommand_mut(&name).unwrap();
            walk(sub, &format!("{path} {name}"), out);
        }
    }
    let mut cmd = crate::Cli::command();
    cmd.build();
    let mut out = String::from(
        "# Command-line reference\n\nEvery command's `--help`, made from the CLI's own parser by \
         `cargo test docs_check` (which fails when this page and the parser differ; \
         `BENCHSCOPE_BLESS_DOCS=1` writes it again). Values of environment variables are left \
         out: `[env: BENCH_ROWS=]` means the flag's default can be given as `BENCH_ROWS`.\n",
    );
    walk(&mut cmd, "benchscope", &mut out);
    out
}

fn strip_env_values(help: &str) -> String {
    let mut out = String::with_capacity(help.len());
    let mut rest = help;
    while let Some(at) = rest.find("[env: ") {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        let end = tail.find(']').map(|e| e + 1).unwrap_or(tail.len());
        let inner = &tail[..end];
        match inner.find('=') {
            Some(eq) => {
                out.push_str(&inner[..=eq]);
                out.push(']');
            }
            None => out.push_str(inner),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// The catalog as `list --format json` gives it, as tables: each target's knobs and benches.
fn catalog_reference() -> String {
    let args = crate::list::ListArgs {
        target: None,
        benches: false,
        knobs: false,
        format: crate::list::ListFormat::Json,
    };
    let doc: serde_json::Value =
        serde_json::from_str(&crate::list::render(&args).unwrap()).unwrap();
    let cell = |v: &serde_json::Value| -> String {
        let text = match v {
            serde_json::Value::Null => String::new(),
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Array(a) => a
                .iter()
                .map(|x| {
                    x.as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| x.to_string())
                })
                .collect::<Vec<_>>()
                .join(", "),
            other => other.to_string(),
        };
        text.replace('|', "\\|").replace('\n', " ")
    };
    let mut out = String::from(
        "# Catalog reference\n\nEvery target, its knobs and its benches, as `benchscope list \
         --format json` gives them; made by `cargo test docs_check`, which fails when this page \
         and the catalog differ (`BENCHSCOPE_BLESS_DOCS=1` writes it again). What the targets \
         measure and why is in [the catalog](../catalog.md).\n",
    );
    out.push_str("\n## Dispatch strategies\n\n| strategy | what it does |\n|---|---|\n");
    for s in doc["strategies"].as_array().unwrap() {
        let _ = writeln!(out, "| `{}` | {} |", cell(&s[0]), cell(&s[1]));
    }
    for t in doc["targets"].as_array().unwrap() {
        let _ = write!(out, "\n## {}\n\n{}\n", cell(&t["name"]), cell(&t["about"]));
        if let Some(knobs) = t["knobs"].as_array().filter(|k| !k.is_empty()) {
            out.push_str(
                "\n| knob | default | allowed | variable | what it sets |\n|---|---|---|---|---|\n",
            );
            for k in knobs {
                let allowed = match (&k["min"], &k["max"], &k["choices"]) {
                    (serde_json::Value::Null, serde_json::Value::Null, choices) => cell(choices),
                    (min, max, _) => format!("{}..={}", cell(min), cell(max)),
                };
                let _ = writeln!(
                    out,
                    "| `{}` | {} | {} | `{}` | {} |",
                    cell(&k["name"]),
                    cell(&k["default"]),
                    allowed,
                    cell(&k["env"]),
                    cell(&k["help"])
                );
            }
        }
        if let Some(benches) = t["benches"].as_array().filter(|b| !b.is_empty()) {
            out.push_str("\n| bench | kind | backend | one operation |\n|---|---|---|---|\n");
            for b in benches {
                let _ = writeln!(
                    out,
                    "| `{}` | {} | {} | {} |",
                    cell(&b["name"]),
                    cell(&b["kind"]),
                    cell(&b["backend"]),
                    cell(&b["op"])
                );
            }
        }
    }
    out
}

/// `made` against the file at `rel`: equal, or written when blessing, or a failure that says
/// how to write it.
fn check_generated(rel: &str, made: &str) {
    let path = root().join(rel);
    if std::env::var_os("BENCHSCOPE_BLESS_DOCS").is_some() {
        std::fs::write(&path, made).unwrap();
        return;
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    if on_disk != made {
        let line = on_disk
            .lines()
            .zip(made.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| on_disk.lines().count().min(made.lines().count()));
        panic!(
            "{rel} differs from what the code gives, first at line {} (expected {:?}); \
             run `BENCHSCOPE_BLESS_DOCS=1 cargo test docs_check` and commit it",
            line + 1,
            made.lines().nth(line)
        );
    }
}

/// The command lines of a markdown text: in code blocks (not ```text ones), lines (joined over `\`) that start
/// with `cargo run --release` or `benchscope`, after any `VAR=value` assignments; with the
/// line's file and number.
fn command_lines(text: &str) -> Vec<(usize, Vec<String>)> {
    let mut found = Vec::new();
    // In a code block, and not one of output (```text: a screen or a table).
    let mut in_code = false;
    let mut output = false;
    let mut pending: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        if let Some(lang) = line.trim_start().strip_prefix("```") {
            in_code = !in_code;
            output = in_code && lang.trim() == "text";
            continue;
        }
        if !in_code || output {
            continue;
        }
        let (start, mut joined) = match pending.take() {
            Some((start, before)) => (start, before + " " + line.trim()),
            None => (i + 1, line.trim().to_string()),
        };
        if let Some(stripped) = joined.strip_suffix('\\') {
            joined = stripped.to_string();
            pending = Some((start, joined));
            continue;
        }
        // A comment after the command (`   # what it does`), not a `#` inside a word.
        if let Some(at) = joined.find(" #") {
            joined.truncate(at);
        }
        let Some(words) = shlex::split(&joined) else {
            continue;
        };
        let mut words = words.into_iter().skip_while(|w| {
            w.split_once('=').is_some_and(|(k, _)| {
                !k.is_empty() && k.chars().all(|c| c.is_ascii_uppercase() || c == '_')
            })
        });
        let Some(first) = words.next() else { continue };
        let args: Vec<String> = match first.as_str() {
            "benchscope" | "./target/release/benchscope" => words.collect(),
            "cargo" => {
                let rest: Vec<String> = words.collect();
                if rest.first().map(String::as_str) != Some("run") {
                    continue;
                }
                match rest.iter().position(|w| w == "--") {
                    Some(dash) => rest[dash + 1..].to_vec(),
                    None if rest.iter().all(|w| w == "run" || w == "--release") => Vec::new(),
                    None => continue,
                }
            }
            _ => continue,
        };
        found.push((start, args));
    }
    found
}

#[test]
fn the_cli_reference_is_what_the_parser_gives() {
    check_generated("docs/src/reference/cli.md", &cli_reference());
}

#[test]
fn the_catalog_reference_is_what_list_gives() {
    check_generated("docs/src/reference/catalog.md", &catalog_reference());
}

#[test]
fn every_command_line_shown_parses_and_the_list_ones_run() {
    use clap::Parser;
    let mut checked = 0;
    let mut failures = Vec::new();
    for file in markdown_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        let rel = file.strip_prefix(root()).unwrap().display().to_string();
        for (line, args) in command_lines(&text) {
            checked += 1;
            let argv = std::iter::once("benchscope".to_string()).chain(args.iter().cloned());
            match crate::Cli::try_parse_from(argv) {
                Ok(cli) => {
                    if let Some(crate::Command::List(list)) = &cli.command
                        && let Err(e) = crate::list::render(list)
                    {
                        failures.push(format!("{rel}:{line}: `{}`: {e}", args.join(" ")));
                    }
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        clap::error::ErrorKind::DisplayHelp
                            | clap::error::ErrorKind::DisplayVersion
                    ) => {}
                Err(e) => failures.push(format!(
                    "{rel}:{line}: `{}`: {}",
                    args.join(" "),
                    e.render().to_string().lines().next().unwrap_or_default()
                )),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The README alone shows a few dozen; a parser that finds none checks nothing.
    assert!(checked > 40, "only {checked} command lines found");
}

#[test]
fn a_command_line_the_parser_refuses_is_caught() {
    let lines = command_lines(
        "```sh\ncargo run --release -- run single_row_lookup --rowz 3   # a typo\n\
         BENCH_ROWS=200 benchscope list key_value \\\n  --benches\n```\n",
    );
    assert_eq!(
        lines,
        vec![
            (
                2,
                vec![
                    "run".into(),
                    "single_row_lookup".into(),
                    "--rowz".into(),
                    "3".into()
                ]
            ),
            (
                3,
                vec!["list".into(), "key_value".into(), "--benches".into()]
            ),
        ]
    );
    use clap::Parser;
    let argv = ["benchscope", "run", "single_row_lookup", "--rowz", "3"];
    assert!(crate::Cli::try_parse_from(argv).is_err());
}

#[test]
fn every_link_between_the_files_resolves() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for file in markdown_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        let dir = file.parent().unwrap();
        let mut in_code = false;
        for (i, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("```") {
                in_code = !in_code;
            }
            if in_code {
                continue;
            }
            let mut rest = line;
            while let Some(at) = rest.find("](") {
                let tail = &rest[at + 2..];
                let Some(end) = tail.find(')') else { break };
                let target = &tail[..end];
                rest = &tail[end..];
                if target.contains("://")
                    || target.starts_with('#')
                    || target.starts_with("mailto:")
                {
                    continue;
                }
                checked += 1;
                let path = target.split('#').next().unwrap();
                if !Path::new(dir).join(path).exists() {
                    failures.push(format!("{}:{}: {target}", file.display(), i + 1));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "links to nothing:\n{}",
        failures.join("\n")
    );
    assert!(checked > 20, "only {checked} links found");
}

#[test]
fn every_chapter_is_in_the_summary() {
    let summary = std::fs::read_to_string(root().join("docs/src/SUMMARY.md")).unwrap();
    for file in markdown_files() {
        let Ok(rel) = file.strip_prefix(root().join("docs/src")) else {
            continue;
        };
        let rel = rel.display().to_string();
        if rel != "SUMMARY.md" {
            assert!(
                summary.contains(&format!("({rel})")),
                "{rel} is not in docs/src/SUMMARY.md"
            );
        }
    }
}
