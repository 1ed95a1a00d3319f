#!/usr/bin/env python3
"""Give a sample database's measured naive baselines the features of the naive
schedule, so that retraining (`gpusched retrain`, `gpusched learning`) sees
them beside the searched samples (issue 55).

A naive baseline is the generator's own `schedule=naive` build: it is
measured, but it was never featurized, since no search made it. The search
writes the same schedule as decisions (core/naive_schedule.h); the plugin's
`naive_only` option costs and emits it, with its featurization. This script
runs that for every measured naive sample without a featurization and
stores the blob (and the record, as the sample's decisions) in the row. It
changes only those rows; run it on a copy of a kept database.

  featurize_naive_baselines.py --db COPY.sqlite --gpu h100 \\
      --generator-dir build/benchmarks/apps --plugin build/core/libgpusched_autoscheduler.so
"""
import argparse
import json
import os
import sqlite3
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import diagnose_baselines  # noqa: E402


def naive_featurization(app, params, args, work):
    """The naive schedule's featurization blob and record for app with its generator params."""
    record = os.path.join(work, "record.json")
    feat = diagnose_baselines.run_plugin(app, args, work,
                                         {"naive_only": True, "gpu_profile": args.gpu, "record_path": record}, params)
    with open(feat, "rb") as f:
        blob = f.read()
    with open(record) as f:
        return blob, f.read()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", required=True, help="a copy of a kept database; naive rows are changed in place")
    ap.add_argument("--gpu", required=True, help="the built-in profile of the GPU the database measured")
    ap.add_argument("--generator-dir", required=True)
    ap.add_argument("--plugin", required=True)
    args = ap.parse_args()

    db = sqlite3.connect(args.db)
    rows = db.execute(
        "SELECT s.id, p.generator_name, p.params FROM samples s JOIN runs r ON r.id = s.run_id "
        "JOIN pipelines p ON p.id = r.pipeline_id WHERE r.autoscheduler = 'naive' "
        "AND s.runtime_median_ms IS NOT NULL AND (s.featurization IS NULL OR length(s.featurization) = 0)"
    ).fetchall()
    made = {}
    with tempfile.TemporaryDirectory() as tmp:
        for sid, app, params in rows:
            key = (app, params)
            if key not in made:
                generator = os.path.join(args.generator_dir, app + ".generator")
                if not os.path.exists(generator):
                    print("{}: no generator at {}, left as it was".format(app, generator), file=sys.stderr)
                    continue
                made[key] = naive_featurization(app, json.loads(params), args,
                                                os.path.join(tmp, "{}-{}".format(app, len(made))))
            blob, record = made[key]
            db.execute("UPDATE samples SET featurization = ?, decisions = ? WHERE id = ?", (blob, record, sid))
    db.commit()
    print("{} naive samples featurized ({} pipelines)".format(len(rows), len(made)))


if __name__ == "__main__":
    main()
