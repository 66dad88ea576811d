//! The `thread` pool: a connection per thread that uses the pool, opened on that thread's
//! first use and kept in a thread-local, with the statements it runs prepared once and held
//! beside it. There is nothing to check out: a task reaches the connection of the thread it
//! runs on (in place, or in `block_in_place`, which keeps the thread), or of the blocking
//! thread `spawn_blocking` gives it. No lock, no atomic and no statement-cache lookup lies
//! between a task and its statement.
//!
//! A rusqlite `Statement` borrows its connection and may not leave its thread, so no pool
//! whose connections move between threads can hold one; a thread's own connection can, and
//! [`self_cell`] keeps the two together without unsafe code.
//!
//! A thread's connections live as long as the thread. A pool dropped leaves its connections
//! on the threads that used it until each of those threads ends, or opens a connection of
//! another pool (it closes the dropped pools' connections first).

use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Weak};

use rusqlite::{Connection, Statement};

use super::error::MiddlewareError;

type Opener = dyn Fn() -> rusqlite::Result<Connection> + Send + Sync;

/// A pool of connections, one per thread that uses it.
pub struct ThreadPool {
    open: Box<Opener>,
    opened: AtomicUsize,
}

type Stmt<'c> = Statement<'c>;

self_cell::self_cell!(
    /// A connection and one statement prepared on it.
    struct Prepared {
        owner: Connection,
        #[covariant]
        dependent: Stmt,
    }
);

/// A thread's connection: plain, or with the statement of `sql` prepared and held; `Lost`
/// only if preparing a statement panicked halfway.
enum Held {
    Plain(Connection),
    Prepared(&'static str, Prepared),
    Lost,
}

fn lost() -> MiddlewareError {
    MiddlewareError::Dispatch("this thread's connection was lost by an earlier failed call".into())
}

impl Held {
    /// The connection for any use; a held statement is finalized first (`&mut` access to a
    /// connection with a statement open on it is what the borrow forbids).
    fn connection(&mut self) -> Result<&mut Connection, MiddlewareError> {
        if matches!(self, Held::Prepared(..)) {
            *self = match std::mem::replace(self, Held::Lost) {
                Held::Prepared(_, p) => Held::Plain(p.into_owner()),
                other => other,
            };
        }
        match self {
            Held::Plain(c) => Ok(c),
            _ => Err(lost()),
        }
    }

    /// The statement of `sql` on the connection, prepared the first time and kept.
    fn statement(&mut self, sql: &'static str) -> Result<&mut Prepared, MiddlewareError> {
        if !matches!(self, Held::Prepared(s, _) if *s == sql) {
            let conn = match std::mem::replace(self, Held::Lost) {
                Held::Plain(c) => c,
                Held::Prepared(_, p) => p.into_owner(),
                Held::Lost => return Err(lost()),
            };
            match Prepared::try_new_or_recover(conn, |c| c.prepare(sql)) {
                Ok(p) => *self = Held::Prepared(sql, p),
                Err((conn, e)) => {
                    *self = Held::Plain(conn);
                    return Err(e.into());
                }
            }
        }
        match self {
            Held::Prepared(_, p) => Ok(p),
            _ => Err(lost()),
        }
    }
}

struct Entry {
    pool: Weak<ThreadPool>,
    held: Held,
}

thread_local! {
    /// This thread's connections, one per pool it used.
    static HELD: RefCell<Vec<Entry>> = const { RefCell::new(Vec::new()) };
}

impl ThreadPool {
    /// A pool whose connections `open` makes (on each thread's first use).
    pub fn new(
        open: impl Fn() -> rusqlite::Result<Connection> + Send + Sync + 'static,
    ) -> Arc<Self> {
        Arc::new(ThreadPool {
            open: Box::new(open),
            opened: AtomicUsize::new(0),
        })
    }

    /// Connections opened so far: one per thread that used the pool.
    pub fn opened(&self) -> usize {
        self.opened.load(Ordering::Relaxed)
    }

    /// `f` on this thread's connection of the pool. A call must leave the connection out of
    /// any transaction: the next call of the same task may run on another thread, whose
    /// connection is another, so a transaction left open would be split between two
    /// connections. One left open is rolled back and the call is an error saying so.
    pub fn with<R>(
        self: &Arc<Self>,
        f: impl FnOnce(&mut Connection) -> R,
    ) -> Result<R, MiddlewareError> {
        self.on_this_thread(|held| {
            let conn = held.connection()?;
            let out = f(conn);
            closed_transaction(conn)?;
            Ok(out)
        })
    }

