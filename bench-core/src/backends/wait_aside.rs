//! SQLite's busy wait moved off an async runtime's worker: a busy handler that sleeps as
//! SQLite's own does, inside `tokio::task::block_in_place` when it runs on a multi-thread
//! runtime's worker, so the worker's other tasks go on while the connection waits for a lock.
//!
//! The handler is installed once per connection (the middleware's `wait_aside` strategy asks
//! for it through [`SqliteSettings::wait_aside`]); a call that never meets a lock pays nothing
//! for it. Off a worker thread (a blocking thread, a plain thread, a current-thread runtime,
//! where `block_in_place` may not be called) it sleeps where it is, as SQLite's would.

use std::time::Duration;

use rusqlite::Connection;

use crate::settings::SqliteSettings;

/// How long a connection waits for a lock before SQLITE_BUSY: rusqlite's own busy timeout,
/// which every connection it opens starts with.
pub const BUSY_TIMEOUT: Duration = Duration::from_millis(5000);

/// Installs the handler on `conn` when the settings ask for it.
pub fn install(conn: &Connection, s: &SqliteSettings) -> rusqlite::Result<()> {
    if s.wait_aside {
        conn.busy_handler(Some(wait))?;
    }
    Ok(())
}

/// The busy handler: `count` is how many times it ran before for this lock; `false` gives up
/// (the statement returns SQLITE_BUSY).
fn wait(count: i32) -> bool {
    let Some(sleep) = delay(count, BUSY_TIMEOUT) else {
        return false;
    };
    let on_worker = tokio::runtime::Handle::try_current()
        .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
    if on_worker {
        // On a worker thread, its other tasks move to another thread for the wait; elsewhere
        // (a blocking thread, outside any runtime) block_in_place runs the sleep where it is.
        tokio::task::block_in_place(|| std::thread::sleep(sleep));
    } else {
        std::thread::sleep(sleep);
    }
    true
}

