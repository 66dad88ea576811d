#!/usr/bin/env python3
"""How often does a verdict say what is true?

Saves one baseline, then makes tries of `benchscope run ... --baseline NAME --interleave N`
against it: some with the same set-up (any verdict but "within noise" is false), some with a
set-up known to differ (`--knob cache_size=35`, about 5% slower on the lookup). Prints each
try's verdict and wall time, and the counts.

    python3 examples/verdicts.py --binary target/release/benchscope --same 20 --differ 10
"""
import argparse, collections, re, subprocess, tempfile, time

p = argparse.ArgumentParser()
p.add_argument("--binary", default="target/release/benchscope")
p.add_argument("--same", type=int, default=20)
p.add_argument("--differ", type=int, default=10)
p.add_argument("--bench", default="rusqlite")
p.add_argument("--change", default="cache_size=35", help="the knob that makes the real difference")
p.add_argument("--rounds", default="10")
a = p.parse_args()
base = ["run", "single_row_lookup", "--rows", "1000", "--lookups", "1000", "--bench", a.bench,
        "--time", "0.2", "--warmup", "0.05", "--min-samples", "5", "--no-store"]
folder = tempfile.mkdtemp(prefix="verdicts.")
subprocess.run([a.binary, *base, "--save-baseline", "base", "--baseline-dir", folder],
               check=True, capture_output=True)


def verdict(stderr):
    """The verdict of the interleaved comparison, from its count line ("0 regressed, 0
    improved, 1 within noise, 0 cannot tell ...")."""
    for line in stderr.splitlines():
        m = re.match(r"(\d+) regressed, (\d+) improved, (\d+) within noise, (\d+) cannot tell", line)
        if m:
            names = ["regressed", "improved", "within noise", "cannot tell"]
            return ", ".join(n for n, c in zip(names, m.groups()) if c != "0")
    return "none"


for kind, tries, extra in [("same", a.same, []), ("differ", a.differ, ["--knob", a.change])]:
    counts = collections.Counter()
    took = []
    for i in range(tries):
        t = time.monotonic()
        r = subprocess.run([a.binary, *base, *extra, "--baseline", "base", "--baseline-dir",
                            folder, "--interleave", a.rounds, "--format", "json"],
                           capture_output=True, text=True)
        took.append(time.monotonic() - t)
        v = verdict(r.stderr)
        counts[v] += 1
        print(f"{kind} {i + 1}: {v} ({took[-1]:.1f} s)", flush=True)
    print(f"{kind}: {dict(counts)}; {min(took):.1f}-{max(took):.1f} s a try")
