//! A runner's budget as numbers: its bounds (the same for flags and a run request), and the
//! share each of several runner processes is given.

use crate::protocol::Budget;

/// The least warm-up a process of several gets, in seconds (unless the whole is less).
pub const PROCESS_WARMUP_S: f64 = 0.1;

/// The least samples a process of several takes (unless the whole asks fewer): a paired
/// ratio's interval needs six pairs.
pub const PROCESS_MIN_SAMPLES: usize = 6;

/// The most seconds of samples a bench is given (`--time`, `--time-for`).
pub const MAX_TIME_S: f64 = 3600.0;
/// The most seconds of warm-up (`--warmup`).
pub const MAX_WARMUP_S: f64 = 600.0;
/// The most samples a bench takes (`--samples`, `--min-samples`).
pub const MAX_SAMPLES: usize = 1_000_000;
/// The most benches of a paired group (`--paired-group`).
pub const MAX_GROUP: usize = 10_000;

/// The budget each of `processes` runners is given, one after another: a share of the time
/// (and of each bench's own), of the most and of the least samples (but at least
/// [`PROCESS_MIN_SAMPLES`], what a paired ratio needs, unless the whole asks fewer), and of the
/// warm-up (at least 0.1 s, a process starts cold).
pub fn process_share(whole: &Budget, processes: usize) -> Budget {
    let mut b = whole.clone();
    if processes > 1 {
        let p = processes as f64;
        let least = whole
            .min_samples
            .div_ceil(processes)
            .max(whole.min_samples.min(PROCESS_MIN_SAMPLES));
        b.time_s = whole.time_s / p;
        b.warmup_s = (whole.warmup_s / p).max(whole.warmup_s.min(PROCESS_WARMUP_S));
        b.max_samples = whole.max_samples.div_ceil(processes).max(least);
        b.min_samples = least;
        for s in b.times.values_mut() {
            *s /= p;
        }
    }
    b
}
