use clap::Parser;

/// Counts every allocation of a runner (memory per operation); off until the runner starts
/// measuring.
#[global_allocator]
static ALLOC: bench_core::measure::memory::Counting = bench_core::measure::memory::Counting::SYSTEM;

fn main() {
    bench_core::service::init_logging();
    let args = bench_core::service::args::RunnerArgs::parse();
    std::process::exit(bench_core::service::core_main(args));
}
