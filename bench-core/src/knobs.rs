//! Knobs: the numbers a user turns. Each workload declares its knobs once, in the catalog,
//! with a default and bounds; the CLI, the TUI and the exports all read those definitions.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// How the TUI steps a knob with +/-.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    /// Double / halve.
    Double,
    /// Add / subtract a fixed amount.
    Add(u64),
}

/// One knob of one workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct KnobSpec {
    /// Name used in flags (`--rows`), protocol and exports.
    pub name: &'static str,
    /// Environment variable read for the initial value, if any.
    pub env: Option<&'static str>,
    /// Used when neither flag nor environment gives a value.
    pub default: u64,
    pub min: u64,
    pub max: u64,
    pub step: Step,
    pub help: &'static str,
}

impl KnobSpec {
    /// Checks a value against the bounds.
    pub fn check(&self, value: u64) -> Result<u64, KnobError> {
        if value < self.min || value > self.max {
            return Err(KnobError::OutOfRange {
                knob: self.name.to_string(),
                value: value.to_string(),
                min: self.min,
                max: self.max,
            });
        }
        Ok(value)
    }

    /// Parses text (from a flag, the environment or the TUI) and checks the bounds.
    /// Accepts plain digits with optional `_` separators and `k`/`m` suffixes (`20k`, `1m`).
    pub fn parse(&self, text: &str) -> Result<u64, KnobError> {
        let bad = || KnobError::NotANumber {
            knob: self.name.to_string(),
            value: text.to_string(),
            min: self.min,
            max: self.max,
        };
        let t = text.trim().replace('_', "");
        let (digits, mult) = match t.chars().last() {
            Some('k') | Some('K') => (&t[..t.len() - 1], 1_000u64),
            Some('m') | Some('M') => (&t[..t.len() - 1], 1_000_000u64),
            _ => (t.as_str(), 1),
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let value = digits
            .parse::<u64>()
            .ok()
            .and_then(|v| v.checked_mul(mult))
            .ok_or_else(|| KnobError::OutOfRange {
                knob: self.name.to_string(),
                value: text.trim().to_string(),
                min: self.min,
                max: self.max,
            })?;
        self.check(value).map_err(|e| match e {
            KnobError::OutOfRange { knob, min, max, .. } => KnobError::OutOfRange {
                knob,
                value: text.trim().to_string(),
                min,
                max,
            },
            other => other,
        })
    }

    /// The next value up or down by this knob's step, clamped to the bounds.
    pub fn stepped(&self, value: u64, up: bool) -> u64 {
        let next = match (self.step, up) {
            (Step::Double, true) => value.saturating_mul(2),
            (Step::Double, false) => value / 2,
            (Step::Add(n), true) => value.saturating_add(n),
            (Step::Add(n), false) => value.saturating_sub(n),
        };
        next.clamp(self.min, self.max)
    }
}

/// A bad knob value. The message names the knob, the value and what is allowed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KnobError {
    #[error("invalid value {value:?} for knob {knob}: not a whole number (allowed: {min}..={max})")]
    NotANumber {
        knob: String,
        value: String,
        min: u64,
        max: u64,
    },
    #[error("invalid value {value} for knob {knob}: out of range (allowed: {min}..={max})")]
    OutOfRange {
        knob: String,
        value: String,
        min: u64,
        max: u64,
    },
    #[error("unknown knob {knob:?} (known: {known})")]
    Unknown { knob: String, known: String },
    #[error("invalid value {value:?} in environment variable {var} for knob {knob}: {reason}")]
    Env {
        var: String,
        knob: String,
        value: String,
        reason: String,
    },
}

/// Resolved knob values of one run, by knob name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Knobs(pub BTreeMap<String, u64>);

impl Knobs {
    pub fn get(&self, name: &str) -> Option<u64> {
        self.0.get(name).copied()
    }

    /// The value of a knob the catalog guarantees is present.
    pub fn value(&self, name: &str) -> u64 {
        self.get(name)
            .unwrap_or_else(|| panic!("knob {name} missing from resolved knobs"))
    }

    pub fn set(&mut self, name: &str, value: u64) {
        self.0.insert(name.to_string(), value);
    }
}

impl fmt::Display for Knobs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for (k, v) in &self.0 {
            if !first {
                f.write_str(" ")?;
            }
            first = false;
            write!(f, "{k}={v}")?;
        }
        Ok(())
    }
}

