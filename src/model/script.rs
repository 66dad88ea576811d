//! The script target as the explorer shows it: the catalog's spec with a knob for each
//! script variable given a whole number with `-D` (changed live like any knob, handed to the
//! runner as `--define NAME=VALUE`), and the statements of the mix for the catalog.

use bench_core::catalog::{Target, leak};
use bench_core::knobs::KnobSpec;
use bench_core::script::{Mix, Value};

/// A script variable's knob is named `:NAME`, as the scripts read it.
pub const VAR_PREFIX: char = ':';

/// The largest value a variable's knob takes (the largest integer a double holds exactly, so
/// that arithmetic with decimals in a script stays exact).
const VAR_MAX: u64 = 1 << 53;

#[derive(Debug, Clone)]
pub struct ScriptView {
    /// The script target with the variables' knobs after its own.
    pub target: &'static Target,
    /// Each statement of the mix: its `file:line` and its text on one line.
    pub statements: Vec<(String, String)>,
}

/// The view of `mix` for `spec` (the script target's catalog entry): a count knob for each
/// variable `defines` gives a whole number at least 0 (a negative or decimal one stays as
/// given, and the docs say so).
pub fn view(spec: &Target, mix: &Mix, defines: &[(String, Value)]) -> ScriptView {
    let mut target = spec.clone();
    let mut seen = Vec::new();
    // The last -D of a name wins, as in the script's own reading.
    for (name, v) in defines.iter().rev() {
        if seen.contains(name) {
            continue;
        }
        seen.push(name.clone());
        if let Value::Int(n) = v
            && *n >= 0
        {
            target.knobs.push(KnobSpec::count(
                leak(format!("{VAR_PREFIX}{name}")),
                None,
                *n as u64,
                0,
                VAR_MAX,
                leak(format!(
                    "script variable :{name} (-D {name}=...), a whole number; a change reruns the scripts with it"
                )),
            ));
        }
    }
    let statements = mix
        .statements()
        .map(|s| {
            let (script, _) = mix.statement(s.index);
            (format!("{}:{}", script.name, s.at.line), s.text.clone())
        })
        .collect();
    ScriptView {
        target: Box::leak(Box::new(target)),
        statements,
    }
}

/// A knob that is a script variable: its variable's name.
pub fn variable(knob: &str) -> Option<&str> {
    knob.strip_prefix(VAR_PREFIX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_number_variables_become_knobs_and_statements_are_listed() {
        let mix = Mix::parse(
            &[(
                "t.sql".into(),
                "\\set id random(1, :keys)\nSELECT :id * :f;\n".into(),
                1,
            )],
            &[
                ("keys".into(), Value::Int(10)),
                ("f".into(), Value::Double(0.5)),
                ("keys".into(), Value::Int(100)),
            ],
        )
        .unwrap();
        let spec = bench_core::workloads::script::spec();
        let v = view(
            spec,
            &mix,
            &[
                ("keys".into(), Value::Int(10)),
                ("f".into(), Value::Double(0.5)),
                ("keys".into(), Value::Int(100)),
            ],
        );
        let added: Vec<_> = v.target.knobs[spec.knobs.len()..].to_vec();
        assert_eq!(added.len(), 1, "{added:?}");
        assert_eq!(added[0].name, ":keys");
        assert_eq!(
            added[0].default_value().to_string(),
            "100",
            "the last -D wins"
        );
        assert_eq!(
            v.statements,
            [("t:2".to_string(), "SELECT :id * :f".to_string())]
        );
        assert_eq!(variable(":keys"), Some("keys"));
        assert_eq!(variable("clients"), None);
    }

    /// A variable's knob reaches the runner as `--define`, after the command line's (the last
    /// wins), never as a `--knob` the runner would refuse.
    #[test]
    fn a_variable_knob_is_handed_on_as_a_define() {
        let mut knobs = bench_core::knobs::Knobs::default();
        knobs.set("clients", 2u64);
        knobs.set(":keys", 500u64);
        let settings = crate::messages::RunSettings {
            script_args: vec![
                "--script".into(),
                "/s/t.sql@1".into(),
                "--define".into(),
                "keys=10".into(),
            ],
            ..Default::default()
        };
        let args = crate::messages::RunRequest::new(
            "r1".into(),
            bench_core::workloads::script::NAME,
            vec!["rusqlite".into()],
            knobs,
            false,
            &settings,
        )
        .args()
        .join(" ");
        assert!(args.contains("--knob clients=2"), "{args}");
        assert!(!args.contains(":keys"), "{args}");
        assert!(
            args.ends_with("--define keys=10 --define keys=500"),
            "{args}"
        );
    }
}
