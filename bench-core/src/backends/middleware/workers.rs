//! Connections owned by dedicated threads, pooled with deadpool. Two hand-offs:
//! - `Channel`: std mpsc to the thread, tokio oneshot back (the tokio-rusqlite design);
//! - `Spin`: a one-slot mailbox; the thread spins for a while before parking, and the caller
//!   spins for a while before registering its waker. When work arrives back to back, neither
//!   side goes to sleep, so no OS wake-up sits on the path of a query.

use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::task::Poll;
use std::thread::{self, JoinHandle, Thread};
use std::time::{Duration, Instant};

use deadpool::managed::{self, Metrics, RecycleError, RecycleResult};
use futures_util::task::AtomicWaker;
use rusqlite::Connection;

use crate::settings::SqliteSettings;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandOff {
    Channel,
    Spin { spin: Duration },
}

type Reply = Box<dyn Any + Send>;
type Job = Box<dyn FnOnce(&mut Connection) -> Reply + Send>;
/// A job for a channel worker: it sends its own reply.
type ChannelJob = Box<dyn FnOnce(&mut Connection) + Send>;

#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    #[error("worker thread is gone")]
    Gone,
    #[error("the job panicked on the worker thread")]
    Panicked,
    #[error("opening the worker's connection: {0}")]
    Open(String),
}

const EMPTY: u8 = 0;
const JOB: u8 = 1;
const DONE: u8 = 2;
const SHUTDOWN: u8 = 3;

struct Mailbox {
    state: AtomicU8,
    job: Mutex<Option<Job>>,
    reply: Mutex<Option<Result<Reply, WorkerError>>>,
    worker_parked: AtomicBool,
    waker: AtomicWaker,
    spin: Duration,
}

/// Spins until `ready()` or until `budget` has passed; reads the clock every 64 spins.
#[inline]
fn spin_until(budget: Duration, ready: impl Fn() -> bool) -> bool {
    if ready() {
        return true;
    }
    if budget.is_zero() {
        return false;
    }
    let start = Instant::now();
    loop {
        for _ in 0..64 {
            std::hint::spin_loop();
            if ready() {
                return true;
            }
        }
        if start.elapsed() >= budget {
            return false;
        }
    }
}

fn spin_worker(mut conn: Connection, mb: Arc<Mailbox>) {
    loop {
        let has_work = || matches!(mb.state.load(Ordering::Acquire), JOB | SHUTDOWN);
        if !spin_until(mb.spin, has_work) {
            loop {
                mb.worker_parked.store(true, Ordering::SeqCst);
                if matches!(mb.state.load(Ordering::SeqCst), JOB | SHUTDOWN) {
                    mb.worker_parked.store(false, Ordering::SeqCst);
                    break;
                }
                thread::park();
                mb.worker_parked.store(false, Ordering::SeqCst);
                if has_work() {
                    break;
                }
            }
        }
        if mb.state.load(Ordering::Acquire) == SHUTDOWN {
            return;
        }
        let job = mb.job.lock().expect("mailbox lock").take();
        let reply = match job {
            Some(job) => std::panic::catch_unwind(AssertUnwindSafe(|| job(&mut conn)))
                .map_err(|_| WorkerError::Panicked),
            None => Err(WorkerError::Gone),
        };
        *mb.reply.lock().expect("mailbox lock") = Some(reply);
        mb.state.store(DONE, Ordering::Release);
        mb.waker.wake();
    }
}

enum Link {
    Channel(mpsc::Sender<ChannelJob>),
    Spin(Arc<Mailbox>, Thread),
}

/// A connection owned by its own thread.
pub struct Worker {
    link: Link,
    thread: JoinHandle<()>,
}

