//! The explorer's state and the one place it changes: `update(&mut State, Action, now)`.
//! No I/O and no drawing here: effects are returned for the main loop to carry out.
//!
//! The state is grouped by panel (`catalog`, `knobs`, `live`, `compare`), each with its own
//! keys handled in its own file; what is shared (the target, the runs and their queue, the
//! status line, overlays) lives here.

mod catalog;
mod compare;
pub mod keys;
mod knobs;
mod live;
mod panels;
mod queue;
mod runs;
pub mod script;
mod state;
mod update;

pub use panels::*;
pub use runs::{RunState, RunView};
pub use state::*;
pub use update::update;

#[cfg(test)]
mod tests;
