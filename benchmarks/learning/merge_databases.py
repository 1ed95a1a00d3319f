#!/usr/bin/env python3
"""Merge sample databases into one, for the commands that read one database
(`gpusched retrain --db`): the kept collections of one GPU, say.

The first database is copied whole; every other one's pipelines (matched by
their identity: generator hash, name, params, target, GPU), runs, samples,
kernels, weights rows and Autotune batches are added with new ids. All
databases must be at the same schema version (open each with a gpusched
command first, which migrates it).

  merge_databases.py OUT.sqlite A.sqlite B.sqlite [...]
"""
import shutil
import sqlite3
import sys


def columns(db, schema, table):
    return [r[1] for r in db.execute("PRAGMA {}.table_info({})".format(schema, table))]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out, first, rest = sys.argv[1], sys.argv[2], sys.argv[3:]
    shutil.copyfile(first, out)
    db = sqlite3.connect(out)
    version = db.execute("PRAGMA user_version").fetchone()[0]
    for path in rest:
        db.execute("ATTACH DATABASE ? AS src", (path,))
        if db.execute("PRAGMA src.user_version").fetchone()[0] != version:
            sys.exit("{}: schema version differs from {}'s; open both with gpusched first".format(path, first))
        offset = {t: db.execute("SELECT coalesce(max(id), 0) FROM main." + t).fetchone()[0]
                  for t in ("runs", "samples", "weights")}
        # Pipelines: the same identity is one row.
        key = "generator_hash, generator_name, params, target, gpu"
        pcols = [c for c in columns(db, "src", "pipelines") if c != "id"]
        db.execute("INSERT OR IGNORE INTO main.pipelines ({0}) SELECT {0} FROM src.pipelines".format(", ".join(pcols)))
        pmap = dict(db.execute(
            "SELECT s.id, m.id FROM src.pipelines s JOIN main.pipelines m USING ({})".format(key)).fetchall())
        db.create_function("pipeline_of", 1, lambda i: pmap[i])

        def copy(table, shifted):
            cols = columns(db, "src", table)
            exprs = [shifted.get(c, c) for c in cols]
            db.execute("INSERT INTO main.{0} ({1}) SELECT {2} FROM src.{0}".format(
                table, ", ".join(cols), ", ".join(exprs)))

        copy("weights", {"id": "id + {}".format(offset["weights"])})
        copy("runs", {"id": "id + {}".format(offset["runs"]), "pipeline_id": "pipeline_of(pipeline_id)",
                      "best_sample_id": "best_sample_id + {}".format(offset["samples"])})
        copy("samples", {"id": "id + {}".format(offset["samples"]), "run_id": "run_id + {}".format(offset["runs"])})
        copy("kernels", {"sample_id": "sample_id + {}".format(offset["samples"])})
        copy("autotune_batches", {"run_id": "run_id + {}".format(offset["runs"]),
                                  "weights_id": "weights_id + {}".format(offset["weights"])})
        db.commit()
        db.execute("DETACH DATABASE src")
    counts = [db.execute("SELECT count(*) FROM " + t).fetchone()[0] for t in ("pipelines", "runs", "samples")]
    print("{}: {} pipelines, {} runs, {} samples".format(out, *counts))


if __name__ == "__main__":
    main()