/// Resolves a workload's knobs: defaults, then the environment, then explicit overrides
/// (flags or TUI edits), each checked against the spec.
///
/// `BENCH_LOOKUPS` falls back to `BENCH_ROWS` when unset, as in the suite it comes from.
pub fn resolve(
    specs: &[KnobSpec],
    env: &dyn Fn(&str) -> Option<String>,
    overrides: &[(String, String)],
) -> Result<Knobs, KnobError> {
    let mut knobs = Knobs::default();
    for spec in specs {
        let mut value = spec.default;
        let mut from_env = spec.env.and_then(|var| env(var).map(|v| (var, v)));
        if from_env.is_none() && spec.name == "lookups" {
            from_env = env("BENCH_ROWS").map(|v| ("BENCH_ROWS", v));
        }
        if let Some((var, text)) = from_env {
            value = spec.parse(&text).map_err(|e| KnobError::Env {
                var: var.to_string(),
                knob: spec.name.to_string(),
                value: text.clone(),
                reason: match e {
                    KnobError::NotANumber { min, max, .. } => {
                        format!("not a whole number (allowed: {min}..={max})")
                    }
                    KnobError::OutOfRange { min, max, .. } => {
                        format!("out of range (allowed: {min}..={max})")
                    }
                    other => other.to_string(),
                },
            })?;
        }
        knobs.set(spec.name, value);
    }
    for (name, text) in overrides {
        let spec = specs
            .iter()
            .find(|s| s.name == name)
            .ok_or_else(|| KnobError::Unknown {
                knob: name.clone(),
                known: specs.iter().map(|s| s.name).collect::<Vec<_>>().join(", "),
            })?;
        knobs.set(spec.name, spec.parse(text)?);
    }
    Ok(knobs)
}

/// Reads the process environment.
pub fn process_env(var: &str) -> Option<String> {
    std::env::var(var).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROWS: KnobSpec = KnobSpec {
        name: "rows",
        env: Some("BENCH_ROWS"),
        default: 1000,
        min: 1,
        max: 50_000_000,
        step: Step::Double,
        help: "",
    };
    const LOOKUPS: KnobSpec = KnobSpec {
        name: "lookups",
        env: Some("BENCH_LOOKUPS"),
        default: 1000,
        min: 1,
        max: 10_000_000,
        step: Step::Double,
        help: "",
    };

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn defaults_env_then_overrides() {
        let specs = [ROWS, LOOKUPS];
        let k = resolve(&specs, &env_of(&[]), &[]).unwrap();
        assert_eq!((k.value("rows"), k.value("lookups")), (1000, 1000));
        let k = resolve(&specs, &env_of(&[("BENCH_ROWS", "20000")]), &[]).unwrap();
        assert_eq!(
            (k.value("rows"), k.value("lookups")),
            (20000, 20000),
            "lookups falls back to BENCH_ROWS"
        );
        let k = resolve(
            &specs,
            &env_of(&[("BENCH_ROWS", "20000"), ("BENCH_LOOKUPS", "500")]),
            &[],
        )
        .unwrap();
        assert_eq!(k.value("lookups"), 500);
        let k = resolve(
            &specs,
            &env_of(&[("BENCH_ROWS", "20000")]),
            &[("rows".into(), "64".into())],
        )
        .unwrap();
        assert_eq!((k.value("rows"), k.value("lookups")), (64, 20000));
    }

    #[test]
    fn suffixes_and_separators() {
        assert_eq!(ROWS.parse("20k").unwrap(), 20_000);
        assert_eq!(ROWS.parse("1M").unwrap(), 1_000_000);
        assert_eq!(ROWS.parse("1_000").unwrap(), 1000);
    }

    #[test]
    fn bad_values_name_knob_value_and_range() {
        let e = ROWS.parse("0").unwrap_err().to_string();
        assert_eq!(
            e,
            "invalid value 0 for knob rows: out of range (allowed: 1..=50000000)"
        );
        let e = ROWS.parse("-5").unwrap_err().to_string();
        assert_eq!(
            e,
            "invalid value \"-5\" for knob rows: not a whole number (allowed: 1..=50000000)"
        );
        let e = ROWS.parse("lots").unwrap_err().to_string();
        assert!(
            e.contains("\"lots\"") && e.contains("rows") && e.contains("1..=50000000"),
            "{e}"
        );
        let e = ROWS
            .parse("99999999999999999999999")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("out of range") && e.contains("99999999999999999999999"),
            "{e}"
        );
        let e = ROWS.parse("60000000").unwrap_err().to_string();
        assert!(e.contains("out of range (allowed: 1..=50000000)"), "{e}");
        let e = resolve(&[ROWS], &env_of(&[("BENCH_ROWS", "abc")]), &[])
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "invalid value \"abc\" in environment variable BENCH_ROWS for knob rows: not a whole number (allowed: 1..=50000000)"
        );
        let e = resolve(&[ROWS], &env_of(&[]), &[("nope".into(), "1".into())])
            .unwrap_err()
            .to_string();
        assert_eq!(e, "unknown knob \"nope\" (known: rows)");
    }

    #[test]
    fn stepping_clamps() {
        assert_eq!(ROWS.stepped(1000, true), 2000);
        assert_eq!(ROWS.stepped(1, false), 1);
        assert_eq!(ROWS.stepped(40_000_000, true), 50_000_000);
        let add = KnobSpec {
            step: Step::Add(1),
            min: 1,
            max: 4,
            ..ROWS
        };
        assert_eq!(add.stepped(4, true), 4);
        assert_eq!(add.stepped(2, false), 1);
    }
}
