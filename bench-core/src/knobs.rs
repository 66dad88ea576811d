//! Knobs: the settings a user turns. Each workload declares its knobs once, in its catalog
//! entry, with a default and what is allowed; the CLI, the explorer and the exports all read
//! those definitions. A knob is a count (bounded, `20k` and `1m` accepted) or a word from a
//! fixed list (`wal`, `delete`, `memory`).

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// How the explorer steps a count knob with +/-.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    /// Double / halve.
    Double,
    /// Add / subtract a fixed amount.
    Add(u64),
}

/// What values a knob takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KnobKind {
    Count {
        default: u64,
        min: u64,
        max: u64,
        step: Step,
    },
    Choice {
        default: &'static str,
        choices: &'static [&'static str],
    },
}

/// One knob of one workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnobSpec {
    /// Name used in flags (`--rows`, `--knob NAME=VALUE`), the protocol and exports.
    pub name: &'static str,
    /// Environment variable read for the initial value, if any.
    pub env: Option<&'static str>,
    /// A second variable read when `env` is unset (BENCH_LOOKUPS falls back to BENCH_ROWS).
    pub env_fallback: Option<&'static str>,
    pub kind: KnobKind,
    pub help: &'static str,
}

/// A knob's value: a count or a word. A word read back (a store's row, a report) is a
/// [`is_token`] or refused, as a knob's name is: the catalog's own are, and a knob's value is
/// printed in tables, headings and file names as it is.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(untagged, try_from = "ReadValue")]
pub enum KnobValue {
    Count(u64),
    Word(String),
}

/// A string read back that must be an [`is_token`] (a knob's word, a run's id, a harness's
/// name), for serde's `deserialize_with`.
pub fn token<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let s = String::deserialize(d)?;
    if is_token(&s) {
        Ok(s)
    } else {
        Err(serde::de::Error::custom(format!(
            "{} is not 1 to 64 letters, digits, `_`, `-`, `.`, `+` or `:`",
            crate::text::Text::new(s).terminal()
        )))
    }
}

/// A knob's value as read, before its word is checked.
#[derive(Deserialize)]
#[serde(untagged)]
enum ReadValue {
    Count(u64),
    Word(String),
}

impl TryFrom<ReadValue> for KnobValue {
    type Error = String;
    fn try_from(v: ReadValue) -> Result<Self, String> {
        match v {
            ReadValue::Count(n) => Ok(KnobValue::Count(n)),
            ReadValue::Word(w) if is_token(&w) => Ok(KnobValue::Word(w)),
            ReadValue::Word(w) => Err(format!(
                "knob word {} is not 1 to 64 letters, digits, `_`, `-`, `.`, `+` or `:`",
                crate::text::Text::new(w).terminal()
            )),
        }
    }
}

/// Whether `s` may be a knob's name or word: 1 to 64 ASCII letters, digits, `_`, `-`, `.`, `+`,
/// `:` (a script's `-D` values are recorded as `:NAME` knobs, their numbers as words when
/// negative or decimal).
pub fn is_token(s: &str) -> bool {
    (1..=64).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-.+:".contains(&b))
}

impl fmt::Display for KnobValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KnobValue::Count(n) => write!(f, "{n}"),
            KnobValue::Word(w) => f.write_str(w),
        }
    }
}

impl From<u64> for KnobValue {
    fn from(n: u64) -> Self {
        KnobValue::Count(n)
    }
}

impl From<&str> for KnobValue {
    fn from(w: &str) -> Self {
        KnobValue::Word(w.to_string())
    }
}

impl KnobSpec {
    /// A count knob, doubled and halved by the explorer's +/-.
    pub const fn count(
        name: &'static str,
        env: Option<&'static str>,
        default: u64,
        min: u64,
        max: u64,
        help: &'static str,
    ) -> KnobSpec {
        KnobSpec {
            name,
            env,
            env_fallback: None,
            kind: KnobKind::Count {
                default,
                min,
                max,
                step: Step::Double,
            },
            help,
        }
    }

