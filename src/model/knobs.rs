//! The knobs panel: step a knob, or type its value; a change while a run is going restarts
//! it with the new values after a short pause.

use std::time::Instant;

use bench_core::catalog::Target;
use bench_core::knobs::{self, KnobKind, KnobSpec, KnobValue, Knobs};
use bench_core::service::args::KnobArgs;

use super::keys::{Cmd, Key};
use super::panels::MAX_SWEEP_RUNS;
use super::state::{DEBOUNCE, Effect, State, move_cursor};

pub(super) fn on_cmd(state: &mut State, cmd: Cmd, now: Instant) -> Vec<Effect> {
    match cmd {
        Cmd::Up | Cmd::Down => move_cursor(
            &mut state.knobs.cursor,
            state.target.knobs.len(),
            cmd == Cmd::Down,
        ),
        Cmd::Increase | Cmd::Decrease => {
            let spec = state.target.knobs[state.knobs.cursor];
            let old = state
                .knobs
                .values
                .get(spec.name)
                .cloned()
                .unwrap_or_else(|| spec.default_value());
            let new = spec.stepped(&old, cmd == Cmd::Increase);
            if new == old {
                state.knobs.error = Some(format!(
                    "{} stays {old} (allowed: {})",
                    spec.name,
                    spec.allowed()
                ));
            } else {
                state.knobs.error = None;
                return knob_changed(state, spec.name, new, now);
            }
        }
        Cmd::Edit => {
            state.knobs.editing = Some(String::new());
            state.knobs.error = None;
        }
        Cmd::Sweep => {
            let spec = state.target.knobs[state.knobs.cursor];
            state.knobs.sweep = Some(suggested_sweep(&spec, state.knobs.values.get(spec.name)));
            state.knobs.error = None;
        }
        _ => {}
    }
    vec![]
}

/// A line being typed: what a key did to it.
pub(super) enum Typed {
    /// Enter: the text to act on.
    Submitted(String),
    /// Esc: the line is gone.
    Cancelled,
    /// A character added or removed, or a key the line ignores.
    Editing,
}

/// One key on a line being typed (at most `max` bytes); esc clears the panel's error too.
pub(super) fn type_key(
    line: &mut Option<String>,
    error: &mut Option<String>,
    key: Key,
    max: usize,
) -> Typed {
    let Some(buf) = line.as_mut() else {
        return Typed::Cancelled;
    };
    match key {
        Key::Esc => {
            *line = None;
            *error = None;
            Typed::Cancelled
        }
        Key::Backspace => {
            buf.pop();
            Typed::Editing
        }
        Key::Char(c) if buf.len() < max => {
            buf.push(c);
            Typed::Editing
        }
        Key::Enter => Typed::Submitted(buf.clone()),
        _ => Typed::Editing,
    }
}

/// Keys while a value is being typed.
pub(super) fn on_edit_key(state: &mut State, key: Key, now: Instant) -> Vec<Effect> {
    let k = &mut state.knobs;
    let Typed::Submitted(text) = type_key(&mut k.editing, &mut k.error, key, 24) else {
        return vec![];
    };
    let spec = state.target.knobs[state.knobs.cursor];
    match spec.parse(&text) {
        Ok(v) => {
            state.knobs.editing = None;
            state.knobs.error = None;
            if state.knobs.values.get(spec.name) != Some(&v) {
                return knob_changed(state, spec.name, v, now);
            }
        }
        Err(e) => state.knobs.error = Some(e.to_string()),
    }
    vec![]
}

/// Values offered for a sweep: every choice of a word knob; a count and two steps either side.
fn suggested_sweep(spec: &KnobSpec, current: Option<&KnobValue>) -> String {
    if let KnobKind::Choice { choices, .. } = spec.kind {
        return choices.join(",");
    }
    let v = current.cloned().unwrap_or_else(|| spec.default_value());
    let (d1, u1) = (spec.stepped(&v, false), spec.stepped(&v, true));
    let mut values = vec![
        spec.stepped(&d1, false),
        d1,
        v,
        u1.clone(),
        spec.stepped(&u1, true),
    ];
    values.dedup();
    values
        .iter()
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// The knobs of each run a sweep asks for: `text` holds the values of `spec` (comma-separated),
/// then optionally `name=a,b` of a second knob, which makes a matrix. Every value is checked
/// as a typed one is; the other knobs keep their values.
pub fn sweep_runs(
    target: &Target,
    spec: &KnobSpec,
    text: &str,
    base: &Knobs,
) -> Result<(Vec<&'static str>, Vec<Knobs>), String> {
    let mut parts = text.split_whitespace();
    let first = parts.next().ok_or_else(|| {
        format!(
            "type the values of {} for the sweep, comma-separated",
            spec.name
        )
    })?;
    let mut knob = vec![format!("{}={first}", spec.name)];
    knob.extend(parts.map(String::from));
    let args = KnobArgs {
        knob,
        ..Default::default()
    };
    let sweep = args.sweep(target).map_err(|e| e.to_string())?;
    if !sweep.knobs.contains(&spec.name) {
        return Err(format!(
            "a sweep of {} needs at least two values, comma-separated (got {first:?})",
            spec.name
        ));
    }
    if sweep.variants.len() > MAX_SWEEP_RUNS {
        return Err(format!(
            "{} runs is more than one sweep queues (allowed: up to {MAX_SWEEP_RUNS})",
            sweep.variants.len()
        ));
    }
    let mut runs = Vec::new();
    for v in &sweep.variants {
        let mut k = base.clone();
        for (name, value) in v.overrides().map_err(|e| e.to_string())? {
            let s = knobs::find(&target.knobs, &name).map_err(|e| e.to_string())?;
            k.set(s.name, s.parse(&value).map_err(|e| e.to_string())?);
        }
        runs.push(k);
    }
    Ok((sweep.knobs, runs))
}

/// Keys while the values of a sweep are being typed.
pub(super) fn on_sweep_key(state: &mut State, key: Key, now: Instant) -> Vec<Effect> {
    let k = &mut state.knobs;
    let Typed::Submitted(text) = type_key(&mut k.sweep, &mut k.error, key, 120) else {
        return vec![];
    };
    let spec = state.target.knobs[state.knobs.cursor];
    let (varied, runs) = match sweep_runs(state.target, &spec, &text, &state.knobs.values) {
        Ok(r) => r,
        Err(e) => {
            state.knobs.error = Some(e);
            return vec![];
        }
    };
    if state.refuse_if_full(runs.len()) {
        return vec![];
    }
    state.knobs.sweep = None;
    state.knobs.error = None;
    let sweep = super::state::PendingSweep {
        benches: state.selected_benches(),
        queued: format!(
            "sweep of {}: {} runs queued ({text})",
            varied.join(" x "),
            runs.len()
        ),
        runs,
    };
    state.queue_sweep(sweep, now)
}

fn knob_changed(state: &mut State, name: &str, value: KnobValue, now: Instant) -> Vec<Effect> {
    let shown = value.to_string();
    state.knobs.values.set(name, value);
    if state.active_run().is_some() {
        state.restart_at = Some(now + DEBOUNCE);
        state.set_status(
            format!("{name}={shown}: the running benches restart with it"),
            false,
        );
    } else {
        state.set_status(format!("{name}={shown}"), false);
    }
    vec![]
}
