//! Settings read from the environment, each through one parser whatever it is read from: a
//! setting with a flag takes the flag's value when the flag is given (the variable is then not
//! read at all), else the variable's, parsed and bounded as the flag's would be; a value either
//! refuses is refused naming where it came from (`--processes` or `BENCHSCOPE_PROCESSES`), the
//! value (escaped for a terminal) and what is allowed. Nothing here panics on any value.
//!
//! The knobs (`BENCH_ROWS`, ...) are read the same way by [`crate::knobs::resolve`].

use crate::text::terminal_str;

/// A setting of the environment, and its flag where it has one.
pub struct Var<T: 'static> {
    /// The environment variable.
    pub name: &'static str,
    /// The flag that sets the same (`--processes`), if any.
    pub flag: Option<&'static str>,
    /// The parser, the flag's and the variable's: the value, or why not with what is allowed.
    pub parse: fn(&str) -> Result<T, String>,
}

/// A value refused, where it came from, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid value {value:?} {source_words}: {why}")]
pub struct VarError {
    pub value: String,
    pub source_words: String,
    pub why: String,
}

impl<T> Var<T> {
    fn refuse(&self, from_flag: bool, value: &str, why: String) -> VarError {
        let source_words = match (from_flag, self.flag) {
            (true, Some(f)) => format!("for {f}"),
            (_, Some(f)) => format!("in environment variable {} (for {f})", self.name),
            (_, None) => format!("in environment variable {}", self.name),
        };
        VarError {
            value: terminal_str(value),
            source_words,
            why,
        }
    }

    /// The setting: `flag`'s value when given, else the variable's from `env`, else `None`.
    pub fn resolve(
        &self,
        flag: Option<&str>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<T>, VarError> {
        if let Some(v) = flag {
            return (self.parse)(v)
                .map(Some)
                .map_err(|why| self.refuse(true, v, why));
        }
        match env(self.name) {
            None => Ok(None),
            Some(v) => (self.parse)(&v)
                .map(Some)
                .map_err(|why| self.refuse(false, &v, why)),
        }
    }

    /// The variable's value in this process's environment (a value that is not UTF-8 is
    /// refused, not ignored).
    pub fn read(&self) -> Result<Option<T>, VarError> {
        self.resolve(None, &process_env)
    }
}

/// This process's environment, a value that is not UTF-8 read lossily (and so refused by any
/// parser that expects text it cannot hold).
pub fn process_env(name: &str) -> Option<String> {
    std::env::var_os(name).map(|v| v.to_string_lossy().into_owned())
}

/// `1`, `true`, `yes`, `on` or `0`, `false`, `no`, `off` (any case), as clap's boolish flags.
pub fn boolish(v: &str) -> Result<bool, String> {
    // Without allocating: the allocation counter reads its switch through this.
    let v = v.trim();
    let is = |words: [&str; 4]| words.iter().any(|w| w.eq_ignore_ascii_case(v));
    if is(["1", "true", "yes", "on"]) {
        Ok(true)
    } else if is(["0", "false", "no", "off"]) {
        Ok(false)
    } else {
        Err("not a yes or no (allowed: 1, true, yes, on, 0, false, no, off)".into())
    }
}

/// Seconds, a finite number above 0 and at most a day.
pub fn silence_seconds(v: &str) -> Result<f64, String> {
    let allowed = "(allowed: seconds from 0.1 to 86400)";
    match v.trim().parse::<f64>() {
        Ok(s) if (0.1..=86_400.0).contains(&s) => Ok(s),
        Ok(_) => Err(format!("out of range {allowed}")),
        Err(_) => Err(format!("not a number {allowed}")),
    }
}

/// A step of nice, 0 to 19.
pub fn nice_step(v: &str) -> Result<i32, String> {
    match v.trim().parse::<i32>() {
        Ok(n) if (0..=19).contains(&n) => Ok(n),
        _ => Err("allowed: a whole number from 0 to 19, the steps of nice below the explorer its runs and builds take".into()),
    }
}

/// The most `--processes` takes.
pub const MAX_PROCESSES: usize = 50;

/// The number of runner processes.
pub fn processes(v: &str) -> Result<usize, String> {
    let max = MAX_PROCESSES;
    match v.trim().parse::<usize>() {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        _ => Err(format!("expected a whole number (allowed: 1..={max})")),
    }
}

/// `--processes`.
pub const PROCESSES: Var<usize> = Var {
    name: "BENCHSCOPE_PROCESSES",
    flag: Some("--processes"),
    parse: processes,
};

/// `--keep-cpus-awake`.
pub const KEEP_CPUS_AWAKE: Var<bool> = Var {
    name: "BENCHSCOPE_KEEP_CPUS_AWAKE",
    flag: Some("--keep-cpus-awake"),
    parse: boolish,
};

/// `--no-store`.
pub const NO_STORE: Var<bool> = Var {
    name: "BENCHSCOPE_NO_STORE",
    flag: Some("--no-store"),
    parse: boolish,
};

/// `--trace`.
pub const TRACE: Var<bool> = Var {
    name: "BENCH_TRACE",
    flag: Some("--trace"),
    parse: boolish,
};

/// How long a runner may say nothing before the front end stops it.
pub const SILENCE_S: Var<f64> = Var {
    name: "BENCHSCOPE_SILENCE_S",
    flag: None,
    parse: silence_seconds,
};

/// The steps of nice the explorer's runs take below it.
pub const RUNNER_NICE: Var<i32> = Var {
    name: "BENCHSCOPE_RUNNER_NICE",
    flag: None,
    parse: nice_step,
};

/// Whether allocations are counted (`off` or `0` turns counting off).
pub const COUNT_ALLOCS: Var<bool> = Var {
    name: "BENCHSCOPE_COUNT_ALLOCS",
    flag: None,
    parse: boolish,
};

/// Where the explorer appends each key's timings (`tests/soak/explorer-*.sh` read it): a
/// regular file, made if missing, opened without waiting.
pub const KEY_LOG: Var<std::path::PathBuf> = Var {
    name: "BENCHSCOPE_KEY_LOG",
    flag: None,
    parse: |v| {
        if v.is_empty() {
            Err("allowed: the path of a file the explorer appends to".into())
        } else {
            Ok(std::path::PathBuf::from(v))
        }
    },
};

/// Checks the settings that have no flag (a flag's own is checked where the flag is read):
/// the first refused, by name. A front end calls it before it starts anything.
pub fn check_environment() -> Result<(), VarError> {
    SILENCE_S.read()?;
    RUNNER_NICE.read()?;
    COUNT_ALLOCS.read()?;
    KEY_LOG.read()?;
    Ok(())
}

#[cfg(test)]
mod tests;