    /// A knob that takes one of `choices`.
    pub const fn choice(
        name: &'static str,
        env: Option<&'static str>,
        default: &'static str,
        choices: &'static [&'static str],
        help: &'static str,
    ) -> KnobSpec {
        KnobSpec {
            name,
            env,
            env_fallback: None,
            kind: KnobKind::Choice { default, choices },
            help,
        }
    }

    /// The same knob stepped by `n` instead of doubled.
    pub const fn step_by(mut self, n: u64) -> KnobSpec {
        if let KnobKind::Count {
            default, min, max, ..
        } = self.kind
        {
            self.kind = KnobKind::Count {
                default,
                min,
                max,
                step: Step::Add(n),
            };
        }
        self
    }

    pub const fn fallback(mut self, var: &'static str) -> KnobSpec {
        self.env_fallback = Some(var);
        self
    }

    pub const fn with_default(mut self, value: u64) -> KnobSpec {
        if let KnobKind::Count { min, max, step, .. } = self.kind {
            self.kind = KnobKind::Count {
                default: value,
                min,
                max,
                step,
            };
        }
        self
    }

    pub fn default_value(&self) -> KnobValue {
        match self.kind {
            KnobKind::Count { default, .. } => KnobValue::Count(default),
            KnobKind::Choice { default, .. } => KnobValue::Word(default.to_string()),
        }
    }

    /// What is allowed, as errors and the explorer show it: `1..=1024` or `wal, delete, memory`.
    pub fn allowed(&self) -> String {
        match self.kind {
            KnobKind::Count { min, max, .. } => format!("{min}..={max}"),
            KnobKind::Choice { choices, .. } => choices.join(", "),
        }
    }

    /// Parses text (from a flag, the environment or the explorer) and checks it.
    /// Counts accept digits with optional `_` separators and `k`/`m` suffixes (`20k`, `1m`);
    /// words are matched without regard to case.
    pub fn parse(&self, text: &str) -> Result<KnobValue, KnobError> {
        match self.kind {
            KnobKind::Count { min, max, .. } => {
                self.parse_count(text, min, max).map(KnobValue::Count)
            }
            KnobKind::Choice { choices, .. } => {
                let t = text.trim();
                choices
                    .iter()
                    .find(|c| c.eq_ignore_ascii_case(t))
                    .map(|c| KnobValue::Word(c.to_string()))
                    .ok_or_else(|| KnobError::NotAChoice {
                        knob: self.name.to_string(),
                        value: text.to_string(),
                        allowed: self.allowed(),
                    })
            }
        }
    }

    fn parse_count(&self, text: &str, min: u64, max: u64) -> Result<u64, KnobError> {
        let t = text.trim().replace('_', "");
        let (digits, mult) = match t.chars().last() {
            Some('k') | Some('K') => (&t[..t.len() - 1], 1_000u64),
            Some('m') | Some('M') => (&t[..t.len() - 1], 1_000_000u64),
            _ => (t.as_str(), 1),
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(KnobError::NotANumber {
                knob: self.name.to_string(),
                value: text.to_string(),
                min,
                max,
            });
        }
        let out_of_range = || KnobError::OutOfRange {
            knob: self.name.to_string(),
            value: text.trim().to_string(),
            min,
            max,
        };
        let value = digits
            .parse::<u64>()
            .ok()
            .and_then(|v| v.checked_mul(mult))
            .ok_or_else(out_of_range)?;
        if value < min || value > max {
            return Err(out_of_range());
        }
        Ok(value)
    }

    /// The next value up or down: a count by its step, clamped to the bounds; a word cycles
    /// through the choices.
    pub fn stepped(&self, value: &KnobValue, up: bool) -> KnobValue {
        match (self.kind, value) {
            (KnobKind::Count { min, max, step, .. }, KnobValue::Count(value)) => {
                let next = match (step, up) {
                    (Step::Double, true) => value.saturating_mul(2),
                    (Step::Double, false) => value / 2,
                    (Step::Add(n), true) => value.saturating_add(n),
                    (Step::Add(n), false) => value.saturating_sub(n),
                };
                KnobValue::Count(next.clamp(min, max))
            }
            (KnobKind::Choice { choices, .. }, KnobValue::Word(w)) => {
                let i = choices.iter().position(|c| c == w).unwrap_or(0);
                let n = choices.len();
                let j = if up { (i + 1) % n } else { (i + n - 1) % n };
                KnobValue::Word(choices[j].to_string())
            }
            _ => self.default_value(),
        }
    }
}

