//! `benchscope run`: the headless front end. Spawns the runner, shows progress on stderr,
//! prints the comparison in the chosen format: planned and checked (plan.rs), run (run.rs),
//! reported (report.rs), with the exit status decided here.

mod args;
mod plan;
mod report;
mod run;

pub use args::*;

/// The exit status of `run`, in one place: 2 bad input, 1 a failure (a bench, a file, the set-up),
/// 3 a regression against the baseline, 128 + the signal that ended it, else 0.
pub fn run(args: RunArgs) -> i32 {
    let ended = plan::plan(&args).and_then(|mut p| {
        let x = run::execute(&args, &mut p)?;
        Ok(report::report(&args, p, x))
    });
    match ended {
        Err(e) => {
            crate::out::say!("error: {e}");
            match e {
                Error::Input(_) => 2,
                Error::Start(_) => 1,
            }
        }
        Ok(report::Ended {
            interrupted,
            failed,
            write_failed,
            regressed,
        }) => match interrupted {
            // The conventional status of a process ended by a signal, once what finished is out.
            Some(sig) => 128 + sig,
            None if failed || write_failed => 1,
            None if regressed => 3,
            None => 0,
        },
    }
}
