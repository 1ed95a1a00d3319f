#!/usr/bin/env python3
"""Markdown tables for docs/results/top5-<gpu>.md and autotune-<gpu>.md from the files
benchmarks/gpu_verification/run.sh leaves in its WORK folder.

usage: figures.py WORK

Top 5, per app: each benchmarked sample (predicted rank and cost, min and median ms, repetitions,
output check, spills) and each baseline, then one table across apps: gpusched's pick against
each baseline, and the rank correlation of the predictions with the measured medians of the
benchmarked samples. Autotune, per app: the tuning curve (per batch: samples, measured, best,
best so far, correlation and regret of the model that searched it), the baselines, and the
speedup over batch 0's beam sample with the default weights, which is One Shot's search.
Reads the JSON outputs of `gpusched --json tune` and the database they wrote (samples.sqlite).
"""
import glob
import json
import os
import sqlite3
import sys


def fmt(v, digits=4):
    return "-" if v is None else f"{v:.{digits}g}"


def ranks(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    r = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r


def spearman(xs, ys):
    if len(xs) < 2:
        return None
    rx, ry = ranks(xs), ranks(ys)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    num = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    den = (sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry)) ** 0.5
    return None if den == 0 else num / den


def top5(paths):
    """Prints each app's table and the table across apps; returns the reports
    that parsed, for yardsticks()."""
    print("## Top 5\n")
    summary = []
    reports = []
    for path in paths:
        try:
            j = json.load(open(path))
            reports.append(j)
        except ValueError:
            # tune failed and printed no JSON: its log's last line says why.
            log = path[: -len(".json")] + ".log"
            last = open(log).read().strip().splitlines()[-1:] if os.path.exists(log) else ["no log"]
            print(f"### {os.path.basename(path).split('.')[0]}: no result\n\n`{last[0] if last else ''}`\n")
            continue
        app = j["generator_name"]
        print(f"### {app} on {j['device']}\n")
        print(f"{j['samples']} samples searched and compiled in {j['batch_seconds']:.1f} s, "
              f"{j['usable']} usable, {j['spillers_dropped']} dropped for spilling ({j['spill_check']}); "
              f"benchmarks {j['benchmark_seconds']:.1f} s; end to end {j['seconds']:.1f} s.\n")
        print("| schedule | predicted rank | predicted cost | min ms | median ms | reps | output | spill bytes |")
        print("|---|---|---|---|---|---|---|---|")
        for e in j["benchmarked"] + j["baselines"]:
            m = e["measurement"]
            if m["outcome"] != "measured":
                print(f"| {e['label']} | {e['predicted_rank'] or '-'} | {fmt(e['predicted_cost'])} | "
                      f"{m['outcome']}: {m['error'][:80]} | | | | {e['spill_bytes']} |")
                continue
            print(f"| {e['label']} | {e['predicted_rank'] or '-'} | {fmt(e['predicted_cost'])} | "
                  f"{fmt(m['min_ms'])} | {fmt(m['median_ms'])} | {m['reps']} | {m['validation']} | "
                  f"{e['spill_bytes']} |")
        measured = [e for e in j["benchmarked"] if e["measurement"]["outcome"] == "measured"]
        best = min((e["measurement"]["median_ms"] for e in measured), default=None)
        rho = spearman([e["predicted_cost"] for e in measured], [e["measurement"]["median_ms"] for e in measured])
        base = {e["source"]: e["measurement"].get("median_ms") for e in j["baselines"]
                if e["measurement"]["outcome"] == "measured"}
        summary.append((app, best, base, rho, len(measured)))
        print()
    names = sorted({n for s in summary for n in s[2]})
    print("### Across apps\n")
    print("| app | gpusched Top 5 ms | " + " | ".join(f"{n} ms | speedup over {n}" for n in names) +
          " | Spearman (predicted, measured), n |")
    print("|---|---|" + "---|---|" * len(names) + "---|")
    for app, best, base, rho, n in summary:
        cells = []
        for name in names:
            b = base.get(name)
            cells += [fmt(b), f"{b / best:.2f}x" if b and best else "-"]
        print(f"| {app} | {fmt(best)} | " + " | ".join(cells) + f" | {fmt(rho, 3)}, {n} |")
    print()
    return reports


# The yardsticks' order in the table (issue 56); a source a run did not
# time is a "-" cell, so a missing row shows.
YARDSTICKS = ["naive", "li2018", "mullapudi2016", "anderson2021", "anderson2021-paper", "manual"]


