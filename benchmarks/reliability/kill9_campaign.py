#!/usr/bin/env python3
"""kill -9 at random points of Autotune runs, each resumed (issue 29).

Each run is a real `gpusched tune --mode autotune --device opencl` of the demo
pipeline (POCL: no GPU needed), in a database of its own. A calibration run
without a kill gives the length L of a whole run; every other run is killed
with SIGKILL (the driver only, as the kernel's OOM killer or a crashing
driver would: its generator and benchmark children are orphaned and may
still finish) at a time drawn uniformly from [0.03 L, 0.97 L], so the kills
land in the search, the builds, the benchmarks, the database writes and the
retraining in proportion to the time each takes. The phase is read from the
last line the driver logged before it died.

Then `gpusched tune --resume RUN` finishes the run, and the database is
checked: PRAGMA integrity_check; every (batch, idx) of the run exactly once;
every sample committed before the kill still there with the same id and
content (none lost, none rewritten); the run finished.

Usage:
  benchmarks/reliability/kill9_campaign.py [--runs 20] [--build-dir build]
      [--work-dir kill9-out] [--seed 1] [-o table.md]

Exit status 0 when every run passes every check, 1 otherwise.
"""

import argparse
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time

ITERATIONS, BATCH = 3, 4


def tune_args(gpusched, generator, out_dir, db):
    return [gpusched, "tune", generator, "-g", "demo_sharpen", "--mode", "autotune", "--device", "opencl",
            "--gpu", "h100", "--iterations", str(ITERATIONS), "--batch", str(BATCH), "--beam-size", "2",
            "--passes", "1", "-j", "2", "--min-time", "0.005", "--max-reps", "20", "--epochs", "20",
            "-o", out_dir, "--db", db]


