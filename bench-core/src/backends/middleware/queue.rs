//! The `queue` pool: connections opened up front, the idle ones in a bounded lock-free queue.
//! A checkout pops one (a compare-and-swap, no lock, no syscall) and the return pushes it
//! back; a task that finds the queue empty waits for a return on a [`Notify`], so waiting
//! does not block its runtime thread.

use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use crossbeam_queue::ArrayQueue;
use rusqlite::Connection;
use tokio::sync::Notify;

pub struct QueuePool {
    idle: ArrayQueue<Connection>,
    returned: Notify,
}

impl QueuePool {
    /// A pool of `conns` (at least one).
    pub fn new(conns: Vec<Connection>) -> Arc<Self> {
        assert!(!conns.is_empty(), "a queue pool needs a connection");
        let idle = ArrayQueue::new(conns.len());
        for c in conns {
            assert!(idle.push(c).is_ok(), "the queue holds every connection");
        }
        Arc::new(QueuePool {
            idle,
            returned: Notify::new(),
        })
    }

    /// An idle connection, waiting (without blocking the thread) until one is returned.
    pub async fn get(self: &Arc<Self>) -> QueueConn {
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

    fn take(self: &Arc<Self>) -> Option<QueueConn> {
        self.idle.pop().map(|c| QueueConn {
            conn: Some(c),
            pool: self.clone(),
        })
    }

    /// Connections idle in the queue now.
    pub fn idle(&self) -> usize {
        self.idle.len()
    }
}

/// A connection out of a [`QueuePool`], pushed back when dropped.
pub struct QueueConn {
    conn: Option<Connection>,
    pool: Arc<QueuePool>,
}

impl Deref for QueueConn {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        self.conn.as_ref().expect("held until drop")
    }
}

impl DerefMut for QueueConn {
    fn deref_mut(&mut self) -> &mut Connection {
        self.conn.as_mut().expect("held until drop")
    }
}

impl Drop for QueueConn {
    fn drop(&mut self) {
        if let Some(c) = self.conn.take() {
            // Never full: the queue's capacity is the number of connections there are.
            let _ = self.pool.idle.push(c);
            self.pool.returned.notify_one();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn pool(n: usize) -> Arc<QueuePool> {
        QueuePool::new(
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
        assert!(a.is_autocommit() && b.is_autocommit());
        drop(a);
        assert_eq!(p.idle(), 1);
        drop(b);
        assert_eq!(p.idle(), 2);
    }

    #[tokio::test]
    async fn a_connection_keeps_its_state_between_checkouts() {
        let p = pool(1);
        p.get()
            .await
            .execute_batch("CREATE TEMP TABLE t(x); INSERT INTO t VALUES (7)")
            .unwrap();
        let c = p.get().await;
        let x: i64 = c.query_row("SELECT x FROM t", [], |r| r.get(0)).unwrap();
        assert_eq!(x, 7);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn an_empty_pool_waits_for_a_return_without_blocking_its_thread() {
        let p = pool(1);
        let held = p.get().await;
        let waiter = tokio::spawn({
            let p = p.clone();
            async move { p.get().await.is_autocommit() }
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
