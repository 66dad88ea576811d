-- Allocations per operation of each finished bench, where its runner counted them (runs
-- recorded before, or by a runner whose driver brings its own allocator: NULL).
ALTER TABLE bench_results ADD COLUMN allocs_per_op DOUBLE PRECISION;
