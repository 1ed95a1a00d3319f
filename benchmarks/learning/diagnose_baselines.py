#!/usr/bin/env python3
"""Why the cost model's pick loses to a baseline (issue 55), per app, from a
kept Top 5 database of GPU measurements.

For every app of the database it reads, as measured on the GPU: One Shot's
pick (the measured sample the model ranked first), Top 5's pick (the fastest
measured sample), and the naive and Li2018 baselines. For the naive schedule
it asks the search itself: the app's generator runs with the plugin and
`naive_only` (core/naive_schedule.h), which costs and emits the naive
schedule in the search's own decisions; its featurization and record are
kept beside the database (`--naive-dir`), so the table can be derived again
from kept files only (`--naive-dir` without `--generator-dir`). Both
featurizations go through gpusched_explain_cost, which splits each predicted
cost into the formula's terms (c_i x term_i summed over stages): the terms
that differ most say what the model charges the naive schedule for.

  diagnose_baselines.py --db h200-top5-session30.sqlite --gpu h200 \\
      --explain build/costmodel/gpusched_explain_cost \\
      --naive-dir benchmarks/learning/data/naive-h200 \\
      [--generator-dir build/benchmarks/apps --plugin build/core/libgpusched_autoscheduler.so [--replay-picks]] \\
      [--weights FILE] [--json out.json] > table.md
"""
import argparse
import json
import lzma
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import halide_generator_args  # noqa: E402

SUITE = ["bilateral_grid", "local_laplacian", "nl_means", "lens_blur", "camera_pipe", "stencil_chain",
         "harris", "histogram_equalize", "max_filter", "unsharp_mask", "interpolate", "conv_layer", "sgemm",
         "iir_blur", "bgu", "depthwise_separable_conv", "learned_demosaic"]
NOISE = 1.05  # a baseline "wins" when the pick is more than 5% slower


def open_db(path, tmp):
    if path.endswith(".xz"):
        out = os.path.join(tmp, os.path.basename(path)[:-3])
        with lzma.open(path) as src, open(out, "wb") as dst:
            shutil.copyfileobj(src, dst)
        path = out
    return sqlite3.connect(path)


def measured_by_app(db):
    """Per app: the gpusched samples measured (id, predicted, median, blob) and each baseline's median."""
    apps = {}
    rows = db.execute(
        "SELECT p.generator_name, r.autoscheduler, s.id, s.predicted_cost, s.runtime_median_ms, s.featurization, "
        "s.decisions "
        "FROM samples s JOIN runs r ON r.id = s.run_id JOIN pipelines p ON p.id = r.pipeline_id "
        "WHERE s.runtime_median_ms IS NOT NULL AND s.validation = 'passed'")
    for app, source, sid, predicted, median, blob, record in rows:
        a = apps.setdefault(app, {"samples": [], "baselines": {}})
        if source == "gpusched":
            a["samples"].append({"id": sid, "predicted": predicted, "ms": median, "blob": blob, "record": record})
        else:
            a["baselines"][source] = min(median, a["baselines"].get(source, float("inf")))
    return apps


def run_plugin(app, args, work, config, params=None):
    """The app's generator (with its generator params) and the plugin under config; returns its
    featurization's path."""
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, "config.json")
    with open(path, "w") as f:
        json.dump(config, f)
    cmd = [os.path.join(args.generator_dir, app + ".generator"), "-g", app, "-o", work, "-e",
           "schedule,featurization"] + halide_generator_args.select_plugin(args.plugin, "gpusched") + \
        ["target=host-cuda-cuda_capability_86"] + ["{}={}".format(k, v) for k, v in (params or {}).items()]
    subprocess.run(cmd, check=True, env=dict(os.environ, GPUSCHED_CONFIG=path), stdout=subprocess.DEVNULL)
    return os.path.join(work, app + ".featurization")


def naive_state(app, args, tmp):
    """The naive schedule's featurization and record for app: made by the plugin, or kept."""
    feat = os.path.join(args.naive_dir, app + ".featurization")
    rec = os.path.join(args.naive_dir, app + ".record.json")
    if args.generator_dir:
        made = run_plugin(app, args, os.path.join(tmp, "naive-" + app),
                          {"naive_only": True, "gpu_profile": args.gpu, "record_path": rec})
        shutil.copyfile(made, feat)
    with open(rec) as f:
        return feat, json.load(f)


