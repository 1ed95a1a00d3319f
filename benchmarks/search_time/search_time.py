#!/usr/bin/env python3
"""Search time of gpusched's plugin, as a user waits for it: one generator run
with `-e schedule` per pipeline, whole process CPU seconds (user + system) and
peak RSS from the kernel's rusage of the child (wait4), beside the search's
own record (search CPU seconds, predicted cost, states featurized, region
memo hits). With --scheduler anderson2021 (its defaults at beam 32 x 5) or
anderson2021-paper (also randomize_tilings=1 freeze_inline_compute_root=1),
the same for Halide's own Anderson2021 on a Halide 16 or later: the
side-by-side table of the search against the reference, in one Halide
(`table` writes it from the runs' JSON files): of the whole generator
process, or (--measure call, runs made with --timed) of the autoscheduler's
own call, the span the paper's Table 4 compares. Anderson2021 reports its
own call's time only at HL_DEBUG_AUTOSCHEDULE=1, where it also writes
megabytes of log that more than double that time (unsharp_mask: 5.4 s
reported, 1.7 s for the whole process without the log), so --timed LIB
loads a timing plugin beside either scheduler (timed_autoscheduler.cpp,
built with the benchmarks) that calls it and measures the call's CPU.

  search_time.py run [--plugin LIB | --scheduler anderson2021|anderson2021-paper]
                     [--build-dir DIR] [--only a,b] [--gen LABEL=PATH[:GENERATOR][:key=value...]]...
                     [--mode beam|greedy|both] [--timeout S] [--json OUT] [--compare RECORDED.json] [--max-slowdown F]
                     [--set KEY=JSON]... [--timed LIB]
  search_time.py compare RECORDED.json NEW.json [--max-slowdown F]
  search_time.py pipeline LABEL --build-dir DIR
  search_time.py table GPUSCHED.json REFERENCE.json... [--mode beam|greedy] [--measure process|call|autoschedule]

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
pass, dropout 0.2, seed 1, as One Shot's samples. The generators' Halide is
the plugin's (benchmarks/halide_generator_args.py reads it from the plugin),
and so is the way a generator is told to use it (14: -s NAME
auto_schedule=true; 16 on: autoscheduler=NAME, autoscheduler.KEY=VALUE).
"""
import argparse, json, math, os, platform, shutil, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from halide_generator_args import autoscheduler_args, halide_major, select_plugin  # noqa: E402

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


# Halide's own Anderson2021 (Halide 16 and later) as the reference, at the
# same beam as gpusched's defaults: its own defaults, and the paper's
# settings (Anderson et al. 2021, sec. 6).
REFERENCES = {
    "anderson2021": {"beam_size": 32, "num_passes": 5},
    "anderson2021-paper": {"beam_size": 32, "num_passes": 5, "randomize_tilings": 1,
                           "freeze_inline_compute_root": 1},
}


def run_reaped(cmd, env, timeout, stderr_path):
    """Runs cmd and reaps it with wait4, for its own CPU time and peak RSS
    (those of the children it waited for included). Returns (rusage, exit
    status, wall seconds, stderr), rusage None on a timeout."""
    start = time.monotonic()
    with open(stderr_path, "w") as errf:
        child = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=errf)
    while True:
        pid, status, ru = os.wait4(child.pid, os.WNOHANG)
        if pid == child.pid:
            break
        if time.monotonic() - start > timeout:
            child.kill()
            os.wait4(child.pid, 0)
            child.returncode = -9
            return None, None, None, None
        time.sleep(0.05)
    child.returncode = os.waitstatus_to_exitcode(status)
    return ru, child.returncode, time.monotonic() - start, open(stderr_path).read()


def standard_set(build_dir):
    """The standard set's pipelines in a build with GPUSCHED_BUILD_BENCHMARKS:
    (label, generator path, generator name, params) each."""
    pipelines = [(app, os.path.join(build_dir, "benchmarks/apps", app + ".generator"), app, []) for app in SUITE]
    pipelines.append(("pyramid5", os.path.join(build_dir, "benchmarks/search_time/pyramid.generator"),
                      "pyramid", ["levels=5"]))
    rp = os.path.join(build_dir, "benchmarks/random_pipeline/random_pipeline.generator")
    pipelines += [(label, rp, "random_pipeline", params) for label, params in RANDOM]
    for label, path, _, _ in pipelines:
        if not os.access(path, os.X_OK):
            sys.exit(f"search_time: {path} is not an executable generator (configure with "
                     f"-DGPUSCHED_BUILD_BENCHMARKS=ON and build it) for {label}")
    return pipelines


