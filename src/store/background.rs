//! Recording off the caller's thread: the explorer hands each finished run to a thread of its
//! own, so that a slow or unreachable store never holds up a frame or a key.

use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bench_core::protocol::results::RunRecord;

use super::Recorder;

pub struct Background {
    tx: Option<mpsc::Sender<RunRecord>>,
    thread: Option<JoinHandle<()>>,
}

impl Background {
    /// A thread that records each run it is handed; `said` gets each outcome (a line saying
    /// what was recorded where, or why not).
    pub fn start(
        recorder: Recorder,
        said: impl Fn(Result<String, String>) + Send + 'static,
    ) -> Background {
        let (tx, rx) = mpsc::channel::<RunRecord>();
        let thread = std::thread::Builder::new()
            .name("results-store".into())
            .spawn(move || {
                for r in rx {
                    said(recorder.record(&[&r]).map_err(String::from));
                }
            })
            .ok();
        Background {
            tx: Some(tx),
            thread,
        }
    }

    pub fn record(&self, r: RunRecord) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(r);
        }
    }

    /// Lets what was handed over be written, waiting at most `wait`; whether it all was.
    pub fn finish(mut self, wait: Duration) -> bool {
        self.tx = None;
        let Some(t) = self.thread.take() else {
            return true;
        };
        let end = Instant::now() + wait;
        while !t.is_finished() && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(20));
        }
        t.is_finished()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Code, Filter, Store, Target};

    #[test]
    fn runs_handed_over_are_recorded_and_failures_said() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("store.sqlite");
        let recorder = Recorder {
            target: Target::Sqlite(db.clone()),
            code: Code {
                label: Some("l1".into()),
                ..Code::default()
            },
            data: dir.path().to_path_buf(),
        };
        let (tx, rx) = mpsc::channel();
        let bg = Background::start(recorder, move |r| tx.send(r).unwrap());
        bg.record(crate::testing::finished_record(
            "single_row_lookup",
            &[("rusqlite", 1000.0)],
        ));
        assert!(bg.finish(Duration::from_secs(30)));
        let said = rx.recv().unwrap().unwrap();
        assert!(
            said.starts_with("recorded 1 run in the results store"),
            "{said}"
        );
        let points = Store::read(&Target::Sqlite(db))
            .unwrap()
            .points(&Filter::default())
            .unwrap()
            .rows;
        assert_eq!(points.len(), 1);
        assert_eq!(points[0].label.as_deref(), Some("l1"));

        // A store that cannot be made: said, nothing panics.
        let blocked = dir.path().join("file");
        std::fs::write(&blocked, "").unwrap();
        let (tx, rx) = mpsc::channel();
        let bg = Background::start(
            Recorder {
                target: Target::Sqlite(blocked.join("store.sqlite")),
                code: Code::default(),
                data: dir.path().to_path_buf(),
            },
            move |r| tx.send(r).unwrap(),
        );
        bg.record(crate::testing::finished_record(
            "single_row_lookup",
            &[("rusqlite", 1000.0)],
        ));
        assert!(bg.finish(Duration::from_secs(30)));
        let e = rx.recv().unwrap().unwrap_err();
        assert!(
            e.contains("results store") && e.contains("the run's own outputs are kept"),
            "{e}"
        );
    }

    /// A store slower than the wait: `finish` says not all was written, once the wait is up.
    #[test]
    fn a_write_longer_than_the_wait_is_said_unfinished() {
        let (hold, held) = mpsc::channel::<()>();
        let slow = Background {
            tx: None,
            thread: Some(std::thread::spawn(move || {
                let _ = held.recv();
            })),
        };
        let start = Instant::now();
        assert!(!slow.finish(Duration::from_millis(100)));
        assert!(start.elapsed() >= Duration::from_millis(100));
        hold.send(()).unwrap();
        // A thread that ends is not waited for to the end of the wait.
        let quick = Background {
            tx: None,
            thread: Some(std::thread::spawn(|| {})),
        };
        let start = Instant::now();
        assert!(quick.finish(Duration::from_secs(120)));
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{:?}",
            start.elapsed()
        );
    }
}
