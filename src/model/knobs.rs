//! The knobs panel: step a knob, or type its value; a change while a run is going restarts
//! it with the new values after a short pause.

use std::time::Instant;

use bench_core::catalog::Target;
use bench_core::knobs::{self, KnobValue, Knobs};

use super::keys::{Cmd, Key};
use super::{DEBOUNCE, Effect, State, move_cursor};

#[derive(Debug, Clone)]
pub struct KnobsPanel {
    /// The values the next run gets.
    pub values: Knobs,
    pub cursor: usize,
    /// The text being typed into the knob under the cursor.
    pub editing: Option<String>,
    /// Why the last value was refused.
    pub error: Option<String>,
}

impl KnobsPanel {
    pub fn new(values: Knobs) -> KnobsPanel {
        KnobsPanel {
            values,
            cursor: 0,
            editing: None,
            error: None,
        }
    }

    /// Takes on another target's knobs, keeping the values of knobs of the same name.
    pub fn switch_to(&mut self, next: &Target) {
        let mut values =
            knobs::resolve(&next.knobs, &knobs::process_env, &[]).unwrap_or_else(|_| {
                knobs::resolve(&next.knobs, &|_| None, &[]).expect("defaults are valid")
            });
        for spec in &next.knobs {
            if let Some(v) = self.values.get(spec.name) {
                values.set(spec.name, v.clone());
            }
        }
        *self = KnobsPanel::new(values);
    }
}

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
        _ => {}
    }
    vec![]
}

/// Keys while a value is being typed.
pub(super) fn on_edit_key(state: &mut State, key: Key, now: Instant) -> Vec<Effect> {
    let buf = state.knobs.editing.as_mut().expect("editing");
    match key {
        Key::Esc => {
            state.knobs.editing = None;
            state.knobs.error = None;
        }
        Key::Backspace => {
            buf.pop();
        }
        Key::Char(c) if buf.len() < 24 => buf.push(c),
        Key::Enter => {
            let spec = state.target.knobs[state.knobs.cursor];
            let text = buf.clone();
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
        }
        _ => {}
    }
    vec![]
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