def committed(db):
    """Every stored sample of the database as (id, run, batch, idx, status, benchmark)."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return con.execute("SELECT id, run_id, batch, idx, status, benchmark FROM samples ORDER BY id").fetchall()
    finally:
        con.close()


def integrity(db):
    con = sqlite3.connect(db)
    try:
        return con.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        con.close()


def run_status(db, run_id):
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        row = con.execute("SELECT status FROM runs WHERE id = ?", (run_id,)).fetchone()
        return row[0] if row else None
    finally:
        con.close()


def phase_of(log_text):
    """The last event the driver logged before it died, and the line.

    Autotune logs one line per event, "<time> <event> | <progress>": a sample
    compiled ("batch 0 sample 3: predicted ..."), a sample timed (its median),
    a batch done, the model retrained. The kill fell after that event and
    before the next."""
    lines = [l for l in log_text.splitlines() if l.strip()]
    last = lines[-1] if lines else ""
    event = last.split(" | ")[0]
    if len(lines) <= 1:
        return "starting (nothing logged)", last
    if "retrain" in event or "weights" in event:
        return "after a retraining", last
    if "predicted" in event:
        return "after a sample compiled", last
    if "done" in event or "finished" in event:
        return "after a batch finished", last
    if " ms" in event or "median" in event or "measured" in event or "failed" in event:
        return "after a sample was timed", last
    return "after: " + event[21:60], last


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--work-dir", default="kill9-out")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-o", "--output", help="Markdown table to write (default: stdout)")
    a = ap.parse_args()
    if a.runs < 1:
        sys.exit("kill9_campaign: --runs must be at least 1")
    gpusched = os.path.abspath(os.path.join(a.build_dir, "cli", "gpusched"))
    generator = os.path.abspath(os.path.join(a.build_dir, "benchmarks", "demo", "demo_sharpen.generator"))
    for path in (gpusched, generator):
        if not os.access(path, os.X_OK):
            sys.exit(f"kill9_campaign: {path} is not built (scripts/build.sh)")
    rng = random.Random(a.seed)
    os.makedirs(a.work_dir, exist_ok=True)

    # Calibration: one whole run, unkilled.
    cal = os.path.join(a.work_dir, "calibration")
    os.makedirs(cal, exist_ok=True)
    t0 = time.monotonic()
    r = subprocess.run(tune_args(gpusched, generator, os.path.join(cal, "out"), os.path.join(cal, "db.sqlite")),
                       capture_output=True, text=True)
    length = time.monotonic() - t0
    if r.returncode != 0:
        sys.exit(f"kill9_campaign: the calibration run failed (exit {r.returncode}): {r.stderr[-500:]}")
    print(f"calibration: a whole run takes {length:.1f} s", file=sys.stderr)

    rows, failures = [], 0
    for i in range(1, a.runs + 1):
        d = os.path.abspath(os.path.join(a.work_dir, f"run-{i:02d}"))
        os.makedirs(d, exist_ok=True)
        db, out, log = os.path.join(d, "db.sqlite"), os.path.join(d, "out"), os.path.join(d, "killed.log")
        for f in (db, db + "-wal", db + "-shm"):
            if os.path.exists(f):
                os.remove(f)
        at = rng.uniform(0.03 * length, 0.97 * length)
        with open(log, "w") as logf:
            p = subprocess.Popen(tune_args(gpusched, generator, out, db), stdout=logf, stderr=subprocess.STDOUT)
            try:
                p.wait(timeout=at)
                finished_first = True
            except subprocess.TimeoutExpired:
                p.send_signal(signal.SIGKILL)
                p.wait()
                finished_first = False
        phase, last = phase_of(open(log).read())
        problems = []
        if finished_first:
            phase = "finished before the kill"
        if not os.path.exists(db):
            before = []
            problems_db = "no database yet"
        else:
            problems_db = integrity(db)
            before = committed(db)
        if problems_db not in ("ok", "no database yet"):
            problems.append(f"after the kill: integrity_check {problems_db}")
        # The run to resume: the database's only run (none if killed before it was stored).
        resumed, resume_exit = False, None
        run_id = None
        if os.path.exists(db):
            con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
            row = con.execute("SELECT id FROM runs ORDER BY id DESC LIMIT 1").fetchone()
            con.close()
            run_id = row[0] if row else None
        if run_id is not None and not finished_first:
            rr = subprocess.run([gpusched, "tune", "--mode", "autotune", "--device", "opencl", "--resume", str(run_id),
                                 "-o", out, "--db", db, "-j", "2"], capture_output=True, text=True)
            resumed, resume_exit = True, rr.returncode
            if rr.returncode != 0:
                problems.append(f"resume exit {rr.returncode}: {rr.stderr.strip().splitlines()[-1:]}")
        elif run_id is None:
            # Killed before the run was stored: nothing to resume; a new run is the user's next step.
            rr = subprocess.run(tune_args(gpusched, generator, out, db), capture_output=True, text=True)
            resume_exit = rr.returncode
            if rr.returncode != 0:
                problems.append(f"rerun exit {rr.returncode}")
            con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
            run_id = con.execute("SELECT id FROM runs ORDER BY id DESC LIMIT 1").fetchone()[0]
            con.close()
        after = committed(db)
        final_integrity = integrity(db)
        if final_integrity != "ok":
            problems.append(f"integrity_check {final_integrity}")
        keys = [(s[2], s[3]) for s in after if s[1] == run_id]
        duplicated = len(keys) - len(set(keys))
        expected = {(b, k) for b in range(ITERATIONS) for k in range(BATCH)}
        missing = len(expected - set(keys))
        after_by_id = {s[0]: s for s in after}
        # A sample committed before the kill is kept as it was (a benchmark
        # that had not been stored may be added to it, nothing else changes).
        lost = sum(1 for s in before if s[0] not in after_by_id
                   or after_by_id[s[0]][:5] != s[:5] or (s[5] is not None and after_by_id[s[0]][5] != s[5]))
        status = run_status(db, run_id)
        if duplicated:
            problems.append(f"{duplicated} duplicated")
        if missing:
            problems.append(f"{missing} (batch, idx) missing")
        if lost:
            problems.append(f"{lost} committed samples lost or changed")
        if status != "finished":
            problems.append(f"run status {status}")
        failures += bool(problems)
        rows.append({"run": i, "kill_at_s": round(at, 1), "phase": phase, "last_line": last[:90],
                     "committed_before": len(before), "after": len(keys), "duplicated": duplicated,
                     "lost": lost, "integrity": final_integrity, "resume_exit": resume_exit,
                     "verdict": "ok" if not problems else "; ".join(problems)})
        print(f"run {i}: killed at {at:.1f} s ({phase}), {len(before)} committed, {len(keys)} after: "
              f"{rows[-1]['verdict']}", file=sys.stderr)

    md = [f"{a.runs} Autotune runs of demo_sharpen on POCL ({ITERATIONS} batches x {BATCH} samples), each killed "
          f"with SIGKILL at a uniform random time in [3%, 97%] of a whole run ({length:.1f} s), then resumed "
          f"with --resume. Seed {a.seed}.", "",
          "| run | kill at (s) | phase | samples committed at the kill | samples after resume | duplicated | lost "
          "| integrity_check | verdict |", "|---|---|---|---|---|---|---|---|---|"]
    for r_ in rows:
        md.append(f"| {r_['run']} | {r_['kill_at_s']} | {r_['phase']} | {r_['committed_before']} | {r_['after']} "
                  f"| {r_['duplicated']} | {r_['lost']} | {r_['integrity']} | {r_['verdict']} |")
    phases = {}
    for r_ in rows:
        phases[r_["phase"]] = phases.get(r_["phase"], 0) + 1
    md += ["", "Kills by phase: " + ", ".join(f"{k} {v}" for k, v in sorted(phases.items())) + ".",
           f"Runs with every check passed: {a.runs - failures} of {a.runs}."]
    text = "\n".join(md) + "\n"
    if a.output:
        with open(a.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    with open(os.path.join(a.work_dir, "rows.json"), "w") as f:
        json.dump(rows, f, indent=1)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
