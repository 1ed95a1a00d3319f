#!/usr/bin/env python3
"""Search time of gpusched's plugin, as a user waits for it: one generator run
with `-e schedule` per pipeline, whole process CPU seconds (user + system, from
the kernel's rusage of the child) and peak RSS, beside the search's own record
(search CPU seconds, predicted cost, states featurized, region memo hits).

  search_time.py run --plugin LIB [--build-dir DIR] [--only a,b] [--gen LABEL=PATH[:GENERATOR][:key=value...]]...
                     [--mode beam|greedy|both] [--timeout S] [--json OUT] [--compare RECORDED.json] [--max-slowdown F]
  search_time.py compare RECORDED.json NEW.json [--max-slowdown F]

--build-dir takes the standard set from a build with GPUSCHED_BUILD_BENCHMARKS:
the suite's 17 apps, a 5-level pyramid (benchmarks/search_time) and five small
deep random pipelines (32 stage draws, pyramids and scans); --gen adds others
(Halide's own app generators, say). `run` measures; with --compare it then
checks against recorded figures (recorded-halide14.json beside this script).
`compare` checks two files written by `run --json`. The check fails (exit 1)
when a pipeline that finished in the recorded run now takes more than F times
its recorded process CPU (default 2, plus 0.5 s of slack for sub-second runs),
no longer finishes, or has a worse predicted cost (the same weights must give
the same or a cheaper schedule). Pipelines only in one file are listed, not
judged.

Beam: the plugin's defaults (beam 32 x 5, seed 0, the launch check on), as a
generator run with gpusched as its autoscheduler does. Greedy: beam 1, 1
pass, dropout 0.2, seed 1, as One Shot's samples. Halide 14's generator
protocol (-s gpusched auto_schedule=true).
"""
import argparse, json, math, os, platform, subprocess, sys, tempfile, time

SUITE = ["bilateral_grid", "local_laplacian", "nl_means", "lens_blur", "camera_pipe", "stencil_chain", "harris",
         "histogram_equalize", "max_filter", "unsharp_mask", "interpolate", "conv_layer", "sgemm", "iir_blur", "bgu",
         "depthwise_separable_conv", "learned_demosaic"]
MODES = {"beam": {"seed": 0},
         "greedy": {"beam_size": 1, "passes": 1, "seed": 1, "dropout": 0.2}}
RANDOM = [(f"random_s{seed}", [f"seed={seed}", "max_stages=32", "size=small", "pyramids=true", "scans=true"])
          for seed in range(1, 6)]
SLACK_S = 0.5
COST_TOLERANCE = 1e-6  # relative: predicted costs are deterministic for a seed


def parse_gen(spec):
    """LABEL=PATH[:GENERATOR][:key=value...] -> (label, path, generator, params)."""
    if "=" not in spec:
        sys.exit(f"search_time: --gen {spec!r}: expected LABEL=PATH[:GENERATOR][:key=value...]")
    label, rest = spec.split("=", 1)
    parts = rest.split(":")
    path, generator, params = parts[0], label, []
    for p in parts[1:]:
        if "=" in p:
            params.append(p)
        else:
            generator = p
    if not os.access(path, os.X_OK):
        sys.exit(f"search_time: --gen {label}: {path} is not an executable generator")
    return label, path, generator, params


