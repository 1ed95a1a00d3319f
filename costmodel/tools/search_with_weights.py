#!/usr/bin/env python3
"""End-to-end check of cost-model weights: what the search picks with them.

For each app and each weights file, runs the plugin's beam search (the
shipped configuration: beam 32, 5 passes, seed 0) guided by those weights,
then replays the chosen decisions under a judge cost model (default: the
analytic GPU model, the teacher the default weights are fitted to) and
reports the judge's cost of each pick and its GPU fill (core/gpu_fill.h). Ranking metrics on held-out states
(gpusched_fit_default_weights --report) say how well weights order states;
this says whether the search then lands on better schedules.

  search_with_weights.py --gen-dir DIR --plugin LIB --weights NAME=FILE ... [--weights NAME=default]
                         [--search-plugin NAME=LIB] [--apps a,b] [--judge analytic] [--timeout S] [-o OUT.md]

--search-plugin lets one weights name search with another build of the
plugin (an older featurizer), while every pick is still judged by --plugin's
judge: the same judge for picks of two featurizations.
"""
import argparse, json, math, os, subprocess, sys, tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../benchmarks"))
from halide_generator_args import select_plugin  # noqa: E402

SUITE = ["bilateral_grid", "local_laplacian", "nl_means", "lens_blur", "camera_pipe", "stencil_chain", "harris",
         "histogram_equalize", "max_filter", "unsharp_mask", "interpolate", "conv_layer", "sgemm", "iir_blur", "bgu",
         "depthwise_separable_conv", "learned_demosaic"]


def run_generator(gen_dir, plugin, app, cfg, work, timeout):
    cfg_path = os.path.join(work, "config.json")
    with open(cfg_path, "w") as f:
        json.dump(cfg, f)
    cmd = ([os.path.join(gen_dir, app + ".generator"), "-g", app, "-o", work, "-e", "schedule", "target=host-cuda"] +
           select_plugin(plugin, "gpusched"))
    p = subprocess.run(cmd, env=dict(os.environ, GPUSCHED_CONFIG=cfg_path), capture_output=True, text=True,
                       timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError(f"{app}: generator failed: {p.stderr[-500:]}")
    return json.load(open(cfg["record_path"]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gen-dir", required=True)
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--weights", action="append", required=True, help="NAME=FILE, FILE 'default' = embedded")
    ap.add_argument("--apps", default=",".join(SUITE))
    ap.add_argument("--extra", action="append", default=[],
                    help="NAME=JSON: more plugin config keys for that weights name, e.g. "
                         "'noatomic={\"atomic_reductions\": false}'")
    ap.add_argument("--search-plugin", action="append", default=[],
                    help="NAME=LIB: the plugin build that searches for that weights name (default --plugin); "
                         "its pick is judged by --plugin")
    ap.add_argument("--judge", default="analytic")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("-o", "--out")
    a = ap.parse_args()
    plugin = os.path.abspath(a.plugin)
    models = [w.split("=", 1) for w in a.weights]
    extra = {}
    for e in a.extra:
        name, keys = e.split("=", 1)
        extra[name] = json.loads(keys)
    searcher = {}
    for e in a.search_plugin:
        name, lib = e.split("=", 1)
        searcher[name] = os.path.abspath(lib)
    rows = []
    for app in a.apps.split(","):
        row = {"app": app}
        for name, path in models:
            work = tempfile.mkdtemp(prefix=f"gs-sww-{app}-{name}-")
            cfg = {"record_path": os.path.join(work, "search.json")}
            if path != "default":
                cfg["weights_path"] = os.path.abspath(path)
            cfg.update(extra.get(name, {}))
            rec = run_generator(a.gen_dir, searcher.get(name, plugin), app, cfg, work, a.timeout)
            judged = run_generator(a.gen_dir, plugin, app,
                                   {"record_path": os.path.join(work, "judged.json"), "replay": cfg["record_path"],
                                    "cost_model": a.judge}, work, a.timeout)
            fill = rec.get("gpu_fill", {})
            row[name] = {"predicted": rec["predicted_cost"], "judge": judged["predicted_cost"],
                         "cpu": rec["statistics"]["cpu_seconds_total"],
                         "fill": fill.get("weighted"), "least_fill": fill.get("least"),
                         "splits": [(s["func"], s["level"], s["partials"]) + (("atomic",) if s.get("atomic") else ())
                                    for s in rec.get("reduction_splits", [])]}
        rows.append(row)
        print(json.dumps(row), flush=True)

    names = [n for n, _ in models]
    base = names[0]
    L = [f"| app | " + " | ".join(f"{n}: {a.judge} cost of the pick (ms)" for n in names) +
         " | " + " | ".join(f"{n} / {base}" for n in names[1:]) +
         " | " + " | ".join(f"{n}: GPU fill, weighted / least" for n in names) + " |",
         "|---|" + "---:|" * (3 * len(names) - 1)]
    ratios = {n: [] for n in names[1:]}
    for r in rows:
        cells = [f"{r[n]['judge']:.4f}" for n in names]
        for n in names[1:]:
            q = r[n]["judge"] / r[base]["judge"]
            ratios[n].append(q)
            cells.append(f"{q:.3f}")
        for n in names:
            f, least = r[n].get("fill"), r[n].get("least_fill")
            cells.append("-" if f is None else f"{100 * f:.3g}% / {100 * least:.3g}%")
        L.append(f"| {r['app']} | " + " | ".join(cells) + " |")
    geo = {n: math.exp(sum(math.log(x) for x in v) / len(v)) for n, v in ratios.items() if v}
    L.append("")
    L.append("Geomean " + ", ".join(f"{n} / {base}: {g:.3f}" for n, g in geo.items()) +
             f" (< 1: the search picks schedules the {a.judge} model judges faster).")
    text = "\n".join(L) + "\n"
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    sys.exit(main())