def measure(path, generator, params, scheduler, cfg, timeout, timed=None):
    """One generator run with -e schedule. scheduler: ("gpusched", plugin)
    or (reference name, its plugin). timed: the timing plugin
    (timed_autoscheduler.cpp), which then wraps the scheduler's call and
    gives its CPU seconds (call_cpu) and wall seconds (call_wall)."""
    work = tempfile.mkdtemp(prefix="gs-time-")
    try:
        return measure_in(work, path, generator, params, scheduler, cfg, timeout, timed)
    finally:
        shutil.rmtree(work, ignore_errors=True)  # the schedule, record and logs: read above


def measure_in(work, path, generator, params, scheduler, cfg, timeout, timed):
    """measure() in the folder `work`."""
    kind, plugin = scheduler
    rec_path = os.path.join(work, "record.json")
    cfg_path = os.path.join(work, "config.json")
    timed_path = os.path.join(work, "timed.json")
    env = dict(os.environ)
    name, options = "gpusched", None
    if kind == "gpusched":
        with open(cfg_path, "w") as f:
            json.dump(dict(cfg, record_path=rec_path), f)
        env["GPUSCHED_CONFIG"] = cfg_path
    else:
        name, options = "Anderson2021", REFERENCES[kind]
    if timed:
        env.update(GPUSCHED_TIMED_INNER=name, GPUSCHED_TIMED_RECORD=timed_path)
        select = ["-p", f"{plugin},{timed}"] + autoscheduler_args(halide_major(plugin), "timed", options)
    else:
        select = select_plugin(plugin, name, options)
    cmd = [path, "-g", generator, "-o", work, "-e", "schedule", "target=host-cuda"] + select + params
    ru, status, wall, err = run_reaped(cmd, env, timeout, os.path.join(work, "stderr.txt"))
    if ru is None:
        return {"status": "timeout", "timeout_s": timeout}
    if status != 0:
        return {"status": "failed", "rc": status, "stderr": err[-2000:]}
    out = {"status": "ok", "process_cpu": ru.ru_utime + ru.ru_stime, "process_wall": wall,
           "peak_rss_mb": ru.ru_maxrss / 1024.0}  # Linux reports KiB
    if timed:
        if not os.path.exists(timed_path):
            return {"status": "failed", "rc": status, "stderr": "the timing plugin wrote nothing\n" + err[-2000:]}
        t = json.load(open(timed_path))
        out.update({"call_cpu": t["cpu_seconds"], "call_wall": t["seconds"]})
    if kind != "gpusched":
        return out
    if not os.path.exists(rec_path):
        return {"status": "failed", "rc": status, "stderr": "no search record written\n" + err[-2000:]}
    rec = json.load(open(rec_path))
    s = rec["statistics"]
    if "seconds_autoschedule" in s:
        out.update({"autoschedule_s": s["seconds_autoschedule"],
                    "autoschedule_cpu": s["cpu_seconds_autoschedule"]})
    out.update({"search_cpu": s["cpu_seconds_total"], "cost": rec["predicted_cost"],
                "states": s["states_featurized"], "region_memo_hits": s.get("region_memo_hits", 0),
                "region_memo_misses": s.get("region_memo_misses", 0)})
    split = rec.get("reduction_split_search") or {}
    if "states_featurized_all" in split:
        out["states_all"] = split["states_featurized_all"]  # every search of the call, not only the chosen one's
    for key in ("unsplit_cost", "unsplit_refined_cost"):
        if key in split:
            out[key] = split[key]  # null: not searched
    if split.get("without_in_block"):
        # How an in-block split was judged against the choice without the
        # option (docs/search.md, "In-block combining").
        out["without_in_block"] = split["without_in_block"]
    return out


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
            if "cost" in o and "cost" in n and n["cost"] > o["cost"] * (1 + COST_TOLERANCE):
                verdict = "WORSE" if verdict == "ok" else verdict + "+WORSE"
                failures.append(f"{mode} {label}: predicted cost {n['cost']:.6g}, recorded {o['cost']:.6g}")
            costs = f"cost {o['cost']:.5g} -> {n['cost']:.5g}  " if "cost" in o and "cost" in n else ""
            print(f"{mode:6} {label:28} cpu {o['process_cpu']:7.2f} -> {n['process_cpu']:7.2f} s ({ratio:5.2f}x)  "
                  f"{costs}{verdict}")
        for label in new_m:
            if label not in old_m:
                print(f"{mode:6} {label:28} new: no recorded figure")
    return failures


