//! Finding harness-sqlx, and building it on first use. It lives in its own crate (its SQLite
//! binding conflicts with rusqlite's), so `cargo run` of benchscope does not build it.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

use super::Program;

/// Resolves the harness once per process and remembers it.
#[derive(Debug, Clone, Default)]
pub struct Locator {
    cached: Arc<tokio::sync::Mutex<Option<PathBuf>>>,
}

/// Where the harness sources are: beside this crate's manifest.
fn source_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("harness-sqlx")
}

impl Locator {
    /// The harness binary: `BENCHSCOPE_SQLX_HARNESS` if set, else built with cargo (a no-op
    /// when up to date) from `harness-sqlx/`. Progress and cargo's output go to `note`.
    pub async fn program(&self, note: &(dyn Fn(String) + Sync)) -> Result<Program, String> {
        let mut cached = self.cached.lock().await;
        if cached.is_none() {
            *cached = Some(resolve(note).await?);
        }
        Ok(Program {
            program: cached.clone().expect("just resolved"),
            prefix_args: vec![],
        })
    }
}

/// Kills a process group when dropped (a build that is no longer wanted: cargo and the
/// compilers it started).
struct GroupKill(Option<u32>);

impl Drop for GroupKill {
    fn drop(&mut self) {
        if let Some(pgid) = self.0 {
            // SAFETY: kill(2) on the process group our own unreaped child leads.
            unsafe { libc::kill(-(pgid as libc::pid_t), libc::SIGKILL) };
        }
    }
}

async fn resolve(note: &(dyn Fn(String) + Sync)) -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("BENCHSCOPE_SQLX_HARNESS").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        return if p.exists() {
            Ok(p)
        } else {
            Err(format!(
                "BENCHSCOPE_SQLX_HARNESS points to {}, which does not exist",
                p.display()
            ))
        };
    }
    let dir = source_dir();
    let manifest = dir.join("Cargo.toml");
    let target = dir.join("target");
    let bin = target.join("release").join("harness-sqlx");
    let command = format!(
        "cargo build --release --manifest-path {}",
        manifest.display()
    );
    if !manifest.exists() {
        return if bin.exists() {
            Ok(bin)
        } else {
            Err(format!(
                "harness-sqlx is not built and its sources are not at {}; build it with: {command}",
                dir.display()
            ))
        };
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let spawned = Command::new(&cargo)
        .args(["build", "--release", "--manifest-path"])
        .arg(&manifest)
        .arg("--target-dir")
        .arg(&target)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        // Its own process group, so that stopping the build stops rustc too, not cargo alone.
        .process_group(0)
        .kill_on_drop(true)
        .spawn();
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return if bin.exists() {
                note("cargo is not available: using the harness-sqlx built before".into());
                Ok(bin)
            } else {
                Err(format!(
                    "harness-sqlx is not built and cargo is not available; build it with: {command}"
                ))
            };
        }
        Err(e) => {
            return Err(format!(
                "cannot run cargo to build harness-sqlx ({command}): {e}"
            ));
        }
    };
    // Dropped with this future (a cancelled run, a quit): the whole build goes with it.
    let mut group = GroupKill(child.id());
    note("checking harness-sqlx is built (cargo build --release; the first time takes a few minutes)".into());
    let mut lines = BufReader::new(child.stderr.take().expect("piped")).lines();
    let mut tail = Vec::new();
    while let Ok(Some(line)) = lines.next_line().await {
        note(format!("harness-sqlx: {}", line.trim()));
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
            "building harness-sqlx failed ({command}):\n{}",
            tail.join("\n")
        ));
    }
    if !bin.exists() {
        return Err(format!(
            "cargo built harness-sqlx but {} is missing",
            bin.display()
        ));
    }
    Ok(bin)
}
