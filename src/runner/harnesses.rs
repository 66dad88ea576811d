//! Finding the harness crates (harness-sqlx, harness-async-sqlite, harness-sql-middleware-turso),
//! and building one on first
//! use. Each lives in its own crate (its SQLite binding conflicts with the core's rusqlite), so
//! `cargo run` of benchscope does not build them. The same for bench-core's own runner with
//! turso ([`TURSO_RUNNER`]), where benchscope is built without it.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

use bench_core::catalog::Harness;

use super::process::{GroupKill, Program};
use crate::messages::HarnessBuild;

/// A harness crate beside benchscope's: its folder (and binary) name, and the variable that
/// points at a prebuilt binary instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct External {
    pub harness: Harness,
    /// The crate's folder beside this crate's manifest, and its binary's name.
    pub crate_name: &'static str,
    pub env: &'static str,
    /// A binary of a package of benchscope's own workspace instead of a crate of its own:
    /// built with the package's default features into the workspace's target folder, sharing
    /// what benchscope's build compiled.
    pub workspace_bin: Option<&'static str>,
}

impl External {
    /// The binary's name, as cargo's lines and the notes name it.
    pub fn bin_name(&self) -> &'static str {
        self.workspace_bin.unwrap_or(self.crate_name)
    }
}

/// bench-core's runner with turso (its default features), for the runs with turso benches of
/// a benchscope built without turso (see [`bench_core::TURSO`]). It runs every core bench, so a
/// run's core benches stay in one process (paired with each other) when it takes them.
pub const TURSO_RUNNER: External = External {
    harness: Harness::Core,
    crate_name: "bench-core",
    env: "BENCHSCOPE_TURSO_RUNNER",
    workspace_bin: Some("bench-runner"),
};

/// The harness crates, in the order their benches run.
pub const EXTERNAL: [External; 3] = [
    External {
        harness: Harness::Sqlx,
        crate_name: "harness-sqlx",
        env: "BENCHSCOPE_SQLX_HARNESS",
        workspace_bin: None,
    },
    External {
        harness: Harness::AsyncSqlite,
        crate_name: "harness-async-sqlite",
        env: "BENCHSCOPE_ASYNC_SQLITE_HARNESS",
        workspace_bin: None,
    },
    External {
        harness: Harness::SqlMiddlewareTurso,
        crate_name: "harness-sql-middleware-turso",
        env: "BENCHSCOPE_SQL_MIDDLEWARE_TURSO_HARNESS",
        workspace_bin: None,
    },
];

/// The profile a harness is built in: benchscope's own. A release benchscope (`cargo run
/// --release`) builds release harnesses; a debug one (its tests, `cargo run`) builds debug ones,
/// whose runs carry the debug warning as its own runner's do, and whose dependencies the
/// harness crates' own `cargo test` then reuses instead of compiling them again.
const RELEASE: bool = !cfg!(debug_assertions);

/// The profile's folder under a target folder, and the build command's flag.
fn profile() -> (&'static str, &'static [&'static str]) {
    if RELEASE {
        ("release", &["--release"])
    } else {
        ("debug", &[])
    }
}

/// One cargo at a time: two harness builds at once would share a small machine's cores.
static BUILDING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Resolves a harness once per process and remembers it; how its build stands can be
/// watched (the explorer shows it where the run would be).
#[derive(Debug, Clone)]
pub struct Locator {
    pub external: External,
    /// How many steps of `nice` below this process its cargo build runs (see
    /// [`super::FRONT_END_FIRST`]).
    pub nice: i32,
    cached: Arc<tokio::sync::Mutex<Option<PathBuf>>>,
    status: Arc<tokio::sync::watch::Sender<HarnessBuild>>,
}

impl Locator {
    pub fn new(external: External) -> Self {
        Locator {
            external,
            nice: 0,
            cached: Default::default(),
            status: Arc::new(tokio::sync::watch::Sender::new(HarnessBuild::Idle)),
        }
    }

    /// A locator whose binary is `bin` already, its build shown as done or not yet begun
    /// (for tests of what a run does while it builds).
    #[cfg(test)]
    pub fn built(external: External, bin: PathBuf, ready: bool) -> Self {
        let l = Locator::new(external);
        *l.cached.try_lock().expect("new") = Some(bin);
        if ready {
            l.status.send_replace(HarnessBuild::Ready);
        }
        l
    }

    /// Where the harness sources are: beside this crate's manifest.
    fn source_dir(&self) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(self.external.crate_name)
    }

    /// Whether finding the harness means running cargo (its variable is not set, and its
    /// sources are here).
    pub fn builds(&self) -> bool {
        std::env::var_os(self.external.env).is_none_or(|p| p.is_empty())
            && self.source_dir().join("Cargo.toml").exists()
    }

    /// How the build stands, and every change to it.
    pub fn watch(&self) -> tokio::sync::watch::Receiver<HarnessBuild> {
        self.status.subscribe()
    }

    /// Whether the harness is known to be ready without waiting.
    pub fn is_ready(&self) -> bool {
        matches!(*self.status.borrow(), HarnessBuild::Ready)
    }

    /// The harness binary: its variable (`BENCHSCOPE_SQLX_HARNESS`, ...) if set, else built
    /// with cargo (a no-op when up to date) from its folder. Progress and cargo's output go to
    /// `note`.
    pub async fn program(&self, note: &(dyn Fn(String) + Sync)) -> Result<Program, String> {
        let mut cached = self.cached.lock().await;
        if cached.is_none() {
            let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
            let _one_build = BUILDING.lock().await;
            let resolved = resolve(
                &self.external,
                &self.source_dir(),
                &cargo,
                self.nice,
                note,
                &self.status,
            )
            .await;
            self.status.send_replace(match &resolved {
                Ok(_) => HarnessBuild::Ready,
                Err(e) => HarnessBuild::Failed(e.clone()),
            });
            *cached = Some(resolved?);
        }
        Ok(Program {
            program: cached.clone().expect("just resolved"),
            prefix_args: vec![],
        })
    }
}

