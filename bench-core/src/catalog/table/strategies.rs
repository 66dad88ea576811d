//! The subject table's dispatch strategies: one row each, in catalog order.

use super::StrategyDesc;
use super::serves::*;
use crate::catalog::subject::{Pool, Strategy};

/// Every strategy, in catalog order.
pub static STRATEGIES: [StrategyDesc; 7] = [
    StrategyDesc {
        id: Strategy::Inline,
        name: "inline",
        about: "runs the query on the async runtime's own thread (blocks it)",
        pool: Pool::Deadpool,
        serves: &[
            (LOOKUP, "middleware path, query run on the runtime thread"),
            (
                MULTITHREAD,
                "middleware path per task, run on the runtime threads",
            ),
            (
                CONTENTION,
                "direct blocking: each task uses its Mutex'd connection on the runtime's own thread",
            ),
        ],
    },
    StrategyDesc {
        id: Strategy::SpawnBlocking,
        name: "spawn_blocking",
        about: "tokio::task::spawn_blocking with the pooled connection moved in",
        pool: Pool::Deadpool,
        serves: &[
            (LOOKUP, "middleware path through spawn_blocking"),
            (
                MULTITHREAD,
                "middleware path per task through spawn_blocking",
            ),
            (CONTENTION, "each call through tokio's spawn_blocking"),
        ],
    },
    StrategyDesc {
        id: Strategy::Interact,
        name: "interact",
        about: "deadpool-sqlite Object::interact",
        pool: Pool::Deadpool,
        serves: &[
            (LOOKUP, "middleware path through deadpool-sqlite interact"),
            (MULTITHREAD, "middleware path per task through interact"),
            (CONTENTION, "deadpool-sqlite interact (its blocking pool)"),
        ],
    },
    StrategyDesc {
        id: Strategy::Worker,
        name: "worker",
        about: "a dedicated thread per connection; std mpsc in, tokio oneshot back",
        pool: Pool::Workers,
        serves: &[
            (LOOKUP, "middleware path through a dedicated worker thread"),
            (
                MULTITHREAD,
                "middleware path per task through worker threads",
            ),
            (
                CONTENTION,
                "a dedicated thread per connection (the tokio-rusqlite pattern)",
            ),
        ],
    },
    StrategyDesc {
        id: Strategy::Spin,
        name: "spin",
        about: "a dedicated thread per connection; one-slot hand-off, both sides spin then park",
        pool: Pool::Workers,
        serves: &[
            (
                LOOKUP,
                "middleware path through a spin-then-park worker thread",
            ),
            (
                MULTITHREAD,
                "middleware path per task through spin-then-park workers",
            ),
            (
                CONTENTION,
                "a dedicated thread per connection, spin-then-park hand-off",
            ),
        ],
    },
    StrategyDesc {
        id: Strategy::BlockInPlace,
        name: "block_in_place",
        about: "tokio::task::block_in_place on the runtime thread (its other tasks move away first)",
        pool: Pool::Deadpool,
        serves: &[
            (
                LOOKUP,
                "middleware path through block_in_place on the runtime thread",
            ),
            (
                MULTITHREAD,
                "middleware path per task through block_in_place",
            ),
            (CONTENTION, "block_in_place on the runtime thread"),
        ],
    },
    StrategyDesc {
        id: Strategy::WaitAside,
        name: "wait_aside",
        about: "the middleware's own statements on the runtime thread, only their waits (SQLite's busy wait, a blocking checkout, a taken lock) in tokio::task::block_in_place; a caller's closure in block_in_place whole",
        pool: Pool::Deadpool,
        serves: &[
            (
                LOOKUP,
                "middleware path on the runtime thread, waits in block_in_place",
            ),
            (
                MULTITHREAD,
                "middleware path per task on the runtime threads, waits in block_in_place",
            ),
            (
                CONTENTION,
                "reads in place on the runtime thread, their lock waits in block_in_place; the writer's closure in block_in_place",
            ),
        ],
    },
];

impl Strategy {
    /// Everything the catalog says of it: its row of the subject table.
    pub fn desc(self) -> &'static StrategyDesc {
        STRATEGIES
            .iter()
            .find(|d| d.id == self)
            .expect("every strategy has a row in the subject table")
    }

    pub fn name(self) -> &'static str {
        self.desc().name
    }

    pub fn about(self) -> &'static str {
        self.desc().about
    }

    /// How it runs `workload`, in that workload's words, for the workloads that describe
    /// each strategy in their own (a row without them fails the catalog's first build, which
    /// every test makes).
    pub fn how(self, workload: &str) -> &'static str {
        self.desc()
            .serves
            .iter()
            .find(|(w, _)| *w == workload)
            .map(|(_, how)| *how)
            .unwrap_or_else(|| {
                panic!(
                    "the subject table says nothing of how {} runs {workload}",
                    self.name()
                )
            })
    }

    /// Whether the connection lives on a dedicated thread (worker pool) or in deadpool-sqlite.
    pub fn uses_workers(self) -> bool {
        self.pool() == Pool::Workers
    }

    /// The pool behind the strategy.
    pub fn pool(self) -> Pool {
        self.desc().pool
    }
}
