//! `benchscope store`: what a results store holds, and the import of saved results into it
//! (baselines, reports, session journals, Criterion folders).

use std::path::PathBuf;

use sha2::{Digest, Sha256};

use super::{Code, Fingerprint, Location, MachineId, NewRun, Store};

#[derive(Debug, Clone, clap::Subcommand)]
pub enum StoreCommand {
    /// Where the store is, its schema version and how many runs, machines and benches it holds.
    Info {
        #[command(flatten)]
        location: Location,
    },
    /// Record saved results in the store: baselines, reports, session journals and Criterion
    /// folders. A run already imported is not recorded twice.
    Import(ImportArgs),
}

#[derive(Debug, Clone, clap::Args)]
pub struct ImportArgs {
    /// Files or folders to import.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// The machine the results were measured on, when not this data folder's.
    #[arg(long, value_name = "NAME", value_parser = super::short_text)]
    pub machine: Option<String>,
    /// The commit they measured (default: none known).
    #[arg(long, value_name = "SHA", value_parser = super::short_text)]
    pub commit: Option<String>,
    /// A label for them.
    #[arg(long, value_name = "TEXT", value_parser = super::short_text)]
    pub label: Option<String>,
    #[command(flatten)]
    pub location: Location,
}

pub fn run(cmd: StoreCommand) -> i32 {
    match cmd {
        StoreCommand::Info { location } => {
            let target = location.target();
            match Store::read(&target).and_then(|mut s| s.info()) {
                Ok(i) => {
                    crate::out::print(&format!(
                        "results store {target}\nschema version {}\n{} runs from {} machine{}, {} bench results\n",
                        i.schema_version,
                        i.runs,
                        i.machines,
                        if i.machines == 1 { "" } else { "s" },
                        i.benches
                    ));
                    0
                }
                Err(e) => {
                    crate::out::say!("error: {e}");
                    1
                }
            }
        }
        StoreCommand::Import(args) => import(args),
    }
}

/// When a file was last written, as RFC 3339: an imported run's time.
fn modified(path: &std::path::Path) -> String {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .map(|t| {
            let t = time::OffsetDateTime::from(t).to_offset(time::UtcOffset::UTC);
            // To the second, as runs are recorded: times compare as text.
            t.replace_nanosecond(0)
                .unwrap_or(t)
                .format(&time::format_description::well_known::Rfc3339)
                .unwrap_or_default()
        })
        .filter(|s| !s.is_empty())
        .unwrap_or_else(crate::format::now_rfc3339)
}

fn import(args: ImportArgs) -> i32 {
    match import_runs(&args) {
        Ok(said) => {
            crate::out::say!("{said}");
            0
        }
        Err((status, e)) => {
            crate::out::say!("error: {e}");
            status
        }
    }
}