def cmd_run(a):
    extra_config = {}
    for kv in a.set:
        key, sep, value = kv.partition("=")
        if not sep:
            sys.exit(f"search_time: --set {kv!r}: expected KEY=JSON")
        try:
            extra_config[key] = json.loads(value)
        except json.JSONDecodeError:
            extra_config[key] = value
    if a.scheduler == "gpusched":
        plugin = os.path.abspath(a.plugin or "")
        if not a.plugin or not os.path.exists(plugin):
            sys.exit(f"search_time: --plugin {a.plugin} does not exist (build the gpusched_autoscheduler target)")
    else:
        plugin = os.path.join(a.halide_plugin_dir, "libautoschedule_anderson2021.so")
        if not os.path.exists(plugin):
            sys.exit(f"search_time: {a.scheduler} needs Halide 16 or later and its plugin in "
                     f"--halide-plugin-dir ({plugin} does not exist)")
    scheduler = (a.scheduler, plugin)
    major = halide_major(plugin)
    timed = None
    if a.timed:
        timed = os.path.abspath(a.timed)
        if not os.path.exists(timed):
            sys.exit(f"search_time: --timed {a.timed} does not exist (build the gpusched_timed_autoscheduler target)")
        if halide_major(timed) != major:
            sys.exit(f"search_time: --timed {a.timed} is built for Halide {halide_major(timed)}, the scheduler's "
                     f"plugin for Halide {major}")
    pipelines = standard_set(a.build_dir) if a.build_dir else []
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
           "scheduler": a.scheduler, "halide_major": major,
           "pipelines": {p[0]: {"generator": os.path.basename(p[1]), "name": p[2], "params": p[3]} for p in pipelines},
           "results": {}}
    for m in modes:
        res = out["results"].setdefault(m, {})
        for label, path, generator, params in pipelines:
            r = measure(path, generator, params, scheduler, dict(MODES[m], **extra_config), a.timeout, timed)
            res[label] = r
            if r["status"] == "ok":
                line = f"{m:6} {label:28} process cpu {r['process_cpu']:7.2f} s  {r['peak_rss_mb']:5.0f} MiB"
                if "call_cpu" in r:
                    line += f"  call cpu {r['call_cpu']:7.2f} s"
                if "search_cpu" in r:
                    line += (f"  search cpu {r['search_cpu']:7.2f} s  cost {r['cost']:.5g}  states {r['states']}  "
                             f"region memo {r['region_memo_hits']}/{r['region_memo_hits'] + r['region_memo_misses']}")
                print(line, flush=True)
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


# What a side-by-side table compares: the whole generator process's CPU
# (with its peak RSS); the autoscheduler's own call as the timing plugin
# measures it for either scheduler (CPU seconds, runs made with --timed); or
# gpusched's call as its own record gives it (wall seconds).
MEASURES = {"process": ("process_cpu", "CPU s (MiB)"), "call": ("call_cpu", "call CPU s"),
            "autoschedule": ("autoschedule_s", "autoscheduler s")}


def cell(r, measure):
    if r is None:
        return "not run"
    if r["status"] != "ok":
        return "timeout" if r["status"] == "timeout" else "failed"
    key = MEASURES[measure][0]
    if key not in r:
        return "not recorded"
    return f"{r[key]:.2f} ({r['peak_rss_mb']:.0f})" if measure == "process" else f"{r[key]:.3f}"


