//! benchscope: what does it really cost to reach SQLite from async Rust, and where does the
//! time go? Headless subcommands over the same runner layer the explorer uses.

mod analysis;
mod baseline;
#[cfg(test)]
mod docs_check;
mod export;
mod files;
mod format;
mod headless;
mod history;
mod import;
mod journal;
mod list;
mod messages;
mod model;
mod out;
mod profile;
mod runner;
mod series;
mod show;
mod site;
mod sources;
mod store;
#[cfg(test)]
mod testing;
mod tui;
mod ui;

/// Counts every allocation of a runner (memory per operation); off until the runner starts
/// measuring.
#[global_allocator]
static ALLOC: bench_core::measure::memory::Counting = bench_core::measure::memory::Counting::SYSTEM;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "benchscope",
    version,
    about = "Measure what it costs to reach SQLite from async Rust, and where the time goes",
    long_about = "Without a subcommand, opens the interactive explorer (on a terminal).",
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    tui: tui::TuiArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List targets, their benches and micro-benches, and their knobs with defaults.
    List(list::ListArgs),
    /// Run a target headless and print a comparison table.
    Run(Box<headless::RunArgs>),
    /// Render a saved JSON report again (table, markdown or JSON), running nothing.
    Show(show::ShowArgs),
    /// Open the explorer on saved results, read-only beside new runs: a report or snapshot,
    /// a baseline, a session journal or a Criterion folder.
    Open {
        path: std::path::PathBuf,
        #[command(flatten)]
        tui: Box<tui::TuiArgs>,
    },
    /// Judge one saved baseline (or report) against another: a verdict per bench; exit
    /// status 3 when any bench regressed.
    Compare(baseline::CompareArgs),
    /// Per bench and machine, the medians recorded in the results store by commit, with the
    /// steps (change points) found in them; exit status 3 when a newest step is a slowdown
    /// beyond --noise.
    History(history::HistoryArgs),
    /// Write the results store's newest runs and their history as a static HTML site.
    Report(site::ReportArgs),
    /// The results store: what it holds, and importing saved results into it.
    #[command(subcommand)]
    Store(store::command::StoreCommand),
    /// The runner itself (spawned by `run`): writes the event stream on stdout.
    #[command(hide = true)]
    Runner(Box<bench_core::service::args::RunnerArgs>),
}

/// The command line, or clap's error through the one stderr sink (a value it echoes, such as a
/// `--label` it refused, may hold escape sequences) and its exit status. Help and the version
/// are printed as clap prints them.
fn parse_or_exit() -> Cli {
    match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => e.exit(),
        Err(e) => {
            let text = e.render().to_string();
            crate::out::say!("{}", text.trim_end());
            std::process::exit(e.exit_code())
        }
    }
}

fn main() {
    let mut cli = parse_or_exit();
    // The front ends measure in paired rounds unless told `--unpaired` (a runner only when told).
    cli.tui.session.budget.pair_by_default();
    match &mut cli.command {
        Some(Command::Open { tui, .. }) => tui.session.budget.pair_by_default(),
        Some(Command::Run(args)) => args.session.budget.pair_by_default(),
        _ => {}
    }
    // SQLite in this process (the results store, a script's database judged before a run)
    // reaches files only through a jail of its own folder or file (bench_core::jail); the
    // runner sets its own up after SQLite's memory methods.
    if !matches!(cli.command, Some(Command::Runner(_))) {
        use rusqlite::ffi;
        bench_core::service::jail_or_exit(bench_core::sqlite_vfs_api!(ffi));
    }
    let code = match cli.command {
        None if std::io::IsTerminal::is_terminal(&std::io::stdout()) => tui::run(cli.tui, None),
        Some(Command::Open { path, tui }) => tui::run(*tui, Some(&path)),
        None => {
            out::print(&list::welcome());
            0
        }
        Some(Command::List(args)) => match list::render(&args) {
            Ok(text) => {
                out::print(&text);
                0
            }
            Err(e) => {
                crate::out::say!("error: {e}");
                2
            }
        },
        Some(Command::Run(args)) => headless::run(*args),
        Some(Command::Show(args)) => show::run(args),
        Some(Command::Compare(args)) => baseline::run(args),
        Some(Command::History(args)) => history::run(args),
        Some(Command::Report(args)) => site::run(args),
        Some(Command::Store(cmd)) => store::command::run(cmd),
        Some(Command::Runner(args)) => {
            bench_core::service::init_logging();
            bench_core::service::core_main(*args)
        }
    };
    out::exit(code);
}
