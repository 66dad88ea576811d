//! benchscope's core: datasets, workloads, backends, trace, statistics and the event protocol.
//! No terminal UI here. Everything that links SQLite sits behind the `sqlite` / `middleware`
//! features so that harness-sqlx can use the protocol, knobs, stats and dataset spec alone.

pub mod backends;
pub mod bulk;
pub mod catalog;
pub mod dataset;
pub mod drive;
pub mod env;
pub mod knobs;
pub mod measure;
pub mod protocol;
pub mod results;
pub mod runner;
pub mod stats;
pub mod trace;
pub mod workloads;
