-- Where a run's runners ran. cpus: the CPUs they were confined to (`--cpus`, as `0-1,3`),
-- NULL on every CPU. cpu_idle: what idle CPUs did, 'slept', 'held' (kept polling, as asked)
-- or 'unavailable' (asked, but the limit could not be set: they slept); NULL for runs
-- recorded before it was kept (their CPUs slept).
ALTER TABLE runs ADD COLUMN cpus TEXT;
ALTER TABLE runs ADD COLUMN cpu_idle TEXT;
