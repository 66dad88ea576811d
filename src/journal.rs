//! The explorer's session journal: every run it starts and every event its runners send,
//! appended as JSON lines as they arrive, under the data folder. Nothing measured is lost on a
//! quit, a Ctrl-C or a crash; the next start offers to reopen what was not exported.
//!
//! One file per session (`sessions/session-<time>-<pid>.jsonl`); a reopened session goes on
//! appending to its own file.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use bench_core::knobs::Knobs;
use bench_core::protocol::results::RunRecord;
use serde::{Deserialize, Serialize};

/// The data folder: BENCHSCOPE_DATA_DIR, else $XDG_DATA_HOME/benchscope, else
/// ~/.local/share/benchscope, else (no HOME) a folder under the system temp dir: the session
/// is journaled wherever the explorer runs.
pub fn data_dir() -> PathBuf {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    var("BENCHSCOPE_DATA_DIR")
        .or_else(|| var("XDG_DATA_HOME").map(|d| d.join("benchscope")))
        .or_else(|| var("HOME").map(|h| h.join(".local/share/benchscope")))
        .unwrap_or_else(|| std::env::temp_dir().join("benchscope-data"))
}

/// Where the session journals are.
pub fn sessions_dir(data: &Path) -> PathBuf {
    data.join("sessions")
}

/// One line of a journal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Entry {
    /// A run started.
    Run {
        run_id: String,
        seq: usize,
        target: String,
        benches: Vec<String>,
        knobs: Knobs,
        trace: bool,
        profiled: bool,
    },
    /// An event of a run, as its runner wrote it.
    Event {
        run_id: String,
        event: serde_json::Value,
    },
    /// A run ended: "finished", "cancelled", "superseded" or "failed: why".
    End { run_id: String, outcome: String },
    /// These runs were exported.
    Exported { run_ids: Vec<String> },
    /// The user chose not to reopen this session: it is not offered again.
    Dismissed,
}

/// A run read back from a journal.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    pub run_id: String,
    pub seq: usize,
    pub target: String,
    pub benches: Vec<String>,
    pub knobs: Knobs,
    pub trace: bool,
    pub profiled: bool,
    pub record: RunRecord,
    /// How it ended; `None` when the session stopped while it ran.
    pub outcome: Option<String>,
}

impl Run {
    /// Whether any bench of it has a result.
    pub fn has_results(&self) -> bool {
        self.record
            .benches
            .iter()
            .any(|b| b.summary.is_some() || b.scenario.is_some())
    }
}

/// A journal read back.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Session {
    pub path: PathBuf,
    pub runs: Vec<Run>,
    pub exported: BTreeSet<String>,
    pub dismissed: bool,
    /// Lines that did not read (a line cut short by a crash is the usual one).
    pub bad_lines: usize,
}

impl Session {
    /// Runs with results that no export holds.
    pub fn unexported(&self) -> Vec<&Run> {
        self.runs
            .iter()
            .filter(|r| r.has_results() && !self.exported.contains(&r.run_id))
            .collect()
    }

    /// Whether the next start should offer it.
    pub fn worth_offering(&self) -> bool {
        !self.dismissed && !self.unexported().is_empty()
    }
}

/// Reads a journal.
pub fn load(path: &Path) -> Result<Session, String> {
    let text = bench_core::opener::read_text(
        path,
        "the session journal",
        bench_core::opener::Kind::Journal,
    )
    .map_err(|e| format!("cannot read {e}"))?;
    Ok(parse(path, &text))
}

fn parse(path: &Path, text: &str) -> Session {
    let mut s = Session {
        path: path.to_path_buf(),
        ..Default::default()
    };
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let Ok(entry) = serde_json::from_str::<Entry>(line) else {
            s.bad_lines += 1;
            continue;
        };
        match entry {
            Entry::Run {
                run_id,
                seq,
                target,
                benches,
                knobs,
                trace,
                profiled,
            } => s.runs.push(Run {
                run_id,
                seq,
                target,
                benches,
                knobs,
                trace,
                profiled,
                record: RunRecord::default(),
                outcome: None,
            }),
            Entry::Event { run_id, event } => {
                let run = s.runs.iter_mut().find(|r| r.run_id == run_id);
                match (run, serde_json::from_value(event)) {
                    (Some(run), Ok(event)) => run.record.apply(event),
                    _ => s.bad_lines += 1,
                }
            }
            Entry::End { run_id, outcome } => {
                if let Some(run) = s.runs.iter_mut().find(|r| r.run_id == run_id) {
                    run.outcome = Some(outcome);
                }
            }
            Entry::Exported { run_ids } => s.exported.extend(run_ids),
            Entry::Dismissed => s.dismissed = true,
        }
    }
    s
}

/// The most recent journal in `dir` (by name: names start with the time) that no running
/// explorer holds, if any: a second explorer in the same folder never offers the first one's
/// live session.
pub fn latest(dir: &Path) -> Option<PathBuf> {
    let mut all: Vec<PathBuf> = bench_core::opener::list(dir)
        .ok()?
        .into_iter()
        .map(|n| dir.join(n))
        .filter(|p| {
            p.extension().is_some_and(|x| x == "jsonl")
                && p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("session-"))
        })
        .collect();
    all.sort();
    all.into_iter().rev().find(|p| !in_use(p))
}