/// benchscope's workspace's target folder: `CARGO_TARGET_DIR` when set, else `target` beside
/// its manifest.
fn workspace_target() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"))
}

/// How many packages a build of the harness compiles on this host, from cargo metadata (an
/// estimate for the progress line: crates already built are not compiled again). Runs beside
/// the build in a process group of its own, killed with it when not needed any more, and
/// given at most 30 s.
async fn package_count(cargo: &std::ffi::OsStr, manifest: &std::path::Path) -> Option<usize> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let vv = Command::new(rustc)
        .arg("-vV")
        .kill_on_drop(true)
        .output()
        .await
        .ok()?;
    let host = String::from_utf8_lossy(&vv.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_string))?;
    let child = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--filter-platform"])
        .arg(&host)
        .arg("--manifest-path")
        .arg(manifest)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .ok()?;
    let mut group = GroupKill(child.id());
    let out = tokio::time::timeout(std::time::Duration::from_secs(30), child.wait_with_output())
        .await
        .ok()?
        .ok()?;
    group.0 = None;
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    Some(v["resolve"]["nodes"].as_array()?.len())
}

/// The package cargo says it compiles on a line of its output ("   Compiling sqlx-core v0.9.0").
fn compiling(line: &str) -> Option<&str> {
    line.trim()
        .strip_prefix("Compiling ")?
        .split_whitespace()
        .next()
}