def yardsticks(reports):
    """One row per app: the GPU profile's roofline, gpusched's One Shot pick
    (predicted rank 1) and Top 5 pick (the fastest of its measured samples),
    and every baseline, each median with its multiple of the roofline where
    the times are a GPU's."""
    rows = []
    for j in reports:
        gpu = j.get("roofline_ms") is not None
        bound = j.get("profile_roofline_ms")

        def cell(e):
            if e is None:
                return "-"
            m = e["measurement"]
            if m["outcome"] != "measured":
                return m["outcome"]
            text = fmt(m["median_ms"])
            if m["validation"] != "passed":
                text += f" (output {m['validation']})"
            if gpu and bound:
                text += f" ({m['median_ms'] / bound:.1f}x)"
            return text

        measured = [e for e in j["benchmarked"] if e["measurement"]["outcome"] == "measured"]
        one_shot = next((e for e in j["benchmarked"] if e["predicted_rank"] == 1), None)
        top5_pick = min(measured, key=lambda e: e["measurement"]["median_ms"], default=None)
        base = {e["source"]: e for e in j["baselines"]}
        rows.append([j["generator_name"], fmt(bound), cell(one_shot), cell(top5_pick)] +
                    [cell(base.get(n)) for n in YARDSTICKS] + [str(j["chosen"])])
    if not rows:
        return
    print("### Every yardstick\n")
    print("Median ms of each schedule; on a GPU, in parentheses, its multiple of the roofline (the GPU "
          "profile's least time, core/roofline.h). On POCL the times are a CPU's and the roofline column "
          "is the GPU's bound alone.\n")
    print("| app | roofline ms | One Shot pick | Top 5 pick | " + " | ".join(YARDSTICKS) + " | kept |")
    print("|---|---|---|---|" + "---|" * len(YARDSTICKS) + "---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    print()


def autotune(paths, db):
    print("## Autotune\n")
    for path in paths:
        j = json.load(open(path))
        app = os.path.basename(path).split(".")[0]
        print(f"### {app} on {j['device']}: run {j['run_id']}, {j['end']}"
              f"{' (' + j['stopped_by'] + ')' if j['stopped_by'] else ''}\n")
        print(f"{j['samples']} samples ({j['measured']} measured, {j['failed']} failed, {j['spilled']} spilled) in "
              f"{j['seconds']:.0f} s = {60 * j['samples'] / j['seconds']:.1f} samples/min; retraining "
              f"{j['retrain_seconds']:.1f} s in all.\n")
        print("| batch | samples | measured | best ms | best so far ms | Spearman | Kendall | regret | retrain s |")
        print("|---|---|---|---|---|---|---|---|---|")
        so_far = None
        for b in j["batches"]:
            if b["best_ms"] is not None and (so_far is None or b["best_ms"] < so_far):
                so_far = b["best_ms"]
            print(f"| {b['batch']} | {b['samples']} | {b['measured']} | {fmt(b['best_ms'])} | {fmt(so_far)} | "
                  f"{fmt(b['spearman'], 3)} | {fmt(b['kendall'], 3)} | {fmt(b['regret'], 3)} | "
                  f"{fmt(b['retrain_s'], 2)} |")
        one_shot = None
        if db:
            row = db.execute("SELECT runtime_median_ms FROM samples WHERE run_id = ? AND batch = 0 AND idx = 0 "
                             "AND status = 'ok' AND validation = 'passed'", (j["run_id"],)).fetchone()
            one_shot = row[0] if row else None
        print()
        best = j["best_ms"]
        print("| compared with | median ms | autotune's best is faster by |")
        print("|---|---|---|")
        faster = f"{one_shot / best:.2f}x" if one_shot and best else "-"
        print(f"| batch 0's beam sample (One Shot's search) | {fmt(one_shot)} | {faster} |")
        for b in j.get("baselines", []):
            faster = f"{b['median_ms'] / best:.2f}x" if b["median_ms"] and best else b["problem"] or "-"
            print(f"| {b['source']} | {fmt(b['median_ms'])} | {faster} |")
        print()


def main(work):
    db_path = os.path.join(work, "samples.sqlite")
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True) if os.path.exists(db_path) else None
    t = sorted(glob.glob(os.path.join(work, "*.top5.json")))
    a = sorted(glob.glob(os.path.join(work, "*.autotune.json")))
    machine = os.path.join(work, "machine.txt")
    if os.path.exists(machine):
        print("Machine:\n\n```\n" + "".join(l for l in open(machine) if not l.startswith("cost model")) + "```\n")
    if t:
        yardsticks(top5(t))
    if a:
        autotune(a, db)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