/// Whether a running explorer holds the journal at `path` (it keeps an exclusive `flock` on
/// the file while it writes it).
pub fn in_use(path: &Path) -> bool {
    use std::os::fd::AsRawFd;
    let Ok(f) = bench_core::opener::open(path, "", bench_core::opener::Kind::Journal) else {
        return false;
    };
    let f = f.file;
    // SAFETY: flock(2) on a descriptor this function owns; released when `f` closes.
    let r = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) };
    r != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EWOULDBLOCK)
}

/// A new journal's path in `dir`, named by the time and process.
pub fn new_path(dir: &Path, stamp: &str) -> PathBuf {
    dir.join(format!("session-{stamp}-{}.jsonl", std::process::id()))
}

/// Appends entries to a journal, creating it (and its folder) on the first one. Each entry is
/// one `write` of a whole line to a file opened for appending.
#[derive(Debug)]
pub struct Writer {
    pub path: PathBuf,
    file: Option<std::fs::File>,
    /// Why writing stopped, once it has (said once, then the session goes on without).
    pub failed: Option<String>,
    /// Lines held while a batch of runner events is taken in ([`Writer::hold`]), written
    /// in one go when it ends.
    held: Option<String>,
}

impl Writer {
    pub fn new(path: PathBuf) -> Writer {
        Writer {
            path,
            file: None,
            failed: None,
            held: None,
        }
    }

    /// From now on lines are held, until [`Writer::release`] writes them in one go: a batch of
    /// events read together from a runner costs one write, not one each.
    pub fn hold(&mut self) {
        self.held.get_or_insert_with(String::new);
    }

    /// Writes the lines held since [`Writer::hold`], and stops holding.
    pub fn release(&mut self) -> Result<(), String> {
        match self.held.take() {
            Some(lines) if !lines.is_empty() => self.append_line(lines),
            _ => Ok(()),
        }
    }

    /// Appends one entry; the first failure is returned (and later ones are silent).
    pub fn append(&mut self, entry: &Entry) -> Result<(), String> {
        let mut line = bench_core::text::json::line(entry);
        line.push('\n');
        self.append_line(line)
    }

    /// Appends an event line as its runner wrote it (not encoded again).
    pub fn append_event(&mut self, run_id: &str, line: &str) -> Result<(), String> {
        let id = serde_json::to_string(run_id).expect("a string serializes");
        self.append_line(format!(
            "{{\"kind\":\"event\",\"run_id\":{id},\"event\":{}}}\n",
            line.trim_end()
        ))
    }

    /// Writes a whole line unless writing has already failed; remembers the first failure.
    fn append_line(&mut self, line: String) -> Result<(), String> {
        if self.failed.is_some() {
            return Ok(());
        }
        if let Some(held) = &mut self.held {
            held.push_str(&line);
            return Ok(());
        }
        let result = self.write_line(line);
        if let Err(e) = &result {
            self.failed = Some(e.clone());
        }
        result
    }

    fn write_line(&mut self, line: String) -> Result<(), String> {
        if self.file.is_none() {
            if let Some(dir) = self.path.parent() {
                std::fs::create_dir_all(dir)
                    .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            }
            // Opened without waiting, a regular file only (a FIFO there would block the
            // explorer's first write).
            let mut f = bench_core::opener::open_append(&self.path, "")
                .map_err(|e| format!("cannot open {e}"))?;
            // Held for as long as this explorer writes it: no other explorer offers or
            // appends to it meanwhile.
            use std::os::fd::AsRawFd;
            // SAFETY: flock(2) on the descriptor just opened, owned by `f`.
            if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
                return Err(format!(
                    "{} is held by another running explorer (one explorer writes a session journal at a time)",
                    self.path.display()
                ));
            }
            // A journal whose last line was cut short (a crash mid-write) gets its line ended,
            // so that what follows reads.
            if ends_mid_line(&mut f) {
                f.write_all(b"\n")
                    .map_err(|e| format!("cannot write {}: {e}", self.path.display()))?;
            }
            self.file = Some(f);
        }
        self.file
            .as_mut()
            .expect("opened above")
            .write_all(line.as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", self.path.display()))
    }
}

