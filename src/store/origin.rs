//! Where a run was measured: the machine (an identity kept in the data folder, and its
//! fingerprint: CPU model, cores, kernel) and the code (git commit and dirty flag, or a label).

use std::path::Path;

use serde::{Deserialize, Serialize};

/// A machine as the store knows it. Two data folders are two machines, even on one host: each
/// keeps its own identity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MachineId {
    pub id: String,
    pub name: String,
}

/// What a machine is made of, read at the time of the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fingerprint {
    pub cpu: String,
    pub cores: usize,
    pub kernel: String,
}

impl Fingerprint {
    pub fn here() -> Fingerprint {
        let env = bench_core::protocol::env::collect("", 0.0);
        Fingerprint {
            cpu: env.cpu.into_raw(),
            cores: env.cores,
            kernel: bench_core::opener::read_text(
                Path::new("/proc/sys/kernel/osrelease"),
                "",
                bench_core::opener::Kind::Small,
            )
            .map(|k| format!("Linux {}", k.trim()))
            .unwrap_or(env.os.into_raw()),
        }
    }
}

/// This data folder's machine: read from `machine.json`, made (and written atomically) on first
/// use. The name is the host's, with the identity's first characters so that two data folders
/// on one host read apart.
pub fn machine(data: &Path) -> Result<MachineId, String> {
    let path = data.join("machine.json");
    // Made on first use: anything at the path but nothing (a FIFO, a folder, a file too large)
    // is named, never written over.
    match bench_core::opener::read_text(&path, "", bench_core::opener::Kind::Small) {
        Ok(text) => {
            let m: MachineId = serde_json::from_str(&text)
                .map_err(|e| format!("{} is not a machine identity: {e}", path.display()))?;
            // The name is printed with every run recorded and stored in every row.
            super::short_text::short_text(&m.name)
                .map_err(|e| format!("{}: its name is {e}", path.display()))?;
            return Ok(m);
        }
        Err(e) if !e.is_missing() => return Err(e.to_string()),
        Err(_) => {}
    }
    let host = bench_core::opener::read_text(
        Path::new("/proc/sys/kernel/hostname"),
        "",
        bench_core::opener::Kind::Small,
    )
    .map(|h| h.trim().to_string())
    .ok()
    .filter(|h| !h.is_empty())
    .unwrap_or_else(|| "host".into());
    let id = fresh_id(&path);
    let m = MachineId {
        name: format!("{host}-{}", &id[..6]),
        id,
    };
    std::fs::create_dir_all(data).map_err(|e| format!("cannot create {}: {e}", data.display()))?;
    let text = bench_core::text::json::pretty(&m);
    crate::files::write_atomic(&path, &text)?;
    // Two processes making it at once: whichever rename came last is the identity.
    bench_core::opener::read_text(&path, "", bench_core::opener::Kind::Small)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .ok_or_else(|| format!("cannot read back {}", path.display()))
}

/// A new identity: what makes it unique (time, process, folder) hashed.
fn fresh_id(salt: &Path) -> String {
    use std::hash::{BuildHasher, Hasher};
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let mut out = String::new();
    for round in 0..2u8 {
        // RandomState is seeded from the OS's randomness per process.
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(now);
        h.write_u32(std::process::id());
        h.write(salt.as_os_str().as_encoded_bytes());
        h.write_u8(round);
        out.push_str(&format!("{:016x}", h.finish()));
    }
    out
}

/// The code a run measured.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Code {
    pub commit: Option<String>,
    /// Whether the work tree had changes to tracked files (`None`: unknown, not in git).
    pub dirty: Option<bool>,
    pub label: Option<String>,
}

/// The commit of the repository the command runs in (its working directory), unless given.
pub fn code(commit: Option<&str>, label: Option<&str>) -> Code {
    code_in(Path::new("."), commit, label)
}

