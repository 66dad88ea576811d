//! The subject table: every crate as it ships and every dispatch strategy of the middleware
//! path, each declared once with everything the catalog says of it (its name, the crate and
//! harness behind it, what it is, and the workloads it serves with how it runs each). The
//! workloads' per-crate and per-strategy benches, their descriptions and the catalog are made
//! from it; a new crate is one [`CrateDesc`] here plus its implementation.

use super::subject::{Harness, Pool, Shipped, Strategy};
use crate::measure::trace::Phase;

/// The crates' rows.
pub mod crates;
/// The strategies' rows.
pub mod strategies;

/// The workloads a subject can serve, by the name their target goes by.
pub mod serves {
    pub const LOOKUP: &str = "single_row_lookup";
    pub const MULTITHREAD: &str = "multithread_pool_checkout";
    pub const BULK: &str = "bulk_insert";
    pub const CONTENTION: &str = "async_contention";
    pub const CRUD: &str = "crud_overhead";
    pub const KEY_VALUE: &str = "key_value";
    pub const SCRIPT: &str = "script";
}

/// A crate people choose between, as it ships, used the way its README shows.
#[derive(Debug)]
pub struct CrateDesc {
    pub id: Shipped,
    /// The bench name's stem (`r2d2_sqlite/spawn_blocking`).
    pub name: &'static str,
    /// The crate as named in Cargo.lock; its version is read from the lockfile of the workspace
    /// its harness builds in.
    pub krate: &'static str,
    /// Another crate under it whose version is shown beside its own (the engine), if any.
    pub engine: Option<&'static str>,
    /// The runner that links it.
    pub harness: Harness,
    /// How it reaches the connection.
    pub about: &'static str,
    /// Its pool as a checkout bench names it (`crate_pool_checkout/{pool}`,
    /// `{pool}/pool_acquire`), where it has one to check out of.
    pub pool: Option<&'static str>,
    /// The workloads it serves, in no particular order, each with how it runs there.
    pub serves: &'static [Serve],
}

/// How a subject runs one workload.
#[derive(Debug)]
pub struct Serve {
    pub workload: &'static str,
    /// What one operation is, where the subject's own words say it (else the workload's).
    pub op: Option<&'static str>,
    /// How the subject runs the operation (else its own `about`).
    pub how: Option<&'static str>,
    /// Its further benches in this workload, right after its whole one.
    pub more: &'static [More],
    /// Phases of its path no bench measures apart, and why.
    pub hidden: &'static [(Phase, &'static str)],
}

/// A further bench of a subject in a workload: a phase micro-bench, or the whole operation
/// another way (a case of the workload's own).
#[derive(Debug)]
pub struct More {
    pub name: &'static str,
    /// The phase a micro-bench isolates; `None` for a whole bench.
    pub phase: Option<Phase>,
    pub op: &'static str,
    /// A whole bench's description.
    pub about: &'static str,
    /// The workload's case it runs (0: the default).
    pub variant: u16,
}

pub(crate) const fn serve(workload: &'static str, how: &'static str) -> Serve {
    Serve {
        workload,
        op: None,
        how: Some(how),
        more: &[],
        hidden: &[],
    }
}

/// Serves `workload` as its own `about` says.
pub(crate) const fn serve_as_about(workload: &'static str) -> Serve {
    Serve {
        workload,
        op: None,
        how: None,
        more: &[],
        hidden: &[],
    }
}

pub(crate) const fn micro(name: &'static str, phase: Phase, op: &'static str) -> More {
    More {
        name,
        phase: Some(phase),
        op,
        about: op,
        variant: 0,
    }
}

/// The case (`variant`) of `sql-middleware/prepared` in single_row_lookup: the crate's
/// prepared-statement path beside its query builder.
pub const LOOKUP_PREPARED: u16 = 1;

/// A dispatch strategy of the middleware path: how a query gets from an async task to the
/// thread that owns the connection.
#[derive(Debug)]
pub struct StrategyDesc {
    pub id: Strategy,
    pub name: &'static str,
    pub about: &'static str,
    /// The pool it checks out of when the `pool` knob says `auto`.
    pub pool: Pool,
    /// How it runs each workload whose benches say it in their own words.
    pub serves: &'static [(&'static str, &'static str)],
}

impl CrateDesc {
    /// How it serves `workload`, if it does.
    pub fn serving(&self, workload: &str) -> Option<&'static Serve> {
        self.serves.iter().find(|s| s.workload == workload)
    }
}

impl Serve {
    /// The bench's description: how the crate runs the operation, else what the crate is.
    pub fn about(&self, c: &CrateDesc) -> &'static str {
        self.how.unwrap_or(c.about)
    }
}