fn ends_mid_line(f: &mut std::fs::File) -> bool {
    use std::io::{Read, Seek, SeekFrom};
    let mut last = [0u8; 1];
    f.seek(SeekFrom::End(-1)).is_ok() && f.read_exact(&mut last).is_ok() && last[0] != b'\n'
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{self, samples};

    fn run_entry(id: &str, seq: usize) -> Entry {
        Entry::Run {
            run_id: id.into(),
            seq,
            target: "single_row_lookup".into(),
            benches: vec!["rusqlite".into()],
            knobs: Knobs::default(),
            trace: false,
            profiled: false,
        }
    }

    /// A bench's events, the first half as entries, the rest as the raw lines runners write.
    fn events(w: &mut Writer, id: &str) {
        let all = testing::bench_events("rusqlite", "rusqlite", 1000, &samples(1400.0, 12), None);
        let half = all.len() / 2;
        for (i, e) in all.iter().enumerate() {
            if i < half {
                w.append(&Entry::Event {
                    run_id: id.into(),
                    event: serde_json::to_value(e).unwrap(),
                })
                .unwrap();
            } else {
                let line = bench_core::protocol::encode(e);
                w.append_event(id, &line).unwrap();
            }
        }
    }

    #[test]
    fn a_journal_reads_back_its_runs_results_and_exports() {
        let dir = tempfile::tempdir().unwrap();
        let path = new_path(&sessions_dir(dir.path()), "20261123T100000");
        let mut w = Writer::new(path.clone());
        w.append(&run_entry("a-1", 1)).unwrap();
        events(&mut w, "a-1");
        w.append(&Entry::End {
            run_id: "a-1".into(),
            outcome: "finished".into(),
        })
        .unwrap();
        w.append(&Entry::Exported {
            run_ids: vec!["a-1".into()],
        })
        .unwrap();
        w.append(&run_entry("a-2", 2)).unwrap();
        events(&mut w, "a-2");
        // A line cut short by a crash.
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"{\"kind\":\"event\",\"run_id\":\"a-2\",\"ev")
            .unwrap();
        // The session has ended: its explorer no longer holds the journal.
        drop(w);

        assert_eq!(latest(&sessions_dir(dir.path())), Some(path.clone()));
        let s = load(&path).unwrap();
        assert_eq!(s.runs.len(), 2);
        assert_eq!(s.bad_lines, 1);
        let r1 = &s.runs[0];
        assert_eq!(r1.outcome.as_deref(), Some("finished"));
        let b = r1.record.bench("rusqlite").unwrap();
        assert_eq!(b.samples.len(), 12);
        assert!(b.summary.is_some());
        // The second run never ended (the session stopped) and was not exported.
        assert_eq!(s.runs[1].outcome, None);
        let open: Vec<&str> = s.unexported().iter().map(|r| r.run_id.as_str()).collect();
        assert_eq!(open, ["a-2"]);
        assert!(s.worth_offering());

        let mut w = Writer::new(path.clone());
        w.append(&Entry::Dismissed).unwrap();
        assert!(!load(&path).unwrap().worth_offering());
    }

    /// A batch of events is written when released, in the order it came, and reads back as
    /// if written line by line.
    #[test]
    fn held_lines_are_written_together_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = new_path(&sessions_dir(dir.path()), "20261124T100000");
        let mut w = Writer::new(path.clone());
        w.append(&run_entry("a-1", 1)).unwrap();
        let before = std::fs::read_to_string(&path).unwrap();
        w.hold();
        events(&mut w, "a-1");
        w.append(&Entry::End {
            run_id: "a-1".into(),
            outcome: "finished".into(),
        })
        .unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), before, "held");
        w.release().unwrap();
        let after = std::fs::read_to_string(&path).unwrap();
        assert!(
            after.len() > before.len() && after.ends_with("\"finished\"}\n"),
            "{after}"
        );
        // Released: lines go out one by one again.
        w.append(&Entry::Dismissed).unwrap();
        assert!(std::fs::read_to_string(&path).unwrap().len() > after.len());
        drop(w);
        let s = load(&path).unwrap();
        assert_eq!(s.runs.len(), 1);
        assert!(
            s.runs[0]
                .record
                .bench("rusqlite")
                .is_some_and(|b| b.summary.is_some())
        );
    }

    #[test]
    fn a_journal_that_cannot_be_written_says_where_once() {
        let dir = tempfile::tempdir().unwrap();
        let blocker = dir.path().join("file");
        std::fs::write(&blocker, "").unwrap();
        let mut w = Writer::new(blocker.join("sessions/x.jsonl"));
        let e = w.append(&Entry::Dismissed).unwrap_err();
        assert!(e.contains("cannot create"), "{e}");
        assert_eq!(w.append(&Entry::Dismissed), Ok(()));
        assert!(w.failed.is_some());
    }

    /// Two explorers in one data folder: the second is not offered the first one's live
    /// session (it is offered the one before), and cannot append to it.
    #[test]
    fn a_journal_a_running_explorer_holds_is_not_offered_to_another() {
        let dir = tempfile::tempdir().unwrap();
        let older = dir.path().join("session-20261101T000000-1.jsonl");
        let mut w = Writer::new(older.clone());
        w.append(&run_entry("a-1", 1)).unwrap();
        drop(w);
        let live = dir.path().join("session-20261124T000000-2.jsonl");
        let mut first = Writer::new(live.clone());
        first.append(&run_entry("b-1", 1)).unwrap();
        assert!(in_use(&live) && !in_use(&older));
        assert_eq!(latest(dir.path()), Some(older.clone()));
        let mut second = Writer::new(live.clone());
        let e = second.append(&run_entry("c-1", 1)).unwrap_err();
        assert!(e.contains("held by another running explorer"), "{e}");
        drop(first);
        assert_eq!(latest(dir.path()), Some(live));
    }
}
