//! `benchscope list`: the catalog as text or JSON.

use std::fmt::Write;

use bench_core::catalog::{BenchKind, Strategy};
use bench_core::workloads::targets;

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ListFormat {
    Text,
    Json,
}

/// The strategies as (name, description) pairs, as `list --format json` has always shown them.
fn strategies() -> Vec<(&'static str, &'static str)> {
    Strategy::ALL
        .iter()
        .map(|s| (s.name(), s.about()))
        .collect()
}

/// What `list` shows: one target or all, and which parts of each.
#[derive(Debug, Clone, clap::Args)]
pub struct ListArgs {
    /// Only this target (see the names `benchscope list` prints).
    pub target: Option<String>,
    /// Each target's benches and micro-benches (without --knobs: not its knobs).
    #[arg(long)]
    pub benches: bool,
    /// Each target's knobs (without --benches: not its benches).
    #[arg(long)]
    pub knobs: bool,
    #[arg(long, value_enum, default_value_t = ListFormat::Text)]
    pub format: ListFormat,
}

impl ListArgs {
    /// Both parts when neither is asked for alone.
    fn parts(&self) -> (bool, bool) {
        if self.benches || self.knobs {
            (self.benches, self.knobs)
        } else {
            (true, true)
        }
    }
}

/// The catalog as `args` ask for it, or an error naming an unknown target and the known ones.
pub fn render(args: &ListArgs) -> Result<String, String> {
    let chosen: Vec<&'static bench_core::catalog::Target> = match &args.target {
        Some(name) => vec![bench_core::workloads::find(name).map_err(|e| e.to_string())?],
        None => targets().to_vec(),
    };
    let (benches, knobs) = args.parts();
    Ok(match args.format {
        ListFormat::Json => {
            let docs: Vec<serde_json::Value> = chosen
                .iter()
                .map(|t| {
                    let mut v = serde_json::to_value(t).expect("catalog serializes");
                    if let Some(o) = v.as_object_mut() {
                        if !benches {
                            o.remove("benches");
                            o.remove("hidden");
                        }
                        if !knobs {
                            o.remove("knobs");
                        }
                    }
                    v
                })
                .collect();
            let doc = if args.target.is_some() {
                docs.into_iter().next().expect("one target")
            } else {
                serde_json::json!({
                    "targets": docs,
                    "strategies": strategies(),
                })
            };
            format!("{}\n", bench_core::text::json::pretty(&doc))
        }
        ListFormat::Text => text(&chosen, benches, knobs, args.target.is_none()),
    })
}

/// Descriptions as plain text: the catalog marks names with backticks for markdown.
use crate::format::plain;

/// Rows of cells, each column as wide as its widest cell, two spaces apart.
fn columns(out: &mut String, indent: &str, rows: &[Vec<String>]) {
    let n = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..n)
        .map(|i| {
            rows.iter()
                .filter_map(|r| r.get(i))
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for r in rows {
        let line: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(i, c)| bench_core::format::pad(c, widths[i], true))
            .collect();
        let _ = writeln!(out, "{indent}{}", line.join("  ").trim_end());
    }
}

fn text(
    chosen: &[&bench_core::catalog::Target],
    show_benches: bool,
    show_knobs: bool,
    strategies_too: bool,
) -> String {
    let mut out = String::new();
    for t in chosen {
        let _ = writeln!(out, "{}  {}", t.name, plain(t.about));
        if show_knobs {
            knob_rows(&mut out, t);
        }
        if show_benches {
            bench_rows(&mut out, t);
        }
    }
    if strategies_too {
        let _ = writeln!(out, "dispatch strategies of the middleware path:");
        let rows: Vec<Vec<String>> = strategies()
            .into_iter()
            .map(|(n, a)| vec![n.to_string(), a.to_string()])
            .collect();
        columns(&mut out, "    ", &rows);
    }
    out
}

fn knob_rows(out: &mut String, t: &bench_core::catalog::Target) {
    let _ = writeln!(
        out,
        "  knobs (flag --NAME or --knob NAME=VALUE; environment variable):"
    );
    let knobs: Vec<Vec<String>> = t
        .knobs
        .iter()
        .map(|k| {
            vec![
                k.name.to_string(),
                k.default_value().to_string(),
                k.allowed(),
                k.env.unwrap_or("-").to_string(),
                plain(k.help),
            ]
        })
        .collect();
    columns(out, "    ", &knobs);
    // The target's set-ups: its source suite's quick matrix and its own bench's knobs.
    for (set, what, each, join) in [
        (
            &t.quick,
            "--quick runs its source suite's quick matrix",
            " ",
            " x ",
        ),
        (
            &t.suite,
            "--suite sets it up as its source suite's own bench",
            "=",
            " ",
        ),
    ] {
        if !set.is_empty() {
            let m: Vec<String> = set
                .iter()
                .map(|q| format!("{}{each}{}", q.knob, q.values))
                .collect();
            let _ = writeln!(
                out,
                "  {what}: {} (a knob set by flag, --knob or the environment keeps its value)",
                m.join(join)
            );
        }
    }
}

fn bench_rows(out: &mut String, t: &bench_core::catalog::Target) {
    for (kind, title) in [
        (BenchKind::Bench, "benches"),
        (BenchKind::Micro, "micro-benches (one phase each)"),
    ] {
        let rows: Vec<Vec<String>> = t
            .benches
            .iter()
            .filter(|b| b.kind == kind)
            .map(|b| {
                let phase = b
                    .phase
                    .map(|p| format!("[{}]", p.label()))
                    .unwrap_or_default();
                let base = if b.name == t.baseline {
                    " (baseline)"
                } else {
                    ""
                };
                vec![
                    b.name.to_string(),
                    phase,
                    b.backend().to_string(),
                    format!("{}{base}", plain(b.about)),
                ]
            })
            .collect();
        if rows.is_empty() {
            continue;
        }
        let _ = writeln!(out, "  {title}:");
        columns(out, "    ", &rows);
    }
    if !t.hidden.is_empty() {
        let _ = writeln!(
            out,
            "  phases not measured apart (no micro-bench, and why):"
        );
        let rows: Vec<Vec<String>> = t
            .hidden
            .iter()
            .map(|h| {
                vec![
                    h.bench.to_string(),
                    format!("[{}]", h.phase),
                    plain(h.reason),
                ]
            })
            .collect();
        columns(out, "    ", &rows);
    }
}

/// What `benchscope` with no subcommand prints when its output is not a terminal (where it
/// would open the explorer).
pub fn welcome() -> String {
    format!(
        "benchscope: what does it cost to reach SQLite from async Rust, and where does the time go?\n\
         On a terminal, `benchscope` opens the interactive explorer. Headless:\n\n  \
         benchscope run single_row_lookup --rows 20000          # every bench, comparison table\n  \
         benchscope run single_row_lookup --trace --format markdown\n  \
         benchscope run single_row_lookup --bench rusqlite --bench middleware/spin --time 1\n  \
         benchscope run multithread_pool_checkout --concurrency 1,2,4,8,16\n  \
         BENCH_ROWS=10000 benchscope run bulk_insert --postgres-url postgres://user:pw@host/db\n  \
         benchscope list TARGET --benches                       # one target's benches\n\n{}",
        text(targets(), true, true, true)
    )
}
