//! benchscope's core, without a terminal UI:
//! - `catalog`, `knobs`: the vocabulary of targets, benches (typed identity) and knobs;
//! - `workload`: the shape every target has, and the registry a runner finds it in;
//! - `mirror`: a workload served by a harness crate for its own subjects, on bench-core's parameters;
//! - `workloads/`: one module per target (catalog entry + bench-core's implementation);
//! - `measure/`: the sampling loop, statistics, per-phase trace and shared drivers;
//! - `protocol/`: the event stream, the run environment, results folded from a stream;
//! - `compare`: ratios and verdicts, the one comparison model every view uses;
//! - `dataset`: the shared dataset's spec, cache and checks;
//! - `settings`: SQLite's own settings as knobs, applied and read back on every connection;
//! - `backends/`: what is measured (raw rusqlite, the middleware path, turso);
//! - `profile`: a sampled profile's breakdown by layer (the classification rules);
//! - `redact`: PostgreSQL passwords found in every form and scrubbed from text; `secret`: a
//!   PostgreSQL URL as a type that never shows its password;
//! - `jail`: SQLite's VFS confined to a folder or a file (no SQLite linked here);
//! - `opener`: the one way a file from outside is read (regular files only, bounded, walks
//!   that follow no link); `scratch`: the folders of the cache a process owns;
//! - `vars`: settings of the environment, one parser per setting, a flag over its variable;
//! - `text`: strings from data as a type whose only ways out are escapes per sink;
//! - `service/`: the runner service (arguments, plan, the event stream around a harness).
//!
//! Everything that links SQLite sits behind the `sqlite` / `middleware` / `turso` features so
//! that harness-sqlx can use the rest alone.

/// Whether this build runs the turso benches (bench-core's `turso` feature). benchscope's own
/// release build leaves it out (turso takes half of a cold build); its core runner then hands
/// a run that has turso benches to bench-core's `bench-runner`, built with it.
pub const TURSO: bool = cfg!(feature = "turso");

// The shared rusqlite and sql-middleware code (on_rusqlite/, on_sql_middleware.rs) names
// bench-core's items the way a harness does.
extern crate self as bench_core;

pub mod backends;
pub mod baselines;
pub mod catalog;
pub mod compare;
pub mod dataset;
pub mod error;
pub mod format;
pub mod jail;
pub mod knobs;
pub mod matrix;
pub mod measure;
pub mod mirror;
#[cfg(feature = "sqlite")]
pub mod on_rusqlite;
#[cfg(feature = "crates")]
pub mod on_sql_middleware;
pub mod opener;
pub mod profile;
pub mod protocol;
pub mod redact;
pub mod scratch;
pub mod script;
pub mod secret;
pub mod sections;
pub mod service;
pub mod settings;
pub mod testing;
pub mod text;
pub mod units;
pub mod vars;
pub mod workload;
pub mod workloads;

pub use error::BenchError;
