//! `benchscope list`: the catalog as text or JSON.

use std::fmt::Write;

use bench_core::catalog::{BenchKind, PLANNED, STRATEGIES, TARGETS};

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ListFormat {
    Text,
    Json,
}

pub fn render(format: ListFormat) -> String {
    match format {
        ListFormat::Json => {
            let doc = serde_json::json!({ "targets": TARGETS, "planned": PLANNED, "strategies": STRATEGIES });
            format!(
                "{}\n",
                serde_json::to_string_pretty(&doc).expect("catalog serializes")
            )
        }
        ListFormat::Text => text(),
    }
}

fn text() -> String {
    let mut out = String::new();
    for t in TARGETS {
        let _ = writeln!(out, "{}  {}", t.name, t.about);
        let _ = writeln!(
            out,
            "  knobs (flag --NAME or --knob NAME=VALUE; environment variable):"
        );
        for k in t.knobs {
            let _ = writeln!(
                out,
                "    {:<22}{:>8}  {}..={}  {}  {}",
                k.name,
                k.default,
                k.min,
                k.max,
                k.env.unwrap_or("-"),
                k.help
            );
        }
        for (kind, title) in [
            (BenchKind::Bench, "benches"),
            (BenchKind::Micro, "micro-benches (one phase each)"),
        ] {
            let _ = writeln!(out, "  {title}:");
            for b in t.benches.iter().filter(|b| b.kind == kind) {
                let phase = b
                    .phase
                    .map(|p| format!("[{}]", p.label()))
                    .unwrap_or_default();
                let base = if b.name == t.baseline {
                    " (baseline)"
                } else {
                    ""
                };
                let _ = writeln!(
                    out,
                    "    {:<26}{:<18}{:<22}{}{}",
                    b.name, phase, b.backend, b.about, base
                );
            }
        }
    }
    let _ = writeln!(out, "dispatch strategies of the middleware path:");
    for (name, about) in STRATEGIES {
        let _ = writeln!(out, "    {name:<16}{about}");
    }
    let _ = writeln!(out, "planned targets (not implemented yet):");
    for p in PLANNED {
        let _ = writeln!(out, "    {:<28}{}", p.name, p.about);
    }
    out
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
         BENCH_ROWS=10000 benchscope run bulk_insert --postgres-url postgres://user:pw@host/db\n\n{}",
        text()
    )
}
