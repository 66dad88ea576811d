//! Any value of any setting read from the environment: resolving never panics; a value is the
//! one parser's; a refusal names the variable (or the flag, when the flag gave it) and holds no
//! control character; with the flag given, the variable is not read.
#![no_main]

use bench_core::vars::{self, Var};
use libfuzzer_sys::fuzz_target;

fn check<T: PartialEq + std::fmt::Debug>(var: &Var<T>, v: &str, flag: Option<&str>) {
    let env = |k: &str| (k == var.name).then(|| v.to_string());
    match var.resolve(flag, &env) {
        Ok(x) => assert_eq!(x, (var.parse)(flag.unwrap_or(v)).ok()),
        Err(e) => {
            let said = e.to_string();
            match flag {
                Some(_) => assert!(said.contains(var.flag.unwrap())),
                None => assert!(said.contains(var.name)),
            }
            assert!(!said.chars().any(bench_core::text::hidden), "{said:?}");
        }
    }
}

fuzz_target!(|v: String| {
    check(&vars::PROCESSES, &v, None);
    check(&vars::KEEP_CPUS_AWAKE, &v, None);
    check(&vars::NO_STORE, &v, None);
    check(&vars::TRACE, &v, None);
    check(&vars::SILENCE_S, &v, None);
    check(&vars::RUNNER_NICE, &v, None);
    check(&vars::COUNT_ALLOCS, &v, None);
    check(&vars::PROCESSES, "garbage", Some(&v));
    check(&vars::TRACE, "garbage", Some(&v));
    assert_eq!(vars::PROCESSES.resolve(Some("3"), &|_| Some(v.clone())), Ok(Some(3)));
});