    /// `f` on this thread's statement of `sql`, prepared on its connection the first time and
    /// held with it (one statement a connection: another `sql` replaces it). As for
    /// [`ThreadPool::with`], the call must leave no transaction open.
    pub fn with_statement<R>(
        self: &Arc<Self>,
        sql: &'static str,
        f: impl FnOnce(&mut Statement<'_>) -> R,
    ) -> Result<R, MiddlewareError> {
        self.on_this_thread(|held| {
            let p = held.statement(sql)?;
            let out = p.with_dependent_mut(|_, stmt| f(stmt));
            if !p.borrow_owner().is_autocommit() {
                // Its statement is finalized first: a transaction is ended on the plain
                // connection.
                closed_transaction(held.connection()?)?;
            }
            Ok(out)
        })
    }

    fn on_this_thread<R>(
        self: &Arc<Self>,
        f: impl FnOnce(&mut Held) -> Result<R, MiddlewareError>,
    ) -> Result<R, MiddlewareError> {
        HELD.try_with(|cell| {
            let mut list = cell.try_borrow_mut().map_err(|_| {
                MiddlewareError::Dispatch(
                    "this thread's connection is in use (a call made from inside another)".into(),
                )
            })?;
            let me = Arc::as_ptr(self);
            let i = match list.iter().position(|e| std::ptr::eq(e.pool.as_ptr(), me)) {
                Some(i) => i,
                None => {
                    // The connections of pools dropped since are closed before one more opens.
                    list.retain(|e| e.pool.strong_count() > 0);
                    let conn = (self.open)().map_err(|e| {
                        MiddlewareError::Pool(format!(
                            "this thread's connection did not open ({} opened before it, one per thread that used the pool: threads times databases can pass the open-file limit): {e}",
                            self.opened()
                        ))
                    })?;
                    self.opened.fetch_add(1, Ordering::Relaxed);
                    list.push(Entry {
                        pool: Arc::downgrade(self),
                        held: Held::Plain(conn),
                    });
                    list.len() - 1
                }
            };
            f(&mut list[i].held)
        })
        .map_err(|_| MiddlewareError::Dispatch("the thread is ending".into()))?
    }
}

/// An error (after a rollback) when `conn` is inside a transaction at the end of a call.
fn closed_transaction(conn: &Connection) -> Result<(), MiddlewareError> {
    if conn.is_autocommit() {
        return Ok(());
    }
    let rolled_back = match conn.execute_batch("ROLLBACK") {
        Ok(()) => "rolled back".to_string(),
        Err(e) => format!("its rollback failed too: {e}"),
    };
    Err(MiddlewareError::Dispatch(format!(
        "a call left a transaction open ({rolled_back}): on pool=thread the next call may run on another thread's connection, so a transaction must begin and end inside one call"
    )))
}

/// Connections this thread holds, of every pool (for tests).
#[cfg(test)]
fn held_here() -> usize {
    HELD.with(|cell| cell.borrow().len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memory_pool() -> Arc<ThreadPool> {
        ThreadPool::new(|| {
            let c = Connection::open_in_memory()?;
            c.execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1), (2), (3)")?;
            Ok(c)
        })
    }

    fn sum(c: &Connection) -> i64 {
        c.query_row("SELECT sum(x) FROM t", [], |r| r.get(0))
            .unwrap()
    }

    #[test]
    fn each_thread_opens_one_connection_and_keeps_it() {
        let p = memory_pool();
        p.with(|c| c.execute("INSERT INTO t VALUES (10)", []).unwrap())
            .unwrap();
        // The same thread: the same connection, with the row it added.
        assert_eq!(p.with(|c| sum(c)).unwrap(), 16);
        assert_eq!(p.opened(), 1);
        // Another thread: a connection of its own, without it.
        let q = p.clone();
        let there = std::thread::spawn(move || q.with(|c| sum(c)).unwrap())
            .join()
            .unwrap();
        assert_eq!(there, 6);
        assert_eq!(p.opened(), 2);
        assert_eq!(p.with(|c| sum(c)).unwrap(), 16, "still this thread's own");
    }

    #[test]
    fn the_statement_survives_between_calls_and_counts_as_prepared_once() {
        let p = memory_pool();
        let sql = "SELECT count(*) FROM t";
        // A statement's own counter of virtual machine steps grows over its uses; a statement
        // prepared anew would start again from 0.
        let scans = |st: &mut Statement<'_>| {
            st.query_row([], |r| r.get::<_, i64>(0)).unwrap();
            st.get_status(rusqlite::StatementStatus::RePrepare)
                + st.get_status(rusqlite::StatementStatus::VmStep)
        };
        let one = p.with_statement(sql, scans).unwrap();
        let two = p.with_statement(sql, scans).unwrap();
        let three = p.with_statement(sql, scans).unwrap();
        assert!(one > 0);
        assert_eq!(two, 2 * one, "the same statement, its counter added to");
        assert_eq!(three, 3 * one);
    }

