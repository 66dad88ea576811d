-- One row per finished run; `record` holds everything the runner reported (samples, summaries,
-- phases, settings read back) as JSON, the other columns what history filters and orders by.
CREATE TABLE runs (
    id BIGSERIAL PRIMARY KEY,
    run_key TEXT NOT NULL UNIQUE,
    recorded_at TEXT NOT NULL,
    machine_id TEXT NOT NULL,
    machine_name TEXT NOT NULL,
    cpu TEXT NOT NULL,
    cores INTEGER NOT NULL,
    kernel TEXT NOT NULL,
    steal DOUBLE PRECISION,
    commit_sha TEXT,
    dirty BOOLEAN,
    label TEXT,
    target TEXT NOT NULL,
    knobs TEXT NOT NULL,
    build_profile TEXT NOT NULL,
    profiled BOOLEAN NOT NULL,
    source TEXT,
    record TEXT NOT NULL
);
CREATE INDEX runs_by_target ON runs (target, recorded_at);
CREATE INDEX runs_by_machine ON runs (machine_id);

-- One row per bench of a run, with its summary's figures in ns per operation.
CREATE TABLE bench_results (
    run_id BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    bench TEXT NOT NULL,
    status TEXT NOT NULL,
    median_ns DOUBLE PRECISION,
    ci_low_ns DOUBLE PRECISION,
    ci_high_ns DOUBLE PRECISION,
    samples INTEGER NOT NULL,
    PRIMARY KEY (run_id, bench)
);
CREATE INDEX bench_results_by_bench ON bench_results (bench);
