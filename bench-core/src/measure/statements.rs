//! A crate's statement cache as the crate reports it: the statements it ran, the ones it had
//! to prepare into its cache (misses), and the SQL it ran as text (never cached), counted while
//! a bench samples. Only a crate that reports its cache's work is counted (diesel, through its
//! `Instrumentation`); the others' caches are silent, and nothing is guessed for them.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use serde::{Deserialize, Serialize};

/// What a bench's statement cache did over its measured samples (the untimed statements of
/// its passes included: a fresh table, BEGIN and COMMIT).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct StatementCache {
    /// Who reports the counts (the crate and how).
    pub by: String,
    /// Statements the crate ran, each reported as it started.
    pub run: u64,
    /// Of them, those it prepared and put in its cache: a miss each.
    pub prepared: u64,
    /// Of them, SQL text run as it is (a schema, BEGIN, COMMIT, a batch): never cached, so
    /// left out of the hit rate.
    pub text: u64,
    /// The bench's operations over which they were counted (0 where not known).
    #[serde(default)]
    pub ops: u64,
}

impl StatementCache {
    /// The statements the cache served or prepared: the run ones less those run as text.
    pub fn cacheable(&self) -> u64 {
        self.run.saturating_sub(self.text)
    }

    /// The statements taken from the cache.
    pub fn hits(&self) -> u64 {
        self.cacheable().saturating_sub(self.prepared)
    }

    /// Hits over cacheable statements; none when no statement was cacheable.
    pub fn hit_rate(&self) -> Option<f64> {
        let n = self.cacheable();
        (n > 0).then(|| self.hits() as f64 / n as f64)
    }

    /// These counts and `other`'s together (one bench's in several runner processes).
    pub fn plus(&self, other: &StatementCache) -> StatementCache {
        StatementCache {
            by: self.by.clone(),
            run: self.run + other.run,
            prepared: self.prepared + other.prepared,
            text: self.text + other.text,
            ops: self.ops + other.ops,
        }
    }

    /// What a reader is told, per operation where the operations are known.
    pub fn describe(&self) -> String {
        let ops = self.ops;
        let rate = match self.hit_rate() {
            Some(r) => format!("{:.2}% hits", r * 100.0),
            None => "no cacheable statement".to_string(),
        };
        let per_op = |n: u64| {
            if ops > 0 {
                format!(" ({:.2}/op)", n as f64 / ops as f64)
            } else {
                String::new()
            }
        };
        format!(
            "statement cache ({}): {rate}; {} statements run{}, {} from the cache, {} prepared into it{}, {} run as text (not cached)",
            self.by,
            self.run,
            per_op(self.run),
            self.hits(),
            self.prepared,
            per_op(self.prepared),
            self.text,
        )
    }
}

/// The counters a crate's instrumentation adds to as a bench runs; the sampling loop reads
/// them at the measured samples' edges. Relaxed atomics: a count is all they hold, and the
/// reads happen after the passes that wrote them returned.
#[derive(Debug)]
pub struct StatementCounter {
    by: &'static str,
    run: AtomicU64,
    prepared: AtomicU64,
    text: AtomicU64,
}

impl StatementCounter {
    pub fn new(by: &'static str) -> StatementCounter {
        StatementCounter {
            by,
            run: AtomicU64::new(0),
            prepared: AtomicU64::new(0),
            text: AtomicU64::new(0),
        }
    }

    /// A statement started; `as_text` when it is SQL run as text.
    pub fn started(&self, as_text: bool) {
        self.run.fetch_add(1, Relaxed);
        if as_text {
            self.text.fetch_add(1, Relaxed);
        }
    }

    /// A statement was prepared and put in the cache.
    pub fn prepared(&self) {
        self.prepared.fetch_add(1, Relaxed);
    }

    /// The counts so far.
    pub fn read(&self) -> StatementCache {
        StatementCache {
            by: self.by.to_string(),
            run: self.run.load(Relaxed),
            prepared: self.prepared.load(Relaxed),
            text: self.text.load(Relaxed),
            ops: 0,
        }
    }

    /// What was counted since `before`, over `ops` operations of the bench.
    pub fn since(&self, before: &StatementCache, ops: u64) -> StatementCache {
        let now = self.read();
        StatementCache {
            by: now.by,
            run: now.run - before.run,
            prepared: now.prepared - before.prepared,
            text: now.text - before.text,
            ops,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hit_rate_leaves_out_text_and_counts_misses_once() {
        let c = StatementCounter::new("a crate");
        // Warm-up: two statements prepared, one BEGIN.
        c.started(true);
        c.started(false);
        c.prepared();
        c.started(false);
        c.prepared();
        let at = c.read();
        assert_eq!((at.run, at.prepared, at.text), (3, 2, 1));
        // Measured: 8 cacheable statements, one of them a miss, and 2 run as text.
        for i in 0..8 {
            c.started(false);
            if i == 3 {
                c.prepared();
            }
        }
        c.started(true);
        c.started(true);
        let s = c.since(&at, 4);
        assert_eq!((s.run, s.prepared, s.text), (10, 1, 2));
        assert_eq!((s.cacheable(), s.hits()), (8, 7));
        assert_eq!(s.hit_rate(), Some(0.875));
        assert_eq!(
            s.describe(),
            "statement cache (a crate): 87.50% hits; 10 statements run (2.50/op), 7 from the cache, 1 prepared into it (0.25/op), 2 run as text (not cached)"
        );
        let both = s.plus(&s);
        assert_eq!(
            (both.run, both.prepared, both.text, both.ops),
            (20, 2, 4, 8)
        );
        assert_eq!(both.hit_rate(), Some(0.875));
        let none = StatementCache {
            by: "x".into(),
            run: 3,
            prepared: 0,
            text: 3,
            ops: 0,
        };
        assert_eq!(none.hit_rate(), None);
        assert!(
            none.describe()
                .contains("no cacheable statement; 3 statements run, 0 from")
        );
    }
}