    #[test]
    fn using_the_connection_otherwise_finalizes_the_statement_and_a_new_one_follows() {
        let p = memory_pool();
        let sql = "SELECT count(*) FROM t";
        let steps = |st: &mut Statement<'_>| {
            st.query_row([], |r| r.get::<_, i64>(0)).unwrap();
            st.get_status(rusqlite::StatementStatus::VmStep)
        };
        let once = p.with_statement(sql, steps).unwrap();
        assert_eq!(p.with_statement(sql, steps).unwrap(), 2 * once);
        // A schema change needs the connection to itself.
        p.with(|c| c.execute_batch("CREATE TABLE u(y)").unwrap())
            .unwrap();
        assert_eq!(p.with_statement(sql, steps).unwrap(), once, "prepared anew");
        // Another statement replaces the held one.
        let other = "SELECT count(*) FROM u";
        p.with_statement(other, |st| st.query_row([], |r| r.get::<_, i64>(0)))
            .unwrap()
            .unwrap();
        assert_eq!(p.with_statement(sql, steps).unwrap(), once, "prepared anew");
    }

    #[test]
    fn a_statement_that_does_not_prepare_is_an_error_and_the_connection_stays() {
        let p = memory_pool();
        let err = p
            .with_statement("SELECT nope FROM t", |_| ())
            .expect_err("no such column");
        assert!(err.to_string().contains("no such column"), "{err}");
        assert_eq!(
            p.with(|c| sum(c)).unwrap(),
            6,
            "the same connection, still usable"
        );
        assert_eq!(p.opened(), 1);
    }

    #[test]
    fn a_connection_that_does_not_open_is_an_error_naming_why() {
        let p = ThreadPool::new(|| Connection::open("/nonexistent-dir/benchscope/x.db"));
        let err = p.with(|_| ()).expect_err("cannot open");
        assert!(err.to_string().contains("unable to open"), "{err}");
        assert!(err.to_string().contains("0 opened before it"), "{err}");
        assert_eq!(p.opened(), 0);
    }

    #[test]
    fn a_transaction_left_open_by_a_call_is_rolled_back_and_an_error() {
        let p = memory_pool();
        let err = p
            .with(|c| {
                c.execute_batch("BEGIN; INSERT INTO t VALUES (100)")
                    .unwrap()
            })
            .expect_err("left open");
        assert!(err.to_string().contains("rolled back"), "{err}");
        assert!(
            err.to_string().contains("begin and end inside one call"),
            "{err}"
        );
        // The insert is gone and the connection is out of the transaction.
        assert_eq!(p.with(|c| (c.is_autocommit(), sum(c))).unwrap(), (true, 6));
        // The same through a held statement.
        let err = p
            .with_statement("BEGIN", |st| st.raw_execute().unwrap())
            .expect_err("left open");
        assert!(err.to_string().contains("rolled back"), "{err}");
        assert!(p.with(|c| c.is_autocommit()).unwrap());
        // A transaction begun and ended in one call is what a call may do.
        p.with(|c| {
            c.execute_batch("BEGIN; INSERT INTO t VALUES (100); COMMIT")
                .unwrap()
        })
        .unwrap();
        assert_eq!(p.with(|c| sum(c)).unwrap(), 106);
    }

    #[test]
    fn a_call_from_inside_another_is_refused_not_a_panic() {
        let p = memory_pool();
        let inner = p.with(|_| p.with(|_| ()).expect_err("reentered")).unwrap();
        assert!(inner.to_string().contains("in use"), "{inner}");
    }

    #[test]
    fn a_dropped_pools_connections_close_when_the_thread_opens_another() {
        std::thread::spawn(|| {
            let a = memory_pool();
            a.with(|_| ()).unwrap();
            let b = memory_pool();
            b.with(|_| ()).unwrap();
            assert_eq!(held_here(), 2);
            drop(a);
            assert_eq!(
                held_here(),
                2,
                "nothing closes until the thread opens one more"
            );
            let c = memory_pool();
            c.with(|_| ()).unwrap();
            assert_eq!(held_here(), 2, "a's connection closed, c's opened");
            // b's connection is still b's.
            assert_eq!(b.with(|c| sum(c)).unwrap(), 6);
            assert_eq!(b.opened(), 1);
        })
        .join()
        .unwrap();
    }
}
