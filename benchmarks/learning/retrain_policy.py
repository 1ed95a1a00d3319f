#!/usr/bin/env python3
"""Autotune with each retraining policy on the same apps, side by side.

Runs `gpusched tune --mode autotune` once per (app, --retrain policy) with
the same seeds, so batch 0 is the same search in every run and later batches
differ only by the weights each policy chose, then prints per batch the
weights used (embedded, kept, or retrained), Kendall's tau of the batch's
predictions against its measured times, the regret of the model's pick and
the batch's best time. Resumable: a run whose JSON exists is read back.

  benchmarks/learning/retrain_policy.py --gpusched build/cli/gpusched \\
      --apps harris,unsharp_mask --device opencl --batch 8 --iterations 5 --work W

Times on --device opencl are POCL's (a CPU), not a GPU's.
"""
import argparse
import json
import os
import subprocess
import sys


def run(args, app, policy):
    out = os.path.join(args.work, f"{app}-{policy}")
    js = out + ".json"
    if os.path.exists(js):
        with open(js) as f:
            return json.load(f)
    gen = os.path.join(args.build, "benchmarks", "apps", f"{app}.generator")
    cmd = [args.gpusched, "--json", "tune", gen, "-g", app, "--mode", "autotune", "--device", args.device,
           "--gpu", args.gpu, "--batch", str(args.batch), "--iterations", str(args.iterations),
           "--retrain", policy, "--seed", str(args.seed), "-o", out, "--db", out + ".sqlite"]
    print("+", " ".join(cmd), file=sys.stderr, flush=True)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    if r.returncode not in (0, 3):
        sys.exit(f"{app} {policy}: exit {r.returncode}")
    with open(js, "w") as f:
        f.write(r.stdout)
    return json.loads(r.stdout)


def fmt(v, spec):
    return "-" if v is None else format(v, spec)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gpusched", default="build/cli/gpusched")
    p.add_argument("--build", default="build")
    p.add_argument("--apps", default="harris,unsharp_mask")
    p.add_argument("--policies", default="always,if-better")
    p.add_argument("--device", default="opencl")
    p.add_argument("--gpu", default="h100")
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--iterations", type=int, default=5)
    p.add_argument("--seed", type=int, default=0, help="the runs' base seed (tune --seed)")
    p.add_argument("--work", required=True)
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    print("| app | --retrain | batch | weights | Kendall | regret | best ms | best so far ms |")
    print("|---|---|---|---|---|---|---|---|")
    for app in args.apps.split(","):
        for policy in args.policies.split(","):
            j = run(args, app, policy)
            so_far = None
            previous = None
            for b in j["batches"]:
                w = b["weights_id"]
                used = "embedded" if w is None else f"weights {w}"
                if b["batch"] > 0 and w == previous:
                    used += " (kept)"
                previous = w
                if b["best_ms"] is not None and (so_far is None or b["best_ms"] < so_far):
                    so_far = b["best_ms"]
                print(f"| {app} | {policy} | {b['batch']} | {used} | {fmt(b['kendall'], '.2f')} | "
                      f"{fmt(b['regret'], '.2f')} | {fmt(b['best_ms'], '.4g')} | {fmt(so_far, '.4g')} |")


if __name__ == "__main__":
    main()
