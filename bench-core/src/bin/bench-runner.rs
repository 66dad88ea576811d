use clap::Parser;

fn main() {
    bench_core::runner::init_logging();
    let args = bench_core::runner::RunnerArgs::parse();
    std::process::exit(bench_core::runner::main_with(args));
}
