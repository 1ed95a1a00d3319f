#!/usr/bin/env python3
"""Give every measured sample of a sample database the features today's
featurizer computes for its schedule, so that a retraining after a change to
the featurization (docs/features.md) learns from the features the search will
see, not the ones stored when the sample was made.

A searched sample's row keeps its search record (`decisions`): replaying it
through the plugin (`replay`) rebuilds the same schedule and featurizes it
again. A measured naive baseline is featurized as the naive schedule
(`naive_only`, as featurize_naive_baselines.py does). Samples of a generator
not in --generator-dir, or whose replay fails, keep their stored features and
are counted. Each distinct (app, params, record) is replayed once. It changes
only the featurization column; run it on a copy of a kept database.

  refeaturize_database.py --db COPY.sqlite --gpu h100 \\
      --generator-dir build/benchmarks/apps --plugin build/core/libgpusched_autoscheduler.so [-j 2]
"""
import argparse
import collections
import concurrent.futures
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import diagnose_baselines  # noqa: E402
import featurize_naive_baselines  # noqa: E402


def featurize(job, args, tmp):
    """(sample ids, blob or None, why) for one distinct schedule."""
    ids, app, params, record, naive = job
    work = tempfile.mkdtemp(dir=tmp)
    try:
        if naive:
            return ids, featurize_naive_baselines.naive_featurization(app, params, args, work)[0], None
        path = os.path.join(work, "stored-record.json")
        with open(path, "w") as f:
            f.write(record)
        feat = diagnose_baselines.run_plugin(app, args, work, {"gpu_profile": args.gpu, "replay": path}, params)
        with open(feat, "rb") as f:
            return ids, f.read(), None
    except (subprocess.CalledProcessError, OSError) as e:
        return ids, None, str(e)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", required=True, help="a copy: its featurization column is rewritten")
    ap.add_argument("--gpu", required=True, help="the built-in profile of the GPU the database measured")
    ap.add_argument("--generator-dir", required=True)
    ap.add_argument("--plugin", required=True)
    ap.add_argument("-j", "--jobs", type=int, default=2)
    args = ap.parse_args()
    db = sqlite3.connect(args.db)
    rows = db.execute(
        "SELECT s.id, p.generator_name, p.params, r.autoscheduler, s.decisions FROM samples s "
        "JOIN runs r ON r.id = s.run_id JOIN pipelines p ON p.id = r.pipeline_id "
        "WHERE s.runtime_median_ms IS NOT NULL").fetchall()
    jobs, skipped = {}, collections.Counter()
    for sid, app, params, source, record in rows:
        naive = source == "naive"
        if not os.path.exists(os.path.join(args.generator_dir, app + ".generator")):
            skipped["no generator: " + app] += 1
            continue
        if not naive and (source != "gpusched" or not record):
            skipped["not a search's sample: " + source] += 1
            continue
        key = (app, params, "" if naive else record, naive)
        jobs.setdefault(key, []).append(sid)
    done = failed = 0
    with tempfile.TemporaryDirectory(prefix="gs-refeaturize-") as tmp, \
            concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = [pool.submit(featurize, (ids, app, json.loads(params or "{}"), record, naive), args, tmp)
                   for (app, params, record, naive), ids in jobs.items()]
        for fut in concurrent.futures.as_completed(futures):
            ids, blob, why = fut.result()
            if blob is None:
                failed += len(ids)
                print(f"refeaturize: samples {ids[:3]}...: {why}", file=sys.stderr)
                continue
            db.executemany("UPDATE samples SET featurization = ? WHERE id = ?", [(blob, i) for i in ids])
            done += len(ids)
    db.commit()
    print(f"{done} samples featurized again ({len(jobs)} distinct schedules), {failed} failed, "
          f"kept as stored: {sum(skipped.values())} ({', '.join(f'{k} x{v}' for k, v in sorted(skipped.items()))})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
