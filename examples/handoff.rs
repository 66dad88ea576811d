//! What a hand-off to another thread costs on this machine, with no SQLite and no benchscope
//! in the way: a CPU-bound loop, a round trip through tokio's blocking pool, and one through
//! a thread of its own (as a connection's worker thread does), taking turns sample by sample
//! for about a second; medians per operation, and each hand-off in loops.
//!
//! ```sh
//! cargo run --release --example handoff -- kernel   # threads where the kernel puts them
//! cargo run --release --example handoff -- one-cpu  # every thread on the first usable CPU
//! cargo run --release --example handoff -- split    # this thread on one CPU, the others on another
//! ```
//!
//! Run it several times, alternating: how far its figures move from process to process is
//! how far no order of measuring can take out of a hand-off's ratio on the machine.

use std::hint::black_box;
use std::time::{Duration, Instant};

/// A few hundred dependent multiply-adds: CPU-bound work of a few tens of nanoseconds.
fn work(seed: u64) -> u64 {
    (0..400).fold(seed, |x, i| {
        x.wrapping_mul(6364136223846793005).wrapping_add(i)
    })
}

fn pin(cpu: usize) {
    // SAFETY: a zeroed cpu_set_t is an empty set; CPU_SET and sched_setaffinity only read it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        let size = std::mem::size_of::<libc::cpu_set_t>();
        if libc::sched_setaffinity(0, size, &set) != 0 {
            eprintln!("cannot pin a thread to CPU {cpu}");
            std::process::exit(2);
        }
    }
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_else(|| "kernel".into());
    let cpus = bench_core::protocol::env::usable_cpus();
    let (mine, others) = match mode.as_str() {
        "kernel" => (None, None),
        "one-cpu" => (Some(cpus[0]), Some(cpus[0])),
        "split" if cpus.len() >= 2 => (Some(cpus[0]), Some(cpus[1])),
        "split" => {
            eprintln!(
                "split needs two usable CPUs, this process has {}",
                cpus.len()
            );
            std::process::exit(2);
        }
        other => {
            eprintln!("invalid mode \"{other}\": expected kernel, one-cpu or split");
            std::process::exit(2);
        }
    };
    if let Some(c) = mine {
        pin(c);
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .on_thread_start(move || {
            if let Some(c) = others {
                pin(c)
            }
        })
        .build()
        .expect("a tokio runtime");
    let (to_worker, jobs) = std::sync::mpsc::channel::<(u64, tokio::sync::oneshot::Sender<u64>)>();
    std::thread::spawn(move || {
        if let Some(c) = others {
            pin(c)
        }
        for (seed, reply) in jobs {
            let _ = reply.send(work(seed));
        }
    });
    const OPS: u64 = 200;
    let per_op = |t: Instant| t.elapsed().as_nanos() as f64 / OPS as f64;
    let (mut inline, mut blocking, mut worker) = (Vec::new(), Vec::new(), Vec::new());
    runtime.block_on(async {
        let end = Instant::now() + Duration::from_secs(1);
        while Instant::now() < end || inline.len() < 3 {
            let t = Instant::now();
            for i in 0..OPS {
                black_box(work(black_box(i)));
            }
            inline.push(per_op(t));
            let t = Instant::now();
            for i in 0..OPS {
                black_box(tokio::task::spawn_blocking(move || work(i)).await.unwrap());
            }
            blocking.push(per_op(t));
            let t = Instant::now();
            for i in 0..OPS {
                let (reply, answer) = tokio::sync::oneshot::channel();
                to_worker.send((i, reply)).unwrap();
                black_box(answer.await.unwrap());
            }
            worker.push(per_op(t));
        }
    });
    let (a, b, c) = (median(inline), median(blocking), median(worker));
    println!(
        "{mode}: loop {a:.0} ns, spawn_blocking {b:.0} ns ({:.1} loops), own thread {c:.0} ns ({:.1} loops)",
        b / a,
        c / a
    );
}