def side_by_side(runs, mode, measure="process"):
    """A Markdown table of the measure per pipeline, one column per run (the
    first is the one the others are divided by), and the geomean of each
    ratio over the pipelines both finished."""
    key, unit = MEASURES[measure]
    names = [r.get("scheduler", "gpusched") for r in runs]
    first = runs[0]["results"].get(mode, {})
    labels = list(first) + [l for r in runs[1:] for l in r["results"].get(mode, {}) if l not in first]
    lines = ["| pipeline | " + " | ".join(f"{n}: {unit}" for n in names) + " | " +
             " | ".join(f"{n} / {names[0]}" for n in names[1:]) + " |",
             "|---" * (2 * len(names)) + "|"]
    ratios = [[] for _ in names[1:]]
    for label in labels:
        rs = [r["results"].get(mode, {}).get(label) for r in runs]
        row = [cell(r, measure) for r in rs]
        for i, r in enumerate(rs[1:]):
            if rs[0] and rs[0]["status"] == "ok" and r and r["status"] == "ok" and key in rs[0] and key in r:
                x = r[key] / max(rs[0][key], 1e-3)
                ratios[i].append(x)
                row.append(f"{x:.2f}x")
            else:
                row.append("")
        lines.append(f"| {label} | " + " | ".join(row) + " |")
    lines.append("| geomean where both finish | " + " | ".join("" for _ in names) + " | " +
                 " | ".join(f"**{geomean(x):.2f}x** ({len(x)})" for x in ratios) + " |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--plugin", help="gpusched's plugin (--scheduler gpusched)")
    r.add_argument("--scheduler", default="gpusched", choices=["gpusched"] + sorted(REFERENCES))
    r.add_argument("--halide-plugin-dir", default="/usr/lib/x86_64-linux-gnu/halide19",
                   help="where Halide's own Anderson2021 plugin is (--scheduler anderson2021*)")
    r.add_argument("--build-dir")
    r.add_argument("--only")
    r.add_argument("--gen", action="append", default=[])
    r.add_argument("--mode", default="beam", choices=["beam", "greedy", "both"])
    r.add_argument("--timeout", type=float, default=600)
    r.add_argument("--json")
    r.add_argument("--compare")
    r.add_argument("--max-slowdown", type=float, default=2.0)
    r.add_argument("--timed", metavar="LIB",
                   help="the timing plugin (libgpusched_timed_autoscheduler.so): also measure the "
                        "autoscheduler's own call, the same way for either scheduler")
    r.add_argument("--set", action="append", default=[], metavar="KEY=JSON",
                   help="an extra plugin config key (docs/search.md), e.g. split_reductions=false")
    c = sub.add_parser("compare")
    c.add_argument("recorded")
    c.add_argument("new")
    c.add_argument("--max-slowdown", type=float, default=2.0)
    w = sub.add_parser("pipeline", help="print one standard-set pipeline's generator path, generator "
                                        "name and params, one a line (call_instructions.sh runs it so)")
    w.add_argument("label")
    w.add_argument("--build-dir", required=True)
    t = sub.add_parser("table")
    t.add_argument("runs", nargs="+", help="files of `run --json`, the one to compare against first")
    t.add_argument("--mode", default="beam", choices=["beam", "greedy"])
    t.add_argument("--measure", default="process", choices=sorted(MEASURES),
                   help="process: whole generator CPU; call: the autoscheduler's call (CPU, runs made "
                        "with --timed); autoschedule: gpusched's own call (wall, from its record)")
    a = ap.parse_args()
    if a.cmd == "run":
        return cmd_run(a)
    if a.cmd == "pipeline":
        found = [p for p in standard_set(a.build_dir) if p[0] == a.label]
        if not found:
            sys.exit(f"search_time: {a.label} is not a standard-set pipeline")
        print("\n".join([found[0][1], found[0][2]] + found[0][3]))
        return 0
    if a.cmd == "table":
        print(side_by_side([json.load(open(f)) for f in a.runs], a.mode, a.measure))
        return 0
    return report(json.load(open(a.recorded)), json.load(open(a.new)), a.max_slowdown)


if __name__ == "__main__":
    sys.exit(main())
