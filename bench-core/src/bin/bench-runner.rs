use clap::Parser;

fn main() {
    bench_core::service::init_logging();
    let args = bench_core::service::args::RunnerArgs::parse();
    std::process::exit(bench_core::service::core_main(args));
}