async fn resolve(
    external: &External,
    dir: &std::path::Path,
    cargo: &std::ffi::OsStr,
    nice: i32,
    note: &(dyn Fn(String) + Sync),
    status: &tokio::sync::watch::Sender<HarnessBuild>,
) -> Result<PathBuf, String> {
    let name = external.bin_name();
    if let Some(p) = std::env::var_os(external.env).filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        return if p.exists() {
            Ok(p)
        } else {
            Err(format!(
                "{} points to {}, which does not exist",
                external.env,
                p.display()
            ))
        };
    }
    let manifest = dir.join("Cargo.toml");
    let (target, bin_flags) = match external.workspace_bin {
        None => (dir.join("target"), vec![]),
        Some(bin) => (workspace_target(), vec!["--bin", bin]),
    };
    let (folder, profile_flags) = profile();
    let bin = target.join(folder).join(name);
    let flags: Vec<&str> = profile_flags.iter().copied().chain(bin_flags).collect();
    let build_flags: String = flags.iter().map(|f| format!(" {f}")).collect();
    let command = format!(
        "cargo build{build_flags} --manifest-path {}",
        manifest.display()
    );
    if !manifest.exists() {
        return if bin.exists() {
            Ok(bin)
        } else {
            Err(format!(
                "{name} is not built and its sources are not at {}; build it with: {command}",
                dir.display()
            ))
        };
    }
    status.send_replace(HarnessBuild::Checking);
    let mut build = Command::new(cargo);
    // Its own process group (and session, lowered, in the explorer), so that stopping the
    // build stops rustc too, not cargo alone.
    super::process::own_group(&mut build, nice);
    let spawned = build
        .arg("build")
        .args(&flags)
        .arg("--manifest-path")
        .arg(&manifest)
        .arg("--target-dir")
        .arg(&target)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn();
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return if bin.exists() {
                note(format!(
                    "cargo is not available: using the {name} built before"
                ));
                Ok(bin)
            } else {
                Err(format!(
                    "{name} is not built and cargo is not available; build it with: {command}"
                ))
            };
        }
        Err(e) => {
            return Err(format!("cannot run cargo to build {name} ({command}): {e}"));
        }
    };
    // Dropped with this future (a cancelled run, a quit): the whole build goes with it.
    let mut group = GroupKill(child.id());
    note(format!(
        "checking {name} is built (cargo build{build_flags}; the first time takes a few minutes)"
    ));
    let mut lines = BufReader::new(child.stderr.take().expect("piped")).lines();
    let mut tail = Vec::new();
    let mut done = 0;
    // The count of packages arrives while cargo works (or never: then the line has no total).
    let count = package_count(cargo, &manifest);
    tokio::pin!(count);
    let mut total = None;
    let mut counted = false;
    loop {
        let line = tokio::select! {
            t = &mut count, if !counted => {
                counted = true;
                total = t;
                status.send_modify(|s| {
                    if let HarnessBuild::Building { total: at, .. } = s {
                        *at = t;
                    }
                });
                continue;
            }
            line = lines.next_line() => match line {
                Ok(Some(line)) => line,
                _ => break,
            },
        };
        if let Some(name) = compiling(&line) {
            done += 1;
            status.send_replace(HarnessBuild::Building {
                done,
                total,
                current: name.to_string(),
            });
        }
        note(format!("{name}: {}", line.trim()));
        tail.push(line);
        if tail.len() > 15 {
            tail.remove(0);
        }
    }
    let status = child
        .wait()
        .await
        .map_err(|e| format!("waiting for cargo: {e}"))?;
    // Reaped: its group id may be reused from now on.
    group.0 = None;
    if !status.success() {
        return Err(format!(
            "building {name} failed ({command}):\n{}",
            tail.join("\n")
        ));
    }
    if !bin.exists() {
        return Err(format!(
            "cargo built {name} but {} is missing",
            bin.display()
        ));
    }
    Ok(bin)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn cargo_lines_name_the_package_compiled() {
        assert_eq!(
            compiling("   Compiling sqlx-core v0.9.0"),
            Some("sqlx-core")
        );
        assert_eq!(
            compiling("   Compiling harness-sqlx v0.1.0 (/x/harness-sqlx)"),
            Some("harness-sqlx")
        );
        assert_eq!(compiling("    Finished `release` profile"), None);
        assert_eq!(compiling("warning: Compiling is a word"), None);
    }

    /// A cargo that answers metadata with three packages, and "builds" two crates and the
    /// binary into the target folder it is given.
    fn fake_cargo(dir: &std::path::Path, succeed: bool) -> PathBuf {
        let path = dir.join("fake-cargo");
        let build = if succeed {
            r#"for a; do last="$a"; done
  sleep 0.5
  echo "   Compiling alpha v1.0.0" >&2
  echo "   Compiling beta v0.2.0 (/src/beta)" >&2
  case " $* " in *" --release "*) p=release ;; *) p=debug ;; esac
  mkdir -p "$last/$p" && touch "$last/$p/harness-sqlx""#
        } else {
            r#"echo "   Compiling alpha v1.0.0" >&2
  echo "error[E0425]: cannot find value" >&2
  exit 101"#
        };
        let script = format!(
            "#!/bin/sh\ncase \"$1\" in\n metadata) echo '{{\"resolve\":{{\"nodes\":[{{}},{{}},{{}}]}}}}' ;;\n build)\n  {build} ;;\nesac\n"
        );
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    async fn build_with(
        succeed: bool,
    ) -> (Result<PathBuf, String>, Vec<HarnessBuild>, Vec<String>) {
        let tmp = tempfile::tempdir().unwrap();
        let src = tmp.path().join("harness-sqlx");
        std::fs::create_dir_all(&src).unwrap();
        std::fs::write(src.join("Cargo.toml"), "[package]\n").unwrap();
        let cargo = fake_cargo(tmp.path(), succeed);
        let status = tokio::sync::watch::Sender::new(HarnessBuild::Idle);
        let mut rx = status.subscribe();
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let recorder = {
            let seen = seen.clone();
            tokio::spawn(async move {
                while rx.changed().await.is_ok() {
                    seen.lock().unwrap().push(rx.borrow_and_update().clone());
                }
            })
        };
        let notes = std::sync::Mutex::new(Vec::new());
        let note = |t: String| notes.lock().unwrap().push(t);
        let result = resolve(&EXTERNAL[0], &src, cargo.as_os_str(), 0, &note, &status).await;
        drop(status);
        recorder.await.unwrap();
        let seen = seen.lock().unwrap().clone();
        (result, seen, notes.into_inner().unwrap())
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_build_reports_crates_done_of_the_packages_cargo_metadata_counts() {
        let (result, seen, notes) = build_with(true).await;
        let bin = result.unwrap();
        assert!(
            bin.ends_with(format!("target/{}/harness-sqlx", profile().0)),
            "{}",
            bin.display()
        );
        assert_eq!(
            seen.last(),
            Some(&HarnessBuild::Building {
                done: 2,
                total: Some(3),
                current: "beta".into()
            }),
            "{seen:?}"
        );
        assert_eq!(
            seen.last().unwrap().describe("sqlx").unwrap(),
            "building the sqlx harness: 2/3 crates (beta)"
        );
        assert!(
            notes.iter().any(|n| n.contains("Compiling alpha")),
            "{notes:?}"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_failed_build_says_so_with_cargo_s_last_lines() {
        let (result, _, _) = build_with(false).await;
        let e = result.unwrap_err();
        assert!(e.starts_with("building harness-sqlx failed"), "{e}");
        assert!(e.contains("error[E0425]"), "{e}");
    }
}