impl Worker {
    pub fn spawn(
        path: PathBuf,
        hand_off: HandOff,
        settings: &SqliteSettings,
    ) -> Result<Worker, WorkerError> {
        let conn = super::super::raw::open(&path, settings)
            .map_err(|e| WorkerError::Open(e.to_string()))?;
        match hand_off {
            HandOff::Channel => {
                let (tx, rx) = mpsc::channel::<ChannelJob>();
                let thread = thread::Builder::new()
                    .name("sqlite-worker".into())
                    .spawn(move || {
                        let mut conn = conn;
                        for job in rx {
                            job(&mut conn);
                        }
                    })
                    .expect("spawn worker thread");
                Ok(Worker {
                    link: Link::Channel(tx),
                    thread,
                })
            }
            HandOff::Spin { spin } => {
                let mb = Arc::new(Mailbox {
                    state: AtomicU8::new(EMPTY),
                    job: Mutex::new(None),
                    reply: Mutex::new(None),
                    worker_parked: AtomicBool::new(false),
                    waker: AtomicWaker::new(),
                    spin,
                });
                let mb2 = mb.clone();
                let thread = thread::Builder::new()
                    .name("sqlite-spin-worker".into())
                    .spawn(move || spin_worker(conn, mb2))
                    .expect("spawn worker thread");
                let t = thread.thread().clone();
                Ok(Worker {
                    link: Link::Spin(mb, t),
                    thread,
                })
            }
        }
    }

    pub fn is_alive(&self) -> bool {
        !self.thread.is_finished()
    }

    /// Runs `f` on the worker's thread with its connection and returns the answer.
    /// Takes `&mut self`: one caller at a time, which the pool guarantees.
    pub async fn call<R, F>(&mut self, f: F) -> Result<R, WorkerError>
    where
        R: Send + 'static,
        F: FnOnce(&mut Connection) -> R + Send + 'static,
    {
        match &self.link {
            Link::Channel(tx) => {
                let (reply_tx, reply_rx) = tokio::sync::oneshot::channel();
                tx.send(Box::new(move |conn: &mut Connection| {
                    let out = std::panic::catch_unwind(AssertUnwindSafe(|| f(conn)));
                    let _ = reply_tx.send(out);
                }))
                .map_err(|_| WorkerError::Gone)?;
                match reply_rx.await {
                    Ok(Ok(r)) => Ok(r),
                    Ok(Err(_)) => Err(WorkerError::Panicked),
                    Err(_) => Err(WorkerError::Gone),
                }
            }
            Link::Spin(mb, thread) => {
                *mb.job.lock().expect("mailbox lock") =
                    Some(Box::new(move |c: &mut Connection| Box::new(f(c)) as Reply));
                mb.state.store(JOB, Ordering::SeqCst);
                if mb.worker_parked.load(Ordering::SeqCst) {
                    thread.unpark();
                }
                let mut spun = false;
                std::future::poll_fn(|cx| {
                    let done = || mb.state.load(Ordering::Acquire) == DONE;
                    if !spun {
                        spun = true;
                        if spin_until(mb.spin, done) {
                            return Poll::Ready(());
                        }
                    }
                    mb.waker.register(cx.waker());
                    if done() {
                        Poll::Ready(())
                    } else {
                        Poll::Pending
                    }
                })
                .await;
                let reply = mb.reply.lock().expect("mailbox lock").take();
                mb.state.store(EMPTY, Ordering::Release);
                match reply {
                    Some(Ok(r)) => Ok(*r.downcast::<R>().expect("reply of the job's type")),
                    Some(Err(e)) => Err(e),
                    None => Err(WorkerError::Gone),
                }
            }
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        if let Link::Spin(mb, thread) = &self.link {
            mb.state.store(SHUTDOWN, Ordering::SeqCst);
            thread.unpark();
        }
        // A channel worker ends when its sender (in `link`) is dropped.
    }
}

/// deadpool manager of worker threads. Recycling only checks the thread is alive: no SQL.
pub struct WorkerManager {
    pub path: PathBuf,
    pub hand_off: HandOff,
    pub settings: SqliteSettings,
}

impl managed::Manager for WorkerManager {
    type Type = Worker;
    type Error = WorkerError;

    async fn create(&self) -> Result<Worker, WorkerError> {
        Worker::spawn(self.path.clone(), self.hand_off, &self.settings)
    }

    async fn recycle(&self, w: &mut Worker, _: &Metrics) -> RecycleResult<WorkerError> {
        if w.is_alive() {
            Ok(())
        } else {
            Err(RecycleError::message("worker thread exited"))
        }
    }
}

pub type WorkerPool = managed::Pool<WorkerManager>;
pub type WorkerObject = managed::Object<WorkerManager>;

pub fn pool(path: PathBuf, hand_off: HandOff, size: usize, settings: SqliteSettings) -> WorkerPool {
    managed::Pool::builder(WorkerManager {
        path,
        hand_off,
        settings,
    })
    .max_size(size)
    .build()
    .expect("pool without timeouts needs no runtime")
}