def explain(files, args):
    cmd = [args.explain, "--gpu", args.gpu] + (["--weights", args.weights] if args.weights else []) + files
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", required=True)
    ap.add_argument("--gpu", required=True, help="the built-in profile of the GPU the database measured")
    ap.add_argument("--explain", required=True, help="gpusched_explain_cost")
    ap.add_argument("--naive-dir", required=True, help="kept naive featurizations and records")
    ap.add_argument("--generator-dir", help="make them again with the suite's generators")
    ap.add_argument("--plugin", help="libgpusched_autoscheduler.so (with --generator-dir)")
    ap.add_argument("--weights", help="weights file (default: the embedded defaults)")
    ap.add_argument("--replay-picks", action="store_true",
                    help="featurize each pick again by replaying its stored record (needs --generator-dir): "
                         "the features of today's featurizer rather than the stored ones")
    ap.add_argument("--apps", default=",".join(SUITE))
    ap.add_argument("--json", help="write every figure here too")
    args = ap.parse_args()
    if args.generator_dir and not args.plugin:
        ap.error("--generator-dir needs --plugin")
    if args.replay_picks and not args.generator_dir:
        ap.error("--replay-picks needs --generator-dir")
    os.makedirs(args.naive_dir, exist_ok=True)

    out = []
    with tempfile.TemporaryDirectory() as tmp:
        apps = measured_by_app(open_db(args.db, tmp))
        for app in args.apps.split(","):
            a = apps.get(app)
            if not a or not a["samples"]:
                continue
            pick = min(a["samples"], key=lambda s: s["predicted"])
            top5 = min(a["samples"], key=lambda s: s["ms"])
            naive_ms = a["baselines"].get("naive")
            li_ms = a["baselines"].get("li2018")
            feat, rec = naive_state(app, args, tmp)
            pick_file = os.path.join(tmp, app + ".pick.featurization")
            if args.replay_picks:
                # The pick's stored record replayed: its features as today's featurizer computes them.
                record = os.path.join(tmp, app + ".pick.record.json")
                with open(record, "w") as f:
                    f.write(pick["record"])
                pick_file = run_plugin(app, args, os.path.join(tmp, "pick-" + app),
                                       {"replay": record, "gpu_profile": args.gpu})
            else:
                with open(pick_file, "wb") as f:
                    f.write(pick["blob"])
            pick_x, naive_x = explain([pick_file, feat], args)
            terms = sorted(set(pick_x["terms"]) | set(naive_x["terms"]),
                           key=lambda t: -abs(naive_x["terms"].get(t, 0) - pick_x["terms"].get(t, 0)))
            out.append({
                "app": app, "pick_ms": pick["ms"], "top5_ms": top5["ms"], "naive_ms": naive_ms,
                "li2018_ms": li_ms, "pick_predicted": pick_x["predicted_cost"],
                "naive_predicted": naive_x["predicted_cost"],
                "naive_stages": len(naive_x["stages"]), "pick_stages": len(pick_x["stages"]),
                "terms": [{"term": t, "pick": pick_x["terms"].get(t, 0), "naive": naive_x["terms"].get(t, 0)}
                          for t in terms[:3]],
            })

    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    print("| app | One Shot pick ms | naive ms | Li2018 ms | baseline wins | predicted pick | predicted naive | "
          "model orders pick vs naive | terms that differ most (naive − pick, ms) |")
    print("|---|---:|---:|---:|---|---:|---:|---|---|")
    right = 0
    for r in out:
        wins = [n for n, ms in (("naive", r["naive_ms"]), ("li2018", r["li2018_ms"]))
                if ms is not None and r["pick_ms"] > NOISE * ms]
        ordered = (r["naive_predicted"] < r["pick_predicted"]) == (r["naive_ms"] < r["pick_ms"])
        right += ordered
        terms = ", ".join("{} {:+.3g}".format(t["term"], t["naive"] - t["pick"]) for t in r["terms"])
        print("| {} | {:.4g} | {} | {} | {} | {:.4g} | {:.4g} | {} | {} |".format(
            r["app"], r["pick_ms"], "{:.4g}".format(r["naive_ms"]) if r["naive_ms"] else "-",
            "{:.4g}".format(r["li2018_ms"]) if r["li2018_ms"] else "-", ", ".join(wins) or "-",
            r["pick_predicted"], r["naive_predicted"], "yes" if ordered else "**no**", terms))
    print("\nThe model orders One Shot's pick against naive as measured on {} of {} apps.".format(right, len(out)))


if __name__ == "__main__":
    main()