def measure(path, generator, params, plugin, cfg, timeout):
    import resource
    work = tempfile.mkdtemp(prefix="gs-time-")
    rec_path = os.path.join(work, "record.json")
    cfg_path = os.path.join(work, "config.json")
    with open(cfg_path, "w") as f:
        json.dump(dict(cfg, record_path=rec_path), f)
    cmd = [path, "-g", generator, "-o", work, "-e", "schedule", "-p", plugin, "-s", "gpusched", "target=host-cuda",
           "auto_schedule=true"] + params
    # One child at a time: the growth of RUSAGE_CHILDREN is this child's CPU.
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    child = subprocess.Popen(cmd, env=dict(os.environ, GPUSCHED_CONFIG=cfg_path), stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
    try:
        _, err = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        return {"status": "timeout", "timeout_s": timeout}
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if child.returncode != 0 or not os.path.exists(rec_path):
        return {"status": "failed", "rc": child.returncode, "stderr": err[-2000:]}
    rec = json.load(open(rec_path))
    s = rec["statistics"]
    return {"status": "ok",
            "process_cpu": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
            "process_wall": wall,
            "peak_rss_mb": s["peak_rss_mb"],  # the generator's own peak, as the plugin read it after the search
            "search_cpu": s["cpu_seconds_total"], "cost": rec["predicted_cost"],
            "states": s["states_featurized"], "region_memo_hits": s.get("region_memo_hits", 0),
            "region_memo_misses": s.get("region_memo_misses", 0)}


def geomean(xs):
    return math.exp(sum(math.log(max(x, 1e-3)) for x in xs) / len(xs)) if xs else float("nan")


def compare(recorded, new, max_slowdown):
    """Prints one line per pipeline in both files; returns the failures."""
    failures = []
    for mode in sorted(set(recorded.get("results", {})) & set(new.get("results", {}))):
        old_m, new_m = recorded["results"][mode], new["results"][mode]
        for label in old_m:
            if label not in new_m:
                print(f"{mode:6} {label:28} only in the recorded figures")
                continue
            o, n = old_m[label], new_m[label]
            if o["status"] != "ok":
                print(f"{mode:6} {label:28} recorded as {o['status']}: not judged")
                continue
            if n["status"] != "ok":
                failures.append(f"{mode} {label}: finished in the recorded run, now {n['status']}")
                print(f"{mode:6} {label:28} {n['status'].upper()}")
                continue
            ratio = n["process_cpu"] / max(o["process_cpu"], 1e-3)
            verdict = "ok"
            if n["process_cpu"] > max_slowdown * o["process_cpu"] + SLACK_S:
                verdict = "SLOWER"
                failures.append(f"{mode} {label}: {n['process_cpu']:.2f} s CPU, recorded {o['process_cpu']:.2f} s "
                                f"({ratio:.2f}x, more than {max_slowdown}x)")
            if n["cost"] > o["cost"] * (1 + COST_TOLERANCE):
                verdict = "WORSE" if verdict == "ok" else verdict + "+WORSE"
                failures.append(f"{mode} {label}: predicted cost {n['cost']:.6g}, recorded {o['cost']:.6g}")
            print(f"{mode:6} {label:28} cpu {o['process_cpu']:7.2f} -> {n['process_cpu']:7.2f} s ({ratio:5.2f}x)  "
                  f"cost {o['cost']:.5g} -> {n['cost']:.5g}  {verdict}")
        for label in new_m:
            if label not in old_m:
                print(f"{mode:6} {label:28} new: no recorded figure")
    return failures


def cmd_run(a):
    plugin = os.path.abspath(a.plugin)
    if not os.path.exists(plugin):
        sys.exit(f"search_time: plugin {plugin} does not exist (build the gpusched_autoscheduler target)")
    pipelines = []
    if a.build_dir:
        for app in SUITE:
            pipelines.append((app, os.path.join(a.build_dir, "benchmarks/apps", app + ".generator"), app, []))
        pipelines.append(("pyramid5", os.path.join(a.build_dir, "benchmarks/search_time/pyramid.generator"),
                          "pyramid", ["levels=5"]))
        rp = os.path.join(a.build_dir, "benchmarks/random_pipeline/random_pipeline.generator")
        pipelines += [(label, rp, "random_pipeline", params) for label, params in RANDOM]
        for label, path, _, _ in pipelines:
            if not os.access(path, os.X_OK):
                sys.exit(f"search_time: {path} is not an executable generator (configure with "
                         f"-DGPUSCHED_BUILD_BENCHMARKS=ON and build it) for {label}")
    pipelines += [parse_gen(g) for g in a.gen]
    if a.only:
        wanted = set(a.only.split(","))
        unknown = wanted - {p[0] for p in pipelines}
        if unknown:
            sys.exit(f"search_time: --only names no pipeline of this run: {', '.join(sorted(unknown))}")
        pipelines = [p for p in pipelines if p[0] in wanted]
    if not pipelines:
        sys.exit("search_time: no pipeline to measure (give --build-dir or --gen)")
    modes = ["beam", "greedy"] if a.mode == "both" else [a.mode]
    out = {"machine": {"host": platform.node(), "cpus": os.cpu_count(), "load_at_start": os.getloadavg()[0]},
           "pipelines": {p[0]: {"generator": os.path.basename(p[1]), "name": p[2], "params": p[3]} for p in pipelines},
           "results": {}}
    for m in modes:
        res = out["results"].setdefault(m, {})
        for label, path, generator, params in pipelines:
            r = measure(path, generator, params, plugin, MODES[m], a.timeout)
            res[label] = r
            if r["status"] == "ok":
                print(f"{m:6} {label:28} process cpu {r['process_cpu']:7.2f} s  search cpu {r['search_cpu']:7.2f} s  "
                      f"{r['peak_rss_mb']:5.0f} MiB  cost {r['cost']:.5g}  states {r['states']}  "
                      f"region memo {r['region_memo_hits']}/{r['region_memo_hits'] + r['region_memo_misses']}",
                      flush=True)
            else:
                print(f"{m:6} {label:28} {r['status']} {r.get('stderr', '')[-300:]}", flush=True)
            if a.json:
                with open(a.json, "w") as f:
                    json.dump(out, f, indent=1)
        ok = [r["process_cpu"] for r in res.values() if r["status"] == "ok"]
        print(f"{m}: geomean process CPU {geomean(ok):.3f} s over {len(ok)} finished of {len(res)}", flush=True)
    if a.compare:
        return report(json.load(open(a.compare)), out, a.max_slowdown)
    return 0


def report(recorded, new, max_slowdown):
    failures = compare(recorded, new, max_slowdown)
    if failures:
        print("search_time: slower or worse than the recorded figures:", file=sys.stderr)
        for f in failures:
            print("  " + f, file=sys.stderr)
        return 1
    print("search_time: within the recorded figures")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--plugin", required=True)
    r.add_argument("--build-dir")
    r.add_argument("--only")
    r.add_argument("--gen", action="append", default=[])
    r.add_argument("--mode", default="beam", choices=["beam", "greedy", "both"])
    r.add_argument("--timeout", type=float, default=600)
    r.add_argument("--json")
    r.add_argument("--compare")
    r.add_argument("--max-slowdown", type=float, default=2.0)
    c = sub.add_parser("compare")
    c.add_argument("recorded")
    c.add_argument("new")
    c.add_argument("--max-slowdown", type=float, default=2.0)
    a = ap.parse_args()
    if a.cmd == "run":
        return cmd_run(a)
    return report(json.load(open(a.recorded)), json.load(open(a.new)), a.max_slowdown)


if __name__ == "__main__":
    sys.exit(main())