/// The commit of the repository at `dir`, unless given.
fn code_in(dir: &Path, commit: Option<&str>, label: Option<&str>) -> Code {
    // git runs what a repository's own config names (core.fsmonitor is a command `status`
    // starts): turned off here, as benchscope only reads which commit is checked out and
    // whether tracked files changed. A repository another user owns git refuses by itself
    // (safe.directory).
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(["-c", "core.fsmonitor=false"])
            .args(args)
            .current_dir(dir)
            .stderr(std::process::Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let (commit, dirty) = match commit {
        Some(c) => (Some(c.to_string()), None),
        None => match git(&["rev-parse", "HEAD"]) {
            Some(c) => (
                Some(c),
                git(&["status", "--porcelain", "--untracked-files=no"]).map(|s| !s.is_empty()),
            ),
            None => (None, None),
        },
    };
    Code {
        commit,
        dirty,
        label: label.map(str::to_string),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A repository whose config names a command for git to run (`core.fsmonitor`, which
    /// `git status` starts): the commit and whether files changed are read, the command never
    /// run.
    #[test]
    fn a_repository_s_own_commands_are_not_run() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        std::fs::create_dir(&repo).unwrap();
        let pwned = dir.path().join("PWNED");
        let git = |args: &[&str]| {
            let ok = std::process::Command::new("git")
                .args(["-c", "user.name=a", "-c", "user.email=a@a"])
                .args(args)
                .current_dir(&repo)
                .output()
                .is_ok_and(|o| o.status.success());
            assert!(ok, "git {args:?}");
        };
        git(&["init", "-q"]);
        std::fs::write(repo.join("f"), "x").unwrap();
        git(&["add", "f"]);
        git(&["commit", "-q", "-m", "x"]);
        let cmd = format!("touch {}; false", pwned.display());
        git(&["config", "core.fsmonitor", &cmd]);
        std::fs::write(repo.join("f"), "changed").unwrap();
        let code = code_in(&repo, None, None);
        assert_eq!(code.commit.map(|c| c.len()), Some(40));
        assert_eq!(code.dirty, Some(true));
        assert!(!pwned.exists(), "git ran the repository's fsmonitor");
    }

    #[test]
    fn a_data_folder_keeps_its_machine_and_two_folders_are_two_machines() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let first = machine(a.path()).unwrap();
        assert_eq!(machine(a.path()).unwrap(), first);
        let other = machine(b.path()).unwrap();
        assert_ne!(other.id, first.id);
        assert_ne!(other.name, first.name);
        assert_eq!(first.id.len(), 32);
        std::fs::write(a.path().join("machine.json"), "{").unwrap();
        let e = machine(a.path()).unwrap_err();
        assert!(e.contains("machine.json is not a machine identity"), "{e}");
    }

    /// The machine's name starts with its host name; a repository's commit is read, and
    /// whether its tracked files have changes.
    #[test]
    fn a_machine_is_named_by_its_host_and_code_by_its_commit() {
        let d = tempfile::tempdir().unwrap();
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_string())
            .unwrap_or_default();
        let name = machine(d.path()).unwrap().name;
        let expected = if host.is_empty() { "host" } else { &host };
        assert!(
            name.starts_with(&format!("{expected}-")),
            "{name} on {host:?}"
        );

        let git = |args: &[&str]| {
            let o = std::process::Command::new("git")
                .args([
                    "-c",
                    "user.name=t",
                    "-c",
                    "user.email=t@t",
                    "-c",
                    "commit.gpgsign=false",
                ])
                .args(args)
                .current_dir(d.path())
                .output()
                .unwrap();
            assert!(
                o.status.success(),
                "git {args:?}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            String::from_utf8_lossy(&o.stdout).trim().to_string()
        };
        let outside = code_in(d.path(), None, None);
        assert_eq!(
            (outside.commit, outside.dirty),
            (None, None),
            "not a repository"
        );
        git(&["init", "-q"]);
        std::fs::write(d.path().join("f.txt"), "a").unwrap();
        git(&["add", "f.txt"]);
        git(&["commit", "-q", "-m", "one"]);
        let head = git(&["rev-parse", "HEAD"]);
        let clean = code_in(d.path(), None, None);
        assert_eq!(
            (clean.commit.as_deref(), clean.dirty),
            (Some(head.as_str()), Some(false))
        );
        // An untracked file is not a change; an edited tracked one is.
        std::fs::write(d.path().join("new.txt"), "b").unwrap();
        assert_eq!(code_in(d.path(), None, None).dirty, Some(false));
        std::fs::write(d.path().join("f.txt"), "changed").unwrap();
        assert_eq!(code_in(d.path(), None, None).dirty, Some(true));
    }

    #[test]
    fn a_given_commit_is_taken_as_given() {
        let c = code(Some("abc123"), Some("try 3"));
        assert_eq!(c.commit.as_deref(), Some("abc123"));
        assert_eq!(c.dirty, None);
        assert_eq!(c.label.as_deref(), Some("try 3"));
    }
}