impl Serialize for KnobSpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("name", self.name)?;
        m.serialize_entry("env", &self.env)?;
        match self.kind {
            KnobKind::Count {
                default,
                min,
                max,
                step,
            } => {
                m.serialize_entry("default", &default)?;
                m.serialize_entry("min", &min)?;
                m.serialize_entry("max", &max)?;
                m.serialize_entry("step", &step)?;
            }
            KnobKind::Choice { default, choices } => {
                m.serialize_entry("default", default)?;
                m.serialize_entry("choices", choices)?;
            }
        }
        m.serialize_entry("help", self.help)?;
        m.end()
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
    #[error(
        "invalid value {value:?} for knob {knob}: not one of the allowed values (allowed: {allowed})"
    )]
    NotAChoice {
        knob: String,
        value: String,
        allowed: String,
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

impl KnobError {
    /// What is wrong with the value, without naming the knob (for the environment's message).
    fn reason(&self) -> String {
        match self {
            KnobError::NotANumber { min, max, .. } => {
                format!("not a whole number (allowed: {min}..={max})")
            }
            KnobError::OutOfRange { min, max, .. } => {
                format!("out of range (allowed: {min}..={max})")
            }
            KnobError::NotAChoice { allowed, .. } => {
                format!("not one of the allowed values (allowed: {allowed})")
            }
            other => other.to_string(),
        }
    }
}

/// Resolved knob values of one run, by knob name (each name an [`is_token`], checked when read
/// back).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "BTreeMap<String, KnobValue>")]
pub struct Knobs(pub BTreeMap<String, KnobValue>);

impl TryFrom<BTreeMap<String, KnobValue>> for Knobs {
    type Error = String;
    fn try_from(m: BTreeMap<String, KnobValue>) -> Result<Self, String> {
        match m.keys().find(|k| !is_token(k)) {
            Some(k) => Err(format!(
                "knob name {} is not 1 to 64 letters, digits, `_`, `-`, `.`, `+` or `:`",
                crate::text::Text::new(k.as_str()).terminal()
            )),
            None => Ok(Knobs(m)),
        }
    }
}

impl Knobs {
    pub fn get(&self, name: &str) -> Option<&KnobValue> {
        self.0.get(name)
    }

    /// The value of a count knob the catalog guarantees is present.
    pub fn count(&self, spec: &KnobSpec) -> u64 {
        match self.0.get(spec.name) {
            Some(KnobValue::Count(n)) => *n,
            other => panic!(
                "count knob {} is {other:?} in the resolved knobs",
                spec.name
            ),
        }
    }

    /// The value of a count knob, if this run has it.
    pub fn count_if(&self, spec: &KnobSpec) -> Option<u64> {
        match self.0.get(spec.name) {
            Some(KnobValue::Count(n)) => Some(*n),
            _ => None,
        }
    }

    /// The value of a word knob the catalog guarantees is present.
    pub fn word(&self, spec: &KnobSpec) -> &str {
        match self.0.get(spec.name) {
            Some(KnobValue::Word(w)) => w,
            other => panic!("word knob {} is {other:?} in the resolved knobs", spec.name),
        }
    }

    pub fn set(&mut self, name: &str, value: impl Into<KnobValue>) {
        self.0.insert(name.to_string(), value.into());
    }

    /// The knobs whose values differ between two runs (or that only one has), by name.
    pub fn differences(&self, other: &Knobs) -> Vec<String> {
        let mut names: Vec<&String> = self.0.keys().chain(other.0.keys()).collect();
        names.sort();
        names.dedup();
        names
            .into_iter()
            .filter(|n| self.0.get(*n) != other.0.get(*n))
            .map(|n| {
                let show = |v: Option<&KnobValue>| v.map(|v| v.to_string()).unwrap_or("-".into());
                format!("{n} {} vs {}", show(self.0.get(n)), show(other.0.get(n)))
            })
            .collect()
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
/// (flags or explorer edits), each checked against its spec. A knob an override sets does not
/// read its variable: the flag wins, whatever the environment holds.
pub fn resolve(
    specs: &[KnobSpec],
    env: &dyn Fn(&str) -> Option<String>,
    overrides: &[(String, String)],
) -> Result<Knobs, KnobError> {
    let mut knobs = Knobs::default();
    for spec in specs {
        let mut value = spec.default_value();
        if overrides.iter().any(|(name, _)| name == spec.name) {
            knobs.set(spec.name, value);
            continue;
        }
        // A fallback variable whose own knob a flag sets is not read either (`--rows 200`
        // with a bad BENCH_ROWS: lookups takes its default, never the bad value).
        let fallback_overridden = |var: &str| {
            specs
                .iter()
                .find(|s| s.env == Some(var))
                .is_some_and(|s| overrides.iter().any(|(n, _)| n == s.name))
        };
        let from_env = spec
            .env
            .and_then(|var| env(var).map(|v| (var, v)))
            .or_else(|| {
                spec.env_fallback
                    .filter(|var| !fallback_overridden(var))
                    .and_then(|var| env(var).map(|v| (var, v)))
            });
        if let Some((var, text)) = from_env {
            value = spec.parse(&text).map_err(|e| KnobError::Env {
                var: var.to_string(),
                knob: spec.name.to_string(),
                value: text.clone(),
                reason: e.reason(),
            })?;
        }
        knobs.set(spec.name, value);
    }
    for (name, text) in overrides {
        let spec = find(specs, name)?;
        knobs.set(spec.name, spec.parse(text)?);
    }
    Ok(knobs)
}

/// The spec named `name`, or an error listing the known ones.
pub fn find<'a>(specs: &'a [KnobSpec], name: &str) -> Result<&'a KnobSpec, KnobError> {
    specs
        .iter()
        .find(|s| s.name == name)
        .ok_or_else(|| KnobError::Unknown {
            knob: name.to_string(),
            known: specs.iter().map(|s| s.name).collect::<Vec<_>>().join(", "),
        })
}

/// Reads the process environment (a value that is not UTF-8 read lossily, so refused by the
/// knob's parser by name, never taken for unset).
pub fn process_env(var: &str) -> Option<String> {
    crate::vars::process_env(var)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_catalog_knob_name_and_word_is_a_token_and_nothing_else_reads_back() {
        for t in crate::workloads::targets() {
            for k in t.knobs.iter() {
                assert!(is_token(k.name), "{}", k.name);
                if let KnobKind::Choice { choices, default } = k.kind {
                    assert!(is_token(default), "{default}");
                    for c in choices {
                        assert!(is_token(c), "{} of {}", c, k.name);
                    }
                }
            }
        }
        let ok: Knobs =
            serde_json::from_str(r#"{"rows":1000,"journal_mode":"wal",":d":"-1.5"}"#).unwrap();
        assert_eq!(ok.to_string(), ":d=-1.5 journal_mode=wal rows=1000");
        for bad in [
            r#"{"rows":1000,"journal_mode":"wal\n## fake heading"}"#,
            r#"{"rows":1000,"journal_mode":"a|b"}"#,
            r#"{"rows\u001b[2J":1000}"#,
            r#"{"rows":1000,"journal_mode":""}"#,
        ] {
            let e = serde_json::from_str::<Knobs>(bad).unwrap_err().to_string();
            assert!(e.contains("is not 1 to 64 letters"), "{bad}: {e}");
            assert!(!e.contains('\u{1b}') && !e.contains('\n'), "{e:?}");
        }
    }

    const ROWS: KnobSpec = KnobSpec::count("rows", Some("BENCH_ROWS"), 1000, 1, 50_000_000, "");
    const LOOKUPS: KnobSpec =
        KnobSpec::count("lookups", Some("BENCH_LOOKUPS"), 1000, 1, 10_000_000, "")
            .fallback("BENCH_ROWS");
    const MODE: KnobSpec = KnobSpec::choice(
        "journal_mode",
        Some("BENCH_JOURNAL_MODE"),
        "wal",
        &["wal", "delete", "memory"],
        "",
    );

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    fn counts(k: &Knobs) -> (u64, u64) {
        (k.count(&ROWS), k.count(&LOOKUPS))
    }

    #[test]
    fn defaults_env_then_overrides() {
        let specs = [ROWS, LOOKUPS];
        let k = resolve(&specs, &env_of(&[]), &[]).unwrap();
        assert_eq!(counts(&k), (1000, 1000));
        let k = resolve(&specs, &env_of(&[("BENCH_ROWS", "20000")]), &[]).unwrap();
        assert_eq!(
            counts(&k),
            (20000, 20000),
            "lookups falls back to BENCH_ROWS"
        );
        let k = resolve(
            &specs,
            &env_of(&[("BENCH_ROWS", "20000"), ("BENCH_LOOKUPS", "500")]),
            &[],
        )
        .unwrap();
        assert_eq!(k.count(&LOOKUPS), 500);
        let k = resolve(
            &specs,
            &env_of(&[("BENCH_ROWS", "20000")]),
            &[("rows".into(), "64".into())],
        )
        .unwrap();
        // --rows overrides BENCH_ROWS, for lookups' fallback too.
        assert_eq!(counts(&k), (64, 1000));
        // A flag wins over its variable, which is then not read at all: a bad value there does
        // not stop the run, nor reach a knob that falls back to it.
        let k = resolve(
            &specs,
            &env_of(&[("BENCH_ROWS", "abc")]),
            &[("rows".into(), "64".into())],
        )
        .unwrap();
        assert_eq!(counts(&k), (64, 1000));
        let e = resolve(&specs, &env_of(&[("BENCH_ROWS", "abc")]), &[]).unwrap_err();
        assert!(
            e.to_string().contains("environment variable BENCH_ROWS"),
            "{e}"
        );
    }

    #[test]
    fn suffixes_and_separators() {
        assert_eq!(ROWS.parse("20k").unwrap(), KnobValue::Count(20_000));
        assert_eq!(ROWS.parse("1M").unwrap(), KnobValue::Count(1_000_000));
        assert_eq!(ROWS.parse("1_000").unwrap(), KnobValue::Count(1000));
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
    fn words_are_checked_against_their_choices() {
        assert_eq!(
            MODE.parse("DELETE").unwrap(),
            KnobValue::Word("delete".into())
        );
        assert_eq!(
            MODE.parse("truncate").unwrap_err().to_string(),
            "invalid value \"truncate\" for knob journal_mode: not one of the allowed values (allowed: wal, delete, memory)"
        );
        let e = resolve(&[MODE], &env_of(&[("BENCH_JOURNAL_MODE", "x")]), &[])
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "invalid value \"x\" in environment variable BENCH_JOURNAL_MODE for knob journal_mode: not one of the allowed values (allowed: wal, delete, memory)"
        );
        let k = resolve(&[MODE], &env_of(&[]), &[]).unwrap();
        assert_eq!(k.word(&MODE), "wal");
        assert_eq!(
            MODE.stepped(&"memory".into(), true),
            KnobValue::Word("wal".into()),
            "words cycle"
        );
        assert_eq!(MODE.stepped(&"wal".into(), false), "memory".into());
        let json = serde_json::to_string(&k).unwrap();
        assert_eq!(json, r#"{"journal_mode":"wal"}"#);
        assert_eq!(serde_json::from_str::<Knobs>(&json).unwrap(), k);
    }

    #[test]
    fn counts_serialize_as_numbers_and_differences_are_named() {
        let mut a = resolve(&[ROWS, LOOKUPS], &env_of(&[]), &[]).unwrap();
        assert_eq!(
            serde_json::to_string(&a).unwrap(),
            r#"{"lookups":1000,"rows":1000}"#
        );
        let b = a.clone();
        assert!(a.differences(&b).is_empty());
        a.set("rows", 2000);
        assert_eq!(a.differences(&b), vec!["rows 2000 vs 1000"]);
    }

    #[test]
    fn stepping_clamps() {
        let c = |n| KnobValue::Count(n);
        assert_eq!(ROWS.stepped(&c(1000), true), c(2000));
        assert_eq!(ROWS.stepped(&c(1), false), c(1));
        assert_eq!(ROWS.stepped(&c(40_000_000), true), c(50_000_000));
        let add = KnobSpec::count("n", None, 2, 1, 4, "").step_by(1);
        assert_eq!(add.stepped(&c(4), true), c(4));
        assert_eq!(add.stepped(&c(2), false), c(1));
    }
}
