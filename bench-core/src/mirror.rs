//! A bench-core workload served by a harness crate for its own subjects. bench-core makes the
//! run's parameters (the same for every harness, so every harness measures the same work) and
//! the runtime, refuses a bench of another harness's subject, and skips what cannot run here
//! (a PostgreSQL bench without a URL, a setting a pool cannot share); the harness writes only
//! how one of its benches runs.

use crate::BenchError;
use crate::catalog::{BenchSpec, CatalogError, Shipped, Subject, Target};
use crate::measure::Bench;
use crate::protocol::Event;
use crate::settings::SqliteSettings;
use crate::workload::{RunContext, Session, Workload};

/// What a workload's benches share for one run, made the same way in every harness.
pub trait RunParams: Sized {
    fn new(run: &RunContext<'_>) -> Result<Self, BenchError>;
    /// Operations in one pass of every bench.
    fn ops(&self) -> u64;
    /// The SQLite settings asked for.
    fn settings(&self) -> &SqliteSettings;
    /// The PostgreSQL server's URL, where the workload has PostgreSQL benches.
    fn postgres_url(&self) -> Option<&crate::secret::PgUrl> {
        None
    }
    /// Why `bench` cannot run with these parameters (a knob's value or a case its backend
    /// does not have), if it cannot.
    fn skip(&self, _bench: &BenchSpec) -> Option<String> {
        None
    }
}

/// One workload as a harness serves it.
pub trait Mirror: Sync {
    type Params: RunParams;
    /// How a refused bench is described: "not a bench of <this harness>".
    const REFUSED: &'static str;
    fn target(&self) -> &'static Target;
    /// Whether `subject` is one this harness runs.
    fn serves(&self, subject: Subject) -> bool;
    /// Connections a bench may hold at once (a setting one connection cannot share skips).
    fn connections(&self) -> usize {
        1
    }
    /// One of its benches, ready to measure.
    fn bench<'s>(
        &'s self,
        on: &'s On<Self::Params>,
        spec: &BenchSpec,
    ) -> Result<Bench<'s>, BenchError>;
}

/// A run's parameters and the runtime a harness's benches run on.
pub struct On<P> {
    pub p: P,
    pub rt: tokio::runtime::Runtime,
}

/// The `Workload` a harness registers for a `Mirror`.
pub struct Mirrored<M>(pub M);

impl<M: Mirror> Workload for Mirrored<M> {
    fn spec(&self) -> &'static Target {
        self.0.target()
    }

    fn open<'a>(
        &'a self,
        run: &'a RunContext<'a>,
        _emit: &mut dyn FnMut(Event),
    ) -> Result<Box<dyn Session + 'a>, BenchError> {
        Ok(Box::new(MirrorSession {
            m: &self.0,
            on: On {
                p: M::Params::new(run)?,
                rt: crate::measure::drive::runtime(None)?,
            },
        }))
    }
}

struct MirrorSession<'a, M: Mirror> {
    m: &'a M,
    on: On<M::Params>,
}

impl<M: Mirror> Session for MirrorSession<'_, M> {
    fn ops(&self) -> u64 {
        self.on.p.ops()
    }

    fn skip(&self, spec: &BenchSpec) -> Option<String> {
        postgres_skip(spec.subject, self.on.p.postgres_url())
            .or_else(|| self.on.p.skip(spec))
            .or_else(|| {
                crate::settings::skip_reason(
                    spec.subject,
                    self.m.connections(),
                    self.on.p.settings(),
                )
            })
    }

    fn bench(&self, spec: &BenchSpec) -> Result<Bench<'_>, BenchError> {
        if !self.m.serves(spec.subject) {
            return Err(CatalogError::no_implementation(self.m.target(), spec, M::REFUSED).into());
        }
        self.m.bench(&self.on, spec)
    }
}

/// Why a bench on PostgreSQL cannot run: no server named.
pub fn postgres_skip(subject: Subject, url: Option<&crate::secret::PgUrl>) -> Option<String> {
    let on_postgres = matches!(
        subject,
        Subject::SqlxPostgres | Subject::Postgres | Subject::Crate(Shipped::SqlMiddlewarePostgres)
    );
    (on_postgres && url.is_none()).then(|| NO_POSTGRES.to_string())
}

/// Why a bench on PostgreSQL cannot run without a URL.
pub const NO_POSTGRES: &str = "no PostgreSQL URL (set --postgres-url or BENCHSCOPE_POSTGRES_URL)";
