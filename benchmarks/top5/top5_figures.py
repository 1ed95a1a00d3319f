#!/usr/bin/env python3
"""Figures for docs/results/top5-pocl.md from `gpusched --json tune --mode top5` output.

usage: top5_figures.py TOP5.json [TOP5.json ...]

Per run: samples per minute through the batch (search + CUDA compile + ptxas), benchmarks per
minute through the benchmark phase (CPU reference, builds, benchmarks), and end to end. Per
benchmark: the harness's own time around the timed calls. That is the process's wall time, as
the driver saw it, minus the timed repetitions, split into setup (arguments, random inputs,
bounds query), the input copy to the device, the first call (module load and JIT), the output
check (copy back, write, compare with the CPU reference), the warm-up call, and the rest
(process start and exit, loading the libraries).
"""
import json
import sys


def main(paths):
    for path in paths:
        with open(path) as f:
            j = json.load(f)
        entries = j["benchmarked"] + j["baselines"]
        print(f"## {j['generator_name']} on {j['device']} ({path})\n")
        n = j["samples"]
        benchmarks = len(entries)
        print(f"- batch: {n} samples in {j['batch_seconds']:.1f} s = {60 * n / j['batch_seconds']:.1f} samples/min")
        print(f"- benchmark phase: {benchmarks} benchmarks (reference, builds, runs) in {j['benchmark_seconds']:.1f} s"
              f" = {60 * benchmarks / j['benchmark_seconds']:.1f} benchmarks/min")
        print(f"- end to end: {n} samples, top {len(j['benchmarked'])} measured, {len(j['baselines'])} baselines"
              f" in {j['seconds']:.1f} s = {60 * n / j['seconds']:.1f} samples/min\n")
        print("| schedule | predicted rank | min ms | median ms | reps | build s | process s | timed s |"
              " setup s | input copy s | first call s | output check s | warm-up s | rest s | harness overhead |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for e in entries:
            m = e["measurement"]
            if m["outcome"] != "measured":
                print(f"| {e['label']} | {e['predicted_rank'] or '-'} | {m['outcome']} | | | | | | | | | | | | |")
                continue
            wall = m["wall_seconds"]
            timed = m["timed_ms"] / 1000
            first = m["first_call_ms"] / 1000
            copy = m["input_copy_ms"] / 1000
            warm = m["median_ms"] / 1000  # one warm-up call
            setup = m.get("setup_ms", 0) / 1000
            check = m.get("check_ms", 0) / 1000
            rest = wall - timed - first - copy - warm - setup - check
            print(f"| {e['label']} | {e['predicted_rank'] or '-'} | {m['min_ms']:.4g} | {m['median_ms']:.4g} |"
                  f" {m['reps']} | {e['build_seconds']:.2f} | {wall:.2f} | {timed:.3f} | {setup:.3f} | {copy:.3f} |"
                  f" {first:.3f} | {check:.3f} | {warm:.3f} | {rest:.2f} | {wall - timed:.2f} s"
                  f" ({(wall - timed) / wall:.0%}) |")
        print()


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
