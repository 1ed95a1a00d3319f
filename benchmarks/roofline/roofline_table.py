#!/usr/bin/env python3
"""How far each schedule of a kept GPU database is from the hardware: every
app's roofline (core/roofline.h: its inputs read and outputs written once at
the profile's bandwidth, or its operations at the peak FP32 rate, the longer),
from the search plugin's record, beside the measured times of One Shot's pick,
Top 5's pick and the baselines, each over the bound (issue 56).

  roofline_table.py --db h200-top5-session30.sqlite[.xz] --gpu h200 \\
      --generator-dir build/benchmarks/apps --plugin build/core/libgpusched_autoscheduler.so \\
      [--json out.json] > table.md
"""
import argparse
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "learning"))
import diagnose_baselines as diag  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", required=True)
    ap.add_argument("--gpu", required=True)
    ap.add_argument("--generator-dir", required=True)
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--json")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        apps = diag.measured_by_app(diag.open_db(args.db, tmp))
        for app in sorted(apps):
            a = apps[app]
            if not a["samples"] or not os.path.exists(os.path.join(args.generator_dir, app + ".generator")):
                continue
            record = os.path.join(tmp, app + ".record.json")
            diag.run_plugin(app, args, os.path.join(tmp, app),
                            {"naive_only": True, "gpu_profile": args.gpu, "record_path": record})
            with open(record) as f:
                bound = json.load(f)["roofline"]
            rows.append({"app": app, "roofline": bound,
                         "one_shot_ms": min(a["samples"], key=lambda s: s["predicted"])["ms"],
                         "top5_ms": min(s["ms"] for s in a["samples"]),
                         "naive_ms": a["baselines"].get("naive"), "li2018_ms": a["baselines"].get("li2018")})
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)

    def over(ms, b):
        return "—" if ms is None else "{:.4g} ({:.1f}x)".format(ms, ms / b)

    print("| app | roofline ms | bound by | MB moved | G operations | One Shot pick ms (x) | Top 5 pick ms (x) "
          "| naive ms (x) | Li2018 ms (x) |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|")
    ratios = []
    for r in rows:
        b = r["roofline"]
        bound = b["bound_ms"]
        ratios.append(r["top5_ms"] / bound)
        print("| {} | {:.4g} | {} | {:.1f} | {:.3g} | {} | {} | {} | {} |".format(
            r["app"], bound, "memory" if b["memory_ms"] >= b["compute_ms"] else "compute", b["bytes"] / 1e6,
            b["operations"] / 1e9, over(r["one_shot_ms"], bound), over(r["top5_ms"], bound),
            over(r["naive_ms"], bound), over(r["li2018_ms"], bound)))
    if ratios:
        geo = 1.0
        for x in ratios:
            geo *= x
        print("\nTop 5's pick over the roofline: geomean {:.1f}x over {} apps.".format(
            geo ** (1.0 / len(ratios)), len(ratios)))


if __name__ == "__main__":
    main()
