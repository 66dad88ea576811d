use clap::Parser;

fn main() {
    bench_core::service::init_logging();
    let args = bench_core::service::args::RunnerArgs::parse();
    std::process::exit(bench_core::workloads::core_main(args));
}
