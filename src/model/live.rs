//! The live panel: the running run's benches, one selected for the chart; cancel.

use std::time::Instant;

use super::keys::Cmd;
use super::state::{Effect, State, move_cursor};

pub(super) fn on_cmd(state: &mut State, cmd: Cmd, now: Instant) -> Vec<Effect> {
    match cmd {
        Cmd::Up | Cmd::Down => {
            let n = state
                .live_bench()
                .map(|(r, _)| r.benches.len())
                .unwrap_or(0);
            move_cursor(&mut state.live.row, n, cmd == Cmd::Down);
        }
        Cmd::Cancel => return state.cancel_running(now),
        Cmd::Histogram => {
            let picked = state
                .live_bench()
                .map(|(r, b)| ((r.id.clone(), r.seq), b.to_string()));
            let (run, bench) = picked.unzip();
            state.show_histogram(run, bench);
        }
        _ => {}
    }
    vec![]
}
