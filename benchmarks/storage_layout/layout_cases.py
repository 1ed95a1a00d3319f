#!/usr/bin/env python3
"""What storage layout decisions (issue 59) are worth, in the cost models' terms, on pipelines that
read an intermediate across its layout.

For each case (a generator and its params) and each cost model (the analytic model and the network
with its default weights) it runs the plugin four ways and reads the predicted cost from the record:

  with      the search as shipped (search_layouts on): its pick and the layouts it chose
  without   the search with search_layouts off
  same      the `with` pick's decisions replayed with every layout set back to the definition's:
            the same loops without the layout decision
  forced    (--force FUNC=DIM) the `without` pick replayed with FUNC stored DIM innermost, where
            that pick has FUNC at root or block level: what the layout would have cost those loops

  benchmarks/storage_layout/layout_cases.py --build build --json out.json [--md out.md]
      [--case NAME=GENERATOR:GENERATOR_NAME[:k=v,...]] [--force CASE:FUNC=DIM]

Predicted milliseconds on the profile given (--gpu, default h100), never measured times.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import halide_generator_args  # noqa: E402

DEFAULT_CASES = [
    # name, generator (relative to the build), generator name, generator params
    ("rotated_stack", "test/driver/driver_test_generators", "rotated_stack", {"width": 1536, "height": 2560}),
    ("iir_blur", "benchmarks/apps/iir_blur.generator", "iir_blur", {}),
]
DEFAULT_FORCED = {"iir_blur": [("anticausal_1", "y"), ("anticausal_2", "y"), ("transpose_1", "y")]}


def run_plugin(args, gen, name, params, work, config):
    os.makedirs(work, exist_ok=True)
    cfg = os.path.join(work, "config.json")
    rec = os.path.join(work, "record.json")
    with open(cfg, "w") as f:
        json.dump(dict(config, record_path=rec, gpu_profile=args.gpu), f)
    cmd = [gen, "-g", name, "-o", work, "-e", "schedule"] + \
        halide_generator_args.select_plugin(args.plugin, "gpusched") + \
        ["target=host-cuda-cuda_capability_86"] + ["{}={}".format(k, v) for k, v in params.items()]
    subprocess.run(cmd, check=True, env=dict(os.environ, GPUSCHED_CONFIG=cfg), stdout=subprocess.DEVNULL)
    with open(rec) as f:
        return json.load(f)


def layouts(record):
    """The Funcs the record stores another way: the dimension stored innermost, or "padded" (a shared
    tile whose dimension 0 is padded against bank conflicts)."""
    out = {d["func"]: d["storage_innermost"] for d in record["decisions"] if "storage_innermost" in d}
    out.update({d["func"]: "padded" for d in record["decisions"] if d.get("pad_shared")})
    return out


def replay(args, gen, name, params, work, model, decisions, source):
    """The predicted cost of `decisions` on the pipeline `source` (a record) was searched on, its
    reduction splits included."""
    path = os.path.join(work, "replayed-decisions.json")
    os.makedirs(work, exist_ok=True)
    with open(path, "w") as f:
        json.dump({"format": "gpusched-search-record", "version": 1, "decisions": decisions,
                   "reduction_splits": source.get("reduction_splits", [])}, f)
    return run_plugin(args, gen, name, params, work, dict(model, replay=path))["predicted_cost"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True)
    ap.add_argument("--plugin", help="default: BUILD/core/libgpusched_autoscheduler.so")
    ap.add_argument("--gpu", default="h100")
    ap.add_argument("--case", action="append", default=[])
    ap.add_argument("--force", action="append", default=[])
    ap.add_argument("--json", required=True)
    ap.add_argument("--md")
    ap.add_argument("--only-given", action="store_true", help="leave out the default cases")
    args = ap.parse_args()
    args.plugin = args.plugin or os.path.join(args.build, "core/libgpusched_autoscheduler.so")
    cases = [] if args.only_given else [(n, os.path.join(args.build, g), gn, p) for n, g, gn, p in DEFAULT_CASES]
    for c in args.case:
        name, rest = c.split("=", 1)
        parts = rest.split(":")
        params = dict(kv.split("=", 1) for kv in parts[2].split(",")) if len(parts) > 2 and parts[2] else {}
        cases.append((name, parts[0], parts[1], params))
    forced = {k: list(v) for k, v in DEFAULT_FORCED.items()}
    for f in args.force:
        case, rest = f.split(":", 1)
        func, dim = rest.split("=", 1)
        forced.setdefault(case, []).append((func, dim))
    models = [("analytic", {"cost_model": "analytic"}), ("network", {})]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for case, gen, gname, params in cases:
            for mname, model in models:
                work = os.path.join(tmp, case, mname)
                with_rec = run_plugin(args, gen, gname, params, os.path.join(work, "with"), model)
                without_rec = run_plugin(args, gen, gname, params, os.path.join(work, "without"),
                                         dict(model, search_layouts=False))
                plain = [{k: v for k, v in d.items() if k not in ("storage_innermost", "pad_shared")}
                         for d in with_rec["decisions"]]
                row = {"case": case, "model": mname, "params": params,
                       "with": with_rec["predicted_cost"], "layouts": layouts(with_rec),
                       "picked": with_rec.get("picked"),
                       "without": without_rec["predicted_cost"],
                       "seconds_with": with_rec["statistics"]["cpu_seconds_total"],
                       "seconds_without": without_rec["statistics"]["cpu_seconds_total"],
                       "same_loops_without_layouts": replay(args, gen, gname, params, os.path.join(work, "same"),
                                                            model, plain, with_rec) if layouts(with_rec) else None,
                       "forced": []}
                for func, dim in forced.get(case, []):
                    decisions = [dict(d) for d in without_rec["decisions"]]
                    target = [d for d in decisions if d["func"] == func]
                    if not target or target[0]["location"] not in ("root", "block"):
                        row["forced"].append({"func": func, "dim": dim, "cost": None,
                                              "why": "not at root or block level in the pick"})
                        continue
                    target[0]["storage_innermost"] = dim
                    cost = replay(args, gen, gname, params, os.path.join(work, "forced-" + func), model, decisions,
                                  without_rec)
                    row["forced"].append({"func": func, "dim": dim, "cost": cost,
                                          "location": target[0]["location"]})
                rows.append(row)
                print(json.dumps(row), flush=True)
    with open(args.json, "w") as f:
        json.dump({"gpu": args.gpu, "rows": rows}, f, indent=1)
    if args.md:
        with open(args.md, "w") as f:
            f.write("| case | model | with layouts | layouts chosen | the same loops without them | search without "
                    "layouts | search CPU s (with / without) |\n|---|---|---|---|---|---|---|\n")
            for r in rows:
                same = "{:.4g}".format(r["same_loops_without_layouts"]) if r["same_loops_without_layouts"] else "-"
                chosen = ", ".join("{} ({})".format(k, v if v == "padded" else v + " innermost")
                                   for k, v in r["layouts"].items()) or "none"
                f.write("| {} | {} | {:.4g} | {} | {} | {:.4g} | {:.2f} / {:.2f} |\n".format(
                    r["case"], r["model"], r["with"], chosen, same, r["without"], r["seconds_with"],
                    r["seconds_without"]))
            f.write("\nForced layouts on the pick without layouts (predicted ms; the pick's own cost is "
                    "'search without layouts' above):\n\n| case | model | Func | innermost | location | predicted |\n"
                    "|---|---|---|---|---|---|\n")
            for r in rows:
                for fo in r["forced"]:
                    f.write("| {} | {} | {} | {} | {} | {} |\n".format(
                        r["case"], r["model"], fo["func"], fo["dim"], fo.get("location", "-"),
                        "{:.4g}".format(fo["cost"]) if fo["cost"] is not None else fo["why"]))


if __name__ == "__main__":
    main()
