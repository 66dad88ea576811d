use super::*;
use proptest::prelude::*;

fn env_of(pairs: Vec<(&'static str, String)>) -> impl Fn(&str) -> Option<String> {
    move |k| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.clone())
}

#[test]
fn the_flag_wins_and_each_refusal_names_its_source() {
    let env = env_of(vec![("BENCHSCOPE_PROCESSES", "abc".into())]);
    assert_eq!(PROCESSES.resolve(Some("1"), &env), Ok(Some(1)));
    let e = PROCESSES.resolve(None, &env).unwrap_err().to_string();
    assert_eq!(
        e,
        "invalid value \"abc\" in environment variable BENCHSCOPE_PROCESSES (for --processes): expected a whole number (allowed: 1..=50)"
    );
    let e = PROCESSES.resolve(Some("0"), &env).unwrap_err().to_string();
    assert_eq!(
        e,
        "invalid value \"0\" for --processes: expected a whole number (allowed: 1..=50)"
    );
    let env = env_of(vec![("BENCHSCOPE_SILENCE_S", "inf".into())]);
    let e = SILENCE_S.resolve(None, &env).unwrap_err().to_string();
    assert!(
        e.contains("in environment variable BENCHSCOPE_SILENCE_S: out of range"),
        "{e}"
    );
    let env = env_of(vec![("BENCH_TRACE", "maybe".into())]);
    let e = TRACE.resolve(None, &env).unwrap_err().to_string();
    assert!(
        e.starts_with("invalid value \"maybe\" in environment variable BENCH_TRACE (for --trace)"),
        "{e}"
    );
    assert_eq!(TRACE.resolve(None, &env_of(vec![])), Ok(None));
    // A control character in a value is shown escaped.
    let env = env_of(vec![("BENCHSCOPE_RUNNER_NICE", "\u{1b}[2J".into())]);
    let e = RUNNER_NICE.resolve(None, &env).unwrap_err().to_string();
    assert!(
        e.contains("\\\\u{1b}[2J") || e.contains("\\u{1b}[2J"),
        "{e}"
    );
    assert!(!e.contains('\u{1b}'), "{e}");
}

fn cases() -> u32 {
    crate::testing::proptest_cases()
}

/// Any text, weighted towards numbers and words the parsers know.
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[-+]?[0-9]{0,25}(\\.[0-9]{0,5})?([eE][-+]?[0-9]{1,3})?",
        prop_oneof![
            Just("inf"),
            Just("NaN"),
            Just("-0"),
            Just(" 1 "),
            Just("yes"),
            Just("OFF"),
            Just("1e19"),
            Just("18446744073709551616")
        ]
        .prop_map(String::from),
    ]
}

fn check<T: PartialEq + std::fmt::Debug>(
    var: &Var<T>,
    v: &str,
    flag: Option<&str>,
) -> Result<(), TestCaseError> {
    let env = env_of(vec![(var.name, v.to_string())]);
    match var.resolve(flag, &env) {
        Ok(Some(x)) => {
            // What resolved is what the one parser gives for the value used.
            prop_assert_eq!(Some(x), (var.parse)(flag.unwrap_or(v)).ok());
        }
        Ok(None) => prop_assert!(false, "a value was given"),
        Err(e) => {
            let said = e.to_string();
            match flag {
                Some(f) => prop_assert!(
                    said.contains(&format!("for {}", var.flag.unwrap())),
                    "{said} ({f})"
                ),
                None => prop_assert!(said.contains(var.name), "{said}"),
            }
            prop_assert!(!said.chars().any(crate::text::hidden), "{said:?}");
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    /// Whatever a variable holds, resolving never panics; a value is the parser's, a refusal
    /// names the variable; with the flag given, the variable is not read.
    #[test]
    fn any_value_of_any_variable_resolves_or_is_refused_by_name(v in value(), good_flag in any::<bool>()) {
        check(&PROCESSES, &v, None)?;
        check(&KEEP_CPUS_AWAKE, &v, None)?;
        check(&NO_STORE, &v, None)?;
        check(&TRACE, &v, None)?;
        check(&SILENCE_S, &v, None)?;
        check(&RUNNER_NICE, &v, None)?;
        check(&COUNT_ALLOCS, &v, None)?;
        if good_flag {
            let env = env_of(vec![(PROCESSES.name, v.clone())]);
            prop_assert_eq!(PROCESSES.resolve(Some("3"), &env), Ok(Some(3)));
            let env = env_of(vec![(TRACE.name, v.clone())]);
            prop_assert_eq!(TRACE.resolve(Some("1"), &env), Ok(Some(true)));
        } else {
            check(&PROCESSES, "whatever", Some(&v))?;
        }
    }
}
