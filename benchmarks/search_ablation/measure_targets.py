#!/usr/bin/env python3
"""Issue #4 targets check: the everything-on beam search (32 x 5) and one
greedy sample (beam 1, 1 pass, dropout 0.2 with seed 1, as tuner/oneshot.cpp
runs its samples) on every suite app; prints search CPU seconds, peak RSS,
predicted cost and states featurized per app, and the geomeans.

  measure_targets.py --gen-dir DIR --plugin LIB [--apps a,b] [--timeout S]
                     [--mode beam|greedy|both] [--json OUT]
"""
import argparse, json, math, os, subprocess, sys, tempfile

SUITE = ["bilateral_grid", "local_laplacian", "nl_means", "lens_blur", "camera_pipe", "stencil_chain", "harris",
         "histogram_equalize", "max_filter", "unsharp_mask", "interpolate", "conv_layer", "sgemm", "iir_blur", "bgu",
         "depthwise_separable_conv", "learned_demosaic"]
MODES = {"beam": {"beam_size": 32, "passes": 5, "seed": 0},
         "greedy": {"beam_size": 1, "passes": 1, "seed": 1, "dropout": 0.2}}


def run(gen_dir, plugin, app, cfg, timeout):
    work = tempfile.mkdtemp(prefix="gs-" + app + "-")
    rec = os.path.join(work, "record.json")
    cfg_path = os.path.join(work, "config.json")
    with open(cfg_path, "w") as f:
        json.dump(dict(cfg, record_path=rec), f)
    cmd = [os.path.join(gen_dir, app + ".generator"), "-g", app, "-o", work, "-e", "schedule", "-p", plugin,
           "-s", "gpusched", "target=host-cuda", "auto_schedule=true"]
    try:
        p = subprocess.run(cmd, env=dict(os.environ, GPUSCHED_CONFIG=cfg_path), capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"status": "timeout"}
    if p.returncode != 0 or not os.path.exists(rec):
        return {"status": "failed", "stderr": p.stderr[-2000:]}
    r = json.load(open(rec))
    s = r["statistics"]
    return {"status": "ok", "cpu": s["cpu_seconds_total"], "wall": s["seconds_total"], "mib": s["peak_rss_mb"],
            "cost": r["predicted_cost"], "states": s["states_featurized"], "frozen": s.get("funcs_frozen", 0)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gen-dir", required=True)
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--apps", default=",".join(SUITE))
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--mode", default="both", choices=["beam", "greedy", "both"])
    ap.add_argument("--json")
    a = ap.parse_args()
    modes = ["beam", "greedy"] if a.mode == "both" else [a.mode]
    out = {}
    for m in modes:
        for app in a.apps.split(","):
            r = run(a.gen_dir, os.path.abspath(a.plugin), app, MODES[m], a.timeout)
            out.setdefault(m, {})[app] = r
            if r["status"] == "ok":
                print(f"{m:6} {app:26} cpu {r['cpu']:7.2f} s  wall {r['wall']:7.2f} s  {r['mib']:6.0f} MiB  "
                      f"cost {r['cost']:.4f}  states {r['states']}  frozen {r['frozen']}", flush=True)
            else:
                print(f"{m:6} {app:26} {r['status']} {r.get('stderr', '')[-300:]}", flush=True)
            if a.json:
                json.dump(out, open(a.json, "w"), indent=1)
        ok = [r["cpu"] for r in out[m].values() if r["status"] == "ok"]
        if ok:
            g = math.exp(sum(math.log(max(c, 1e-3)) for c in ok) / len(ok))
            print(f"{m}: geomean CPU {g:.3f} s over {len(ok)} finished of {len(out[m])}, max {max(ok):.2f} s",
                  flush=True)


if __name__ == "__main__":
    main()
