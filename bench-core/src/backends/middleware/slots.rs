//! The `slots` pool: connections opened up front, one slot each, a flag per slot saying whether
//! it is taken. A checkout takes the lowest free slot (one atomic swap when it is free, no lock
//! held while waiting, no system call) and its drop frees it; a task that finds every slot
//! taken waits for a return on a [`Notify`], so waiting does not block its runtime thread.
//!
//! Lowest free first, not round robin or first in first out: when few connections are in use
//! the same ones are taken again and stay warm in the CPU's caches (their statement cache,
//! page cache and the B-tree pages of the last lookups); cycling through eight connections
//! costs a lookup about a tenth more on these machines (see the catalog's figures).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rusqlite::Connection;
use tokio::sync::Notify;

struct Slot {
    taken: AtomicBool,
    /// Only the task that set `taken` locks it, so the lock is never waited for; the
    /// connection never moves out of its slot.
    conn: Mutex<Connection>,
}

pub struct SlotPool {
    slots: Box<[Slot]>,
    returned: Notify,
}

impl SlotPool {
    /// A pool of `conns` (at least one).
    pub fn new(conns: Vec<Connection>) -> Arc<Self> {
        assert!(!conns.is_empty(), "a pool needs a connection");
        Arc::new(SlotPool {
            slots: conns
                .into_iter()
                .map(|c| Slot {
                    taken: AtomicBool::new(false),
                    conn: Mutex::new(c),
                })
                .collect(),
            returned: Notify::new(),
        })
    }

    /// A free connection, the lowest-numbered one, waiting (without blocking the thread)
    /// until one is returned.
    pub async fn get(self: &Arc<Self>) -> SlotConn {
        loop {
            if let Some(c) = self.take() {
                return c;
            }
            // Registered before the second look, so a return between the two wakes it.
            let returned = self.returned.notified();
            tokio::pin!(returned);
            returned.as_mut().enable();
            if let Some(c) = self.take() {
                return c;
            }
            returned.await;
        }
    }

    fn take(self: &Arc<Self>) -> Option<SlotConn> {
        self.slots.iter().enumerate().find_map(|(i, s)| {
            (!s.taken.load(Ordering::Relaxed) && !s.taken.swap(true, Ordering::Acquire)).then(
                || SlotConn {
                    slot: i,
                    pool: self.clone(),
                },
            )
        })
    }

    /// Connections free now.
    pub fn idle(&self) -> usize {
        self.slots
            .iter()
            .filter(|s| !s.taken.load(Ordering::Acquire))
            .count()
    }
}

/// A slot of a [`SlotPool`] taken, freed when dropped. Small (a pointer and an index), so
/// moving it through futures moves no connection; [`SlotConn::with`] reaches the connection
/// in its slot, from any thread.
pub struct SlotConn {
    slot: usize,
    pool: Arc<SlotPool>,
}

impl SlotConn {
    /// Which slot it holds (0 is the one taken first).
    pub fn slot(&self) -> usize {
        self.slot
    }

    /// `f` on the slot's connection (its lock is never contended: the slot is this one's).
    pub fn with<R>(&self, f: impl FnOnce(&mut Connection) -> R) -> R {
        let mut c = self.pool.slots[self.slot]
            .conn
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        f(&mut c)
    }
}

impl Drop for SlotConn {
    fn drop(&mut self) {
        self.pool.slots[self.slot]
            .taken
            .store(false, Ordering::Release);
        self.pool.returned.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn pool(n: usize) -> Arc<SlotPool> {
        SlotPool::new(
            (0..n)
                .map(|_| Connection::open_in_memory().unwrap())
                .collect(),
        )
    }

    #[tokio::test]
    async fn a_checkout_takes_a_connection_and_its_drop_gives_it_back() {
        let p = pool(2);
        let a = p.get().await;
        assert_eq!(p.idle(), 1);
        let b = p.get().await;
        assert_eq!(p.idle(), 0);
        assert!(a.with(|c| c.is_autocommit()) && b.with(|c| c.is_autocommit()));
        assert_eq!((a.slot(), b.slot()), (0, 1));
        drop(a);
        assert_eq!(p.idle(), 1);
        drop(b);
        assert_eq!(p.idle(), 2);
    }

    #[tokio::test]
    async fn the_lowest_free_connection_is_taken_again() {
        let p = pool(3);
        // One at a time: always the first, never cycling through the others.
        for _ in 0..5 {
            assert_eq!(p.get().await.slot(), 0);
        }
        let (a, b) = (p.get().await, p.get().await);
        drop(a);
        assert_eq!(
            p.get().await.slot(),
            0,
            "the freed first slot before the third"
        );
        drop(b);
    }

    #[tokio::test]
    async fn a_connection_keeps_its_state_between_checkouts() {
        let p = pool(1);
        p.get()
            .await
            .with(|c| c.execute_batch("CREATE TEMP TABLE t(x); INSERT INTO t VALUES (7)"))
            .unwrap();
        let c = p.get().await;
        let x: i64 = c
            .with(|c| c.query_row("SELECT x FROM t", [], |r| r.get(0)))
            .unwrap();
        assert_eq!(x, 7);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn an_empty_pool_waits_for_a_return_without_blocking_its_thread() {
        let p = pool(1);
        let held = p.get().await;
        let waiter = tokio::spawn({
            let p = p.clone();
            async move { p.get().await.with(|c| c.is_autocommit()) }
        });
        // One thread: the waiter can only have parked, or this sleep would never end.
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiter.is_finished(), "nothing was returned yet");
        drop(held);
        assert!(
            tokio::time::timeout(Duration::from_secs(5), waiter)
                .await
                .expect("woken by the return")
                .unwrap()
        );
        assert_eq!(p.idle(), 1);
    }

    #[test]
    fn many_tasks_share_few_connections_and_every_one_comes_back() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let p = pool(3);
        let in_use = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let most = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        rt.block_on(async {
            let tasks: Vec<_> = (0..64)
                .map(|_| {
                    let (p, in_use, most) = (p.clone(), in_use.clone(), most.clone());
                    tokio::spawn(async move {
                        for _ in 0..50 {
                            let c = p.get().await;
                            let now = in_use.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
                            most.fetch_max(now, std::sync::atomic::Ordering::SeqCst);
                            tokio::task::yield_now().await;
                            in_use.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                            drop(c);
                        }
                    })
                })
                .collect();
            for t in tasks {
                tokio::time::timeout(Duration::from_secs(30), t)
                    .await
                    .expect("no task waits forever")
                    .unwrap();
            }
        });
        assert_eq!(p.idle(), 3);
        let most = most.load(std::sync::atomic::Ordering::SeqCst);
        assert!(most <= 3, "at most 3 held at once, saw {most}");
        assert!(most >= 2, "tasks overlapped ({most})");
    }
}