/// The sleep before the next try after `count` earlier ones, as SQLite's default busy handler
/// takes it (1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50 ms, then 100 ms each), cut so the sleeps
/// add up to `timeout` at most; `None` once they do.
pub fn delay(count: i32, timeout: Duration) -> Option<Duration> {
    const DELAYS: [u64; 12] = [1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100];
    const TOTALS: [u64; 12] = [0, 1, 3, 8, 18, 33, 53, 78, 103, 128, 178, 228];
    let count = u64::try_from(count).ok()?;
    let (delay, prior) = match usize::try_from(count).ok().filter(|&c| c < DELAYS.len()) {
        Some(c) => (DELAYS[c], TOTALS[c]),
        None => (100, TOTALS[11] + 100 * (count - 11)),
    };
    let limit = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
    let delay = delay.min(limit.saturating_sub(prior));
    (delay > 0).then(|| Duration::from_millis(delay))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Ticker;
    use std::sync::atomic::Ordering;
    use std::sync::{Arc, Barrier};
    use std::time::Instant;

    #[test]
    fn the_sleeps_are_sqlite_s_and_add_up_to_the_timeout() {
        let ms = |c| delay(c, Duration::from_millis(5000)).map(|d| d.as_millis() as u64);
        let first: Vec<_> = (0..14).map(|c| ms(c).unwrap()).collect();
        assert_eq!(
            first,
            [1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100, 100, 100]
        );
        // Every sleep until the last, which is cut to what is left of the 5 s.
        let sleeps: Vec<u64> = (0..).map_while(ms).collect();
        assert_eq!(sleeps.iter().sum::<u64>(), 5000);
        assert_eq!(
            sleeps.len(),
            12 + 47,
            "328 ms in 12 sleeps, then 46 of 100 ms and one of 72"
        );
        assert_eq!(*sleeps.last().unwrap(), 72);
        // Each sleep's start is SQLite's running total.
        let mut total = 0;
        for (c, s) in sleeps.iter().enumerate() {
            let expected = if c < 12 {
                [1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100][c]
            } else {
                100
            };
            assert_eq!(*s, expected.min(5000 - total), "sleep {c}");
            total += s;
        }
        // A short timeout cuts the first sleeps; none is refused.
        assert_eq!(
            delay(0, Duration::from_millis(1)),
            Some(Duration::from_millis(1))
        );
        assert_eq!(
            delay(1, Duration::from_millis(2)),
            Some(Duration::from_millis(1))
        );
        assert_eq!(delay(1, Duration::from_millis(1)), None);
        assert_eq!(delay(0, Duration::ZERO), None);
        assert_eq!(delay(-1, Duration::from_millis(5000)), None);
        assert_eq!(delay(i32::MAX, Duration::from_millis(5000)), None);
    }

    /// A database whose write lock another thread holds for `hold`, released after.
    fn locked_for(
        hold: Duration,
    ) -> (
        tempfile::TempDir,
        std::path::PathBuf,
        std::thread::JoinHandle<()>,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.db");
        let c = Connection::open(&path).unwrap();
        c.execute_batch("PRAGMA journal_mode=WAL; CREATE TABLE t(x)")
            .unwrap();
        let taken = Arc::new(Barrier::new(2));
        let t = taken.clone();
        let holder = std::thread::spawn(move || {
            c.execute_batch("BEGIN IMMEDIATE; INSERT INTO t VALUES (1)")
                .unwrap();
            t.wait();
            std::thread::sleep(hold);
            c.execute_batch("COMMIT").unwrap();
        });
        taken.wait();
        (dir, path, holder)
    }

    /// On a runtime of one worker, a write that waits 400 ms for a lock while a ticker task
    /// ticks every 5 ms: how many ticks the ticker saw during the write, and whether it wrote.
    fn ticks_while_waiting(aside: bool) -> (u64, bool) {
        let (_dir, path, holder) = locked_for(Duration::from_millis(400));
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_time()
            .build()
            .unwrap();
        let s = SqliteSettings {
            wait_aside: aside,
            ..SqliteSettings::default()
        };
        let c = crate::backends::raw::open(&path, &s).unwrap();
        let (ticks, wrote) = rt.block_on(async move {
            let ticker = Ticker::spawn(Duration::from_millis(5), false);
            let writing = ticker.counting.clone();
            // Written on the worker, in place, as the strategy runs a call.
            let write = tokio::spawn(async move {
                writing.store(true, Ordering::SeqCst);
                let start = Instant::now();
                let n = c.execute("INSERT INTO t VALUES (2)", []).unwrap();
                writing.store(false, Ordering::SeqCst);
                (n == 1, start.elapsed())
            });
            let (wrote, waited) = write.await.unwrap();
            assert!(
                waited >= Duration::from_millis(300),
                "it waited for the lock: {waited:?}"
            );
            (ticker.ticks(), wrote)
        });
        holder.join().unwrap();
        (ticks, wrote)
    }

    #[test]
    fn a_busy_wait_on_a_worker_leaves_the_worker_s_other_tasks_running() {
        let (aside, wrote) = ticks_while_waiting(true);
        assert!(wrote);
        // 400 ms at one tick every 5 ms is 80 at most; a loaded machine sees fewer.
        assert!(aside >= 10, "the ticker ran during the wait: {aside} ticks");
        // SQLite's own busy wait holds the only worker: the ticker cannot run until it ends.
        let (held, wrote) = ticks_while_waiting(false);
        assert!(wrote);
        assert!(held <= 1, "SQLite's own wait held the worker: {held} ticks");
    }

    #[test]
    fn off_a_worker_the_wait_sleeps_where_it_is() {
        let s = SqliteSettings {
            wait_aside: true,
            ..SqliteSettings::default()
        };
        // A plain thread, and a current-thread runtime (where block_in_place would panic).
        let (_dir, path, holder) = locked_for(Duration::from_millis(100));
        let c = crate::backends::raw::open(&path, &s).unwrap();
        assert_eq!(c.execute("INSERT INTO t VALUES (3)", []).unwrap(), 1);
        holder.join().unwrap();
        let (_dir, path, holder) = locked_for(Duration::from_millis(100));
        let c = crate::backends::raw::open(&path, &s).unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let n = rt.block_on(async { c.execute("INSERT INTO t VALUES (4)", []).unwrap() });
        assert_eq!(n, 1);
        holder.join().unwrap();
    }
}
