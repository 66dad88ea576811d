//! The script target as the explorer shows it: the run's spec (a micro-bench per statement,
//! `bench_core::workloads::script::spec_for`) with a knob for each script variable given a
//! whole number with `-D` (changed live like any knob, handed to the runner as
//! `--define NAME=VALUE`).

use bench_core::catalog::{Target, leak};
use bench_core::knobs::KnobSpec;
use bench_core::script::Value;

/// A script variable's knob is named `:NAME`, as the scripts read it.
pub const VAR_PREFIX: char = ':';

/// The largest value a variable's knob takes (the largest integer a double holds exactly, so
/// that arithmetic with decimals in a script stays exact).
const VAR_MAX: u64 = 1 << 53;

#[derive(Debug, Clone)]
pub struct ScriptView {
    /// The script target with the variables' knobs after its own.
    pub target: &'static Target,
}

/// The view for `spec` (the script target for the run's scripts): a count knob for each
/// variable `defines` gives a whole number at least 0 (a negative or decimal one stays as
/// given, and the docs say so).
pub fn view(spec: &Target, defines: &[(String, Value)]) -> ScriptView {
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
    ScriptView {
        target: Box::leak(Box::new(target)),
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
    fn whole_number_variables_become_knobs() {
        let spec = bench_core::workloads::script::spec();
        let v = view(
            spec,
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
        assert_eq!(variable(":keys"), Some("keys"));
        assert_eq!(variable("clients"), None);
    }

    /// The run's scripts give the target a micro-bench per statement, its text as what one
    /// operation is; BEGIN and COMMIT are none.
    #[test]
    fn each_statement_is_a_micro_bench_with_its_text() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("t.sql");
        std::fs::write(
            &file,
            "\\set id random(1, :keys)\nBEGIN;\nSELECT :id;\nCOMMIT;\n",
        )
        .unwrap();
        let args = bench_core::service::args::ScriptArgs {
            scripts: vec![file.display().to_string()],
            defines: vec!["keys=100".into()],
            ..Default::default()
        };
        let spec = bench_core::workloads::script::spec_for(&args);
        let stmts: Vec<(&str, &str)> = spec
            .benches
            .iter()
            .filter(|b| bench_core::workloads::script::is_statement(b))
            .map(|b| (b.name, b.op))
            .collect();
        assert_eq!(stmts, [("stmt/t:3", "SELECT :id")]);
        assert!(std::ptr::eq(
            spec,
            bench_core::workloads::script::spec_for(&args)
        ));
    }

    /// A variable's knob reaches the runner as a define, after the command line's (the last
    /// wins), never as a knob the runner would refuse.
    #[test]
    fn a_variable_knob_is_handed_on_as_a_define() {
        let mut knobs = bench_core::knobs::Knobs::default();
        knobs.set("clients", 2u64);
        knobs.set(":keys", 500u64);
        let settings = crate::messages::RunSettings {
            script: bench_core::service::args::ScriptArgs {
                scripts: vec!["/s/t.sql@1".into()],
                defines: vec!["keys=10".into()],
                ..Default::default()
            },
            ..Default::default()
        };
        let asked = crate::messages::RunRequest::new(
            "r1".into(),
            bench_core::workloads::script::NAME,
            vec!["rusqlite".into()],
            knobs,
            false,
            &settings,
        )
        .runner_request()
        .unwrap();
        assert_eq!(
            asked.knobs.get("clients").map(|v| v.to_string()).as_deref(),
            Some("2")
        );
        assert_eq!(asked.script.defines, ["keys=10", "keys=500"]);
        assert_eq!(asked.script.scripts, ["/s/t.sql@1"]);
    }
}
