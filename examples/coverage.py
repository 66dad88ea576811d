#!/usr/bin/env python3
"""Does a run's interval hold what the next run reads?

Runs one `benchscope run` command N times (JSON export each), then for every bench counts
the (run, other run) pairs whose other run's ratio to the baseline bench lies inside this
run's 95% interval of that ratio, and the spread of the ratio over the runs.

    python3 examples/coverage.py --runs 6 -- target/release/benchscope run single_row_lookup ...

The command must not carry --format or -o: this script adds them.
"""
import argparse, json, os, statistics, subprocess, sys, tempfile, time

p = argparse.ArgumentParser()
p.add_argument("--runs", type=int, default=6)
p.add_argument("--keep", help="folder for the runs' JSON (default: a temporary one)")
p.add_argument("command", nargs="+")
a = p.parse_args()
folder = a.keep or tempfile.mkdtemp(prefix="coverage.")
os.makedirs(folder, exist_ok=True)
ratios = {}  # bench -> [(ratio, lo, hi)] per run
took = []
for i in range(a.runs):
    out = os.path.join(folder, f"run{i}.json")
    t = time.monotonic()
    subprocess.run(a.command + ["--no-store", "--format", "json", "-o", out], check=True,
                   stderr=subprocess.DEVNULL)
    took.append(time.monotonic() - t)
    run = json.load(open(out))["runs"][0]
    for b in run["benches"]:
        paired = b.get("paired")
        if not paired:
            continue
        r = paired[1]
        ratios.setdefault(b["name"], []).append((r["median"], r["ci95"][0], r["ci95"][1],
                                                 len(r.get("processes", [])) or 1))
print(f"{a.runs} runs, {statistics.median(took):.1f} s each (median; {min(took):.1f}-{max(took):.1f})")
print("| bench | ratio over runs | spread | interval half-width | other runs inside |")
print("|---|---|---|---|---|")
for name, rs in ratios.items():
    vals = [r[0] for r in rs]
    inside = sum(1 for i, (_, lo, hi, _) in enumerate(rs) for j, (v, *_) in enumerate(rs)
                 if i != j and lo <= v <= hi)
    pairs = len(rs) * (len(rs) - 1)
    halves = [(hi - lo) / 2 / m * 100 for m, lo, hi, _ in rs]
    print(f"| {name} | {min(vals):.3f}-{max(vals):.3f} | {(max(vals) / min(vals) - 1) * 100:.1f}% "
          f"| {min(halves):.1f}-{max(halves):.1f}% | {inside} of {pairs} |")