/// Records the runs of `args.paths`; what was imported where, or the exit status and why not.
fn import_runs(args: &ImportArgs) -> Result<String, (i32, String)> {
    let machine = match &args.machine {
        Some(name) => MachineId {
            id: format!("named:{name}"),
            name: name.clone(),
        },
        None => match super::origin::machine(&crate::journal::data_dir()) {
            Ok(m) => m,
            Err(e) => return Err((1, e)),
        },
    };
    let code = Code {
        commit: args.commit.clone(),
        dirty: None,
        label: args.label.clone(),
    };
    let mut files = Vec::new();
    for p in &args.paths {
        match crate::sources::open(p) {
            Ok(runs) => files.push((p, runs)),
            Err(e) => return Err((2, e)),
        }
    }
    let target = args.location.target();
    let mut store = match Store::open(&target) {
        Ok(s) => s,
        Err(e) => return Err((1, e.into())),
    };
    let here = Fingerprint::here();
    let (mut seen, mut new) = (0, 0);
    for (path, runs) in &files {
        let at = modified(path);
        let runs: Vec<_> = runs
            .iter()
            .filter(|r| {
                r.benches
                    .iter()
                    .any(|b| b.status() == bench_core::protocol::results::BenchStatus::Finished)
            })
            .collect();
        // What the run itself says of its machine, else this one.
        let prints: Vec<Fingerprint> = runs
            .iter()
            .map(|r| match &r.start {
                Some(s) if !s.env.cpu.is_empty() => Fingerprint {
                    cpu: s.env.cpu.raw().to_string(),
                    cores: s.env.cores,
                    kernel: if args.machine.is_some() {
                        "unknown".into()
                    } else {
                        here.kernel.clone()
                    },
                },
                _ => here.clone(),
            })
            .collect();
        let new_runs: Vec<NewRun> = runs
            .iter()
            .zip(&prints)
            .map(|(r, fp)| {
                // What was measured (its start and every bench's samples), not where it was
                // read from: a run saved in a report and a baseline is one run.
                let measured = serde_json::json!({
                    "start": r.start,
                    "samples": r.benches.iter().map(|b| (&b.name, &b.samples)).collect::<Vec<_>>(),
                });
                let key = format!(
                    "import-{}-{:x}",
                    machine.id,
                    Sha256::digest(measured.to_string().as_bytes())
                );
                NewRun {
                    key,
                    recorded_at: at.clone(),
                    machine: &machine,
                    fingerprint: fp,
                    code: &code,
                    record: r,
                    source: Some(path.display().to_string()),
                }
            })
            .collect();
        seen += new_runs.len();
        match store.record(&new_runs) {
            Ok(n) => new += n,
            Err(e) => return Err((1, e.into())),
        }
    }
    Ok(format!(
        "imported {new} run{} into the results store {target} ({} already there), machine {}",
        if new == 1 { "" } else { "s" },
        seen - new,
        machine.name
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An imported run is recorded at its file's last write, to the second in UTC; a file
    /// whose time cannot be read at the time of the import.
    #[test]
    fn an_imported_file_s_time_is_its_last_write_to_the_second() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("report.json");
        std::fs::write(&p, "{}").unwrap();
        let t = time::macros::datetime!(2026-01-02 03:04:05.678 UTC);
        std::fs::File::options()
            .write(true)
            .open(&p)
            .unwrap()
            .set_modified(t.into())
            .unwrap();
        assert_eq!(modified(&p), "2026-01-02T03:04:05Z");
        let before = crate::format::now_rfc3339();
        let missing = modified(&d.path().join("gone.json"));
        assert!(
            missing >= before && missing.len() == before.len(),
            "{missing} vs {before}"
        );
    }

    /// Saved runs imported into a store: each once, with what the run says of its machine
    /// (its CPU; the kernel unknown when the machine is named), and a run that finished no
    /// bench left out; imported again, nothing new.
    #[test]
    fn saved_runs_are_imported_once_with_their_own_machine() {
        let d = tempfile::tempdir().unwrap();
        let finished =
            crate::testing::finished_record("single_row_lookup", &[("rusqlite", 1400.0)]);
        let mut no_cpu = crate::testing::finished_record("bulk_insert", &[("rusqlite", 9000.0)]);
        no_cpu.start.as_mut().unwrap().env.cpu = Default::default();
        let mut unfinished = crate::testing::finished_record("key_value", &[("rusqlite", 500.0)]);
        unfinished.benches[0].error = Some("stopped".into());
        let saved = crate::baseline::save(
            &d.path().join("baselines"),
            "main",
            &[finished, no_cpu, unfinished],
            "2026-11-28T10:00:00Z",
        )
        .unwrap();
        let store = d.path().join("results.sqlite");
        let args = ImportArgs {
            paths: vec![saved],
            machine: Some("lab-2".into()),
            commit: Some("abc".into()),
            label: None,
            location: Location {
                store: Some(store.display().to_string()),
            },
        };
        let said = import_runs(&args).unwrap();
        assert_eq!(
            said,
            format!(
                "imported 2 runs into the results store {} (0 already there), machine lab-2",
                store.display()
            )
        );
        let again = import_runs(&args).unwrap();
        assert!(
            again.starts_with("imported 0 runs into the results store "),
            "{again}"
        );
        assert!(
            again.ends_with("(2 already there), machine lab-2"),
            "{again}"
        );
        let points = Store::read(&args.location.target())
            .unwrap()
            .points(&Default::default())
            .unwrap()
            .rows;
        let by_target = |t: &str| points.iter().find(|p| p.target == t).unwrap();
        let own = by_target("single_row_lookup");
        assert_eq!(
            (own.cpu.as_str(), own.kernel.as_str()),
            ("Test CPU", "unknown")
        );
        assert_eq!(
            (own.machine_name.as_str(), own.commit.as_deref()),
            ("lab-2", Some("abc"))
        );
        let here = Fingerprint::here();
        assert_eq!(
            by_target("bulk_insert").cpu,
            here.cpu,
            "no CPU of its own: this machine's"
        );
        assert!(
            points.iter().all(|p| p.target != "key_value"),
            "nothing finished"
        );
        // A file that is not there: status 2, named.
        let missing = ImportArgs {
            paths: vec![d.path().join("gone.json")],
            ..args
        };
        let (status, e) = import_runs(&missing).unwrap_err();
        assert_eq!(status, 2);
        assert!(e.contains("gone.json: no such file or folder"), "{e}");
    }
}
